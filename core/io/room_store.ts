/**
 * Rooms: one git repository per room, holding its workspace (`workflows/<name>/…` bundles,
 * tables, anything a client writes). Versioned, forkable, reviewable as diffs.
 *
 * The git store keeps each room as a bare repository under `<home>/rooms/<slug>/`
 * (isomorphic-git; clone it with `git clone <home>/rooms/<slug>` to browse). A write builds
 * the new tree from the head's, writes the objects, then moves the branch: a process killed
 * mid-write leaves the room at its previous commit. There is no index or working tree to
 * drift or corrupt.
 *
 * Permissions: --allow-read and --allow-write on the rooms directory, and
 * --allow-env=IGNORE_TEST_WIN32 (isomorphic-git reads it when it is imported).
 */
import * as fs from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { TreeEntry } from "isomorphic-git";
import { DvergrError } from "../errors.ts";
import { type FileMap, relativePathProblem, sortedFiles } from "../bundle/file_map.ts";

export interface CommitInfo {
  id: string;
  message: string;
  /** ISO time of the commit. */
  at: string;
  parents: string[];
}

export interface RoomStore {
  /** Creates an empty room (one initial commit); false when it already exists. */
  createRoom(slug: string): Promise<boolean>;
  hasRoom(slug: string): Promise<boolean>;
  /** Every room's slug, sorted. */
  listRooms(): Promise<string[]>;
  /**
   * Writes exactly the given paths as one commit (`null` removes a path) and returns the
   * commit id; when the changes leave the workspace as it was, makes no commit and returns
   * the current head.
   */
  writeFiles(slug: string, changes: Map<string, string | null>, message: string): Promise<string>;
  /** The workspace at the head (or only the files under `prefix/`, keeping full paths). */
  readFiles(slug: string, prefix?: string): Promise<FileMap>;
  /**
   * Makes the directory `prefix/` hold exactly `files` (paths relative to it): writes what
   * differs, removes what `files` lacks, in one commit. Returns the commit id, or null when
   * the directory already held exactly these files (no commit). Used to install a bundle.
   */
  replaceDir(slug: string, prefix: string, files: FileMap, message: string): Promise<string | null>;
  /** Commits from the head back to the first. */
  log(slug: string): Promise<CommitInfo[]>;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Refuses a room slug that is not lowercase letters, digits and dashes. */
export function checkSlug(slug: string): void {
  if (!SLUG.test(slug)) {
    throw new DvergrError(
      "ROOM_INVALID",
      `Cannot use room "${slug}": a room slug is lowercase letters, digits and dashes (at most 64)`,
      { hint: "Choose a slug such as `books` or `invoice-coding`" },
    );
  }
}

function checkChanges(changes: Map<string, string | null>): void {
  for (const path of changes.keys()) {
    const problem = relativePathProblem(path);
    if (problem) {
      throw new DvergrError(
        "PATH_INVALID",
        `Cannot write "${path}" to a room: the path ${problem}`,
        {
          hint: "Room paths are relative POSIX paths such as `workflows/x/workflow.edn`",
        },
      );
    }
  }
}

function noRoom(slug: string): DvergrError {
  return new DvergrError("NOT_FOUND", `Cannot open room "${slug}": no such room in this home`, {
    hint: "Benchmark a bundle directory to create its room, or check the --home",
  });
}

function underPrefix(path: string, prefix?: string): boolean {
  if (!prefix) return true;
  const p = prefix.endsWith("/") ? prefix : prefix + "/";
  return path.startsWith(p);
}

/** Serialises work per key within this process. */
function keyedMutex() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, f: () => Promise<T>): Promise<T> => {
    const prev = tails.get(key) ?? Promise.resolve();
    const next = prev.then(f, f);
    const tail = next.catch(() => {});
    tails.set(key, tail);
    tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return next;
  };
}

/** An in-memory room store: the same contract, snapshots in a Map (tests). */
export function memoryRoomStore(clock: () => Date = () => new Date()): RoomStore {
  const rooms = new Map<string, { commit: CommitInfo; files: FileMap }[]>();
  const head = (slug: string) => {
    const r = rooms.get(slug);
    if (!r) throw noRoom(slug);
    return r;
  };
  const commitId = (parent: string | null, message: string, files: FileMap) => {
    const h = createHash("sha1").update(JSON.stringify([parent, message, [...sortedFiles(files)]]));
    return h.update(String(rooms.size) + clock().toISOString()).digest("hex");
  };
  return {
    async createRoom(slug) {
      await Promise.resolve();
      checkSlug(slug);
      if (rooms.has(slug)) return false;
      const files: FileMap = new Map();
      const message = `Create room ${slug}`;
      rooms.set(slug, [{
        commit: {
          id: commitId(null, message, files),
          message,
          at: clock().toISOString(),
          parents: [],
        },
        files,
      }]);
      return true;
    },
    hasRoom: (slug) => Promise.resolve(rooms.has(slug)),
    listRooms: () => Promise.resolve([...rooms.keys()].sort()),
    async writeFiles(slug, changes, message) {
      await Promise.resolve();
      checkChanges(changes);
      const history = head(slug);
      const last = history[history.length - 1];
      const files = new Map(last.files);
      for (const [p, text] of changes) {
        if (text === null) files.delete(p);
        else files.set(p, text);
      }
      const same = files.size === last.files.size &&
        [...files].every(([p, t]) => last.files.get(p) === t);
      if (same) return last.commit.id;
      const id = commitId(last.commit.id, message, files);
      history.push({
        commit: { id, message, at: clock().toISOString(), parents: [last.commit.id] },
        files,
      });
      return id;
    },
    async readFiles(slug, prefix) {
      await Promise.resolve();
      const history = head(slug);
      const out: FileMap = new Map();
      for (const [p, t] of sortedFiles(history[history.length - 1].files)) {
        if (underPrefix(p, prefix)) out.set(p, t);
      }
      return Promise.resolve(out);
    },
    async replaceDir(slug, prefix, files, message) {
      await Promise.resolve();
      const p = dirPrefix(prefix);
      const history = head(slug);
      const current = history[history.length - 1].files;
      const changes = dirChanges(p, files, (path) => current.get(path), current.keys());
      if (changes.size === 0) return null;
      return await this.writeFiles(slug, changes, message);
    },
    log(slug) {
      return Promise.resolve(head(slug).map((h) => h.commit).reverse());
    },
  };
}

function dirPrefix(prefix: string): string {
  const p = prefix.endsWith("/") ? prefix : prefix + "/";
  const problem = relativePathProblem(p.slice(0, -1));
  if (problem) {
    throw new DvergrError(
      "PATH_INVALID",
      `Cannot use room directory "${prefix}": the path ${problem}`,
      {
        hint: "Room paths are relative POSIX paths such as `workflows/x`",
      },
    );
  }
  return p;
}

/** The changes that make `prefix` hold exactly `files`, given what is there now. */
function dirChanges<T>(
  prefix: string,
  files: FileMap,
  current: (path: string) => T | undefined,
  currentPaths: Iterable<string>,
  same: (text: string, now: T) => boolean = (text, now) => text === (now as unknown),
): Map<string, string | null> {
  const changes = new Map<string, string | null>();
  for (const [p, text] of files) {
    const now = current(prefix + p);
    if (now === undefined || !same(text, now)) changes.set(prefix + p, text);
  }
  for (const p of currentPaths) {
    if (p.startsWith(prefix) && !files.has(p.slice(prefix.length))) changes.set(p, null);
  }
  return changes;
}

/** The git object id of a blob holding `text` (UTF-8). */
function gitBlobOid(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

type Git = typeof import("isomorphic-git");
let gitModule: Promise<Git> | null = null;
function loadGit(): Promise<Git> {
  gitModule ??= import("isomorphic-git");
  return gitModule;
}

const AUTHOR = { name: "dvergr", email: "dvergr@localhost" };
const BRANCH = "refs/heads/main";

/**
 * Rooms as bare git repositories under `dir` (`<dir>/<slug>/`). Writes within this process
 * are serialised per room.
 */
export function gitRoomStore(dir: string, clock: () => Date = () => new Date()): RoomStore {
  const lock = keyedMutex();
  const cache = {};
  const gitdirOf = (slug: string) => {
    checkSlug(slug);
    return join(dir, slug);
  };

  async function exists(slug: string): Promise<boolean> {
    try {
      await Deno.lstat(join(gitdirOf(slug), "HEAD"));
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw e;
    }
  }

  async function headOid(git: Git, gitdir: string): Promise<string> {
    return await git.resolveRef({ fs, gitdir, ref: BRANCH });
  }

  function author() {
    const now = clock();
    return { ...AUTHOR, timestamp: Math.floor(now.getTime() / 1000), timezoneOffset: 0 };
  }

  /** Path → blob oid of every file at or under `prefix` in a tree. */
  async function treeEntries(
    git: Git,
    gitdir: string,
    treeOid: string,
    prefix: string | undefined,
    base = "",
    out = new Map<string, string>(),
  ): Promise<Map<string, string>> {
    const { tree } = await git.readTree({ fs, gitdir, oid: treeOid, cache });
    for (const e of tree) {
      const path = base + e.path;
      if (e.type === "tree") {
        const dirPath = path + "/";
        const relevant = !prefix || prefix.startsWith(dirPath) || dirPath.startsWith(prefix);
        if (relevant) await treeEntries(git, gitdir, e.oid, prefix, dirPath, out);
      } else if (e.type === "blob" && underPrefix(path, prefix)) {
        out.set(path, e.oid);
      }
    }
    return out;
  }

  /** Applies changes (relative to this tree) and returns the new tree's oid, or null if empty. */
  async function rewriteTree(
    git: Git,
    gitdir: string,
    treeOid: string | null,
    changes: Map<string, string | null>,
  ): Promise<string | null> {
    const entries = new Map<string, TreeEntry>();
    if (treeOid) {
      for (const e of (await git.readTree({ fs, gitdir, oid: treeOid, cache })).tree) {
        entries.set(e.path, e);
      }
    }
    const sub = new Map<string, Map<string, string | null>>();
    const blobs: [string, string][] = [];
    for (const [path, text] of changes) {
      const slash = path.indexOf("/");
      if (slash >= 0) {
        const head = path.slice(0, slash);
        if (!sub.has(head)) sub.set(head, new Map());
        sub.get(head)!.set(path.slice(slash + 1), text);
      } else if (text === null) {
        if (entries.get(path)?.type === "blob") entries.delete(path);
      } else {
        blobs.push([path, text]);
      }
    }
    const oids = await Promise.all(
      blobs.map(([, text]) => git.writeBlob({ fs, gitdir, blob: new TextEncoder().encode(text) })),
    );
    blobs.forEach(([path], i) =>
      entries.set(path, { mode: "100644", path, oid: oids[i], type: "blob" })
    );
    for (const [name, subChanges] of sub) {
      const old = entries.get(name);
      const oldTree = old?.type === "tree" ? old.oid : null;
      if (old && old.type !== "tree") {
        if ([...subChanges.values()].every((t) => t === null)) continue;
        entries.delete(name);
      }
      const oid = await rewriteTree(git, gitdir, oldTree, subChanges);
      if (oid) entries.set(name, { mode: "040000", path: name, oid, type: "tree" });
      else entries.delete(name);
    }
    if (entries.size === 0) return null;
    return await git.writeTree({ fs, gitdir, tree: [...entries.values()] });
  }

  async function emptyTree(git: Git, gitdir: string): Promise<string> {
    return await git.writeTree({ fs, gitdir, tree: [] });
  }

  return {
    async createRoom(slug) {
      const gitdir = gitdirOf(slug);
      return await lock(slug, async () => {
        if (await exists(slug)) return false;
        const git = await loadGit();
        // Build in a temporary sibling, then rename: a half-created room never appears.
        await Deno.mkdir(dir, { recursive: true });
        const tmp = `${gitdir}.tmp-${crypto.randomUUID()}`;
        try {
          await git.init({ fs, gitdir: tmp, bare: true, defaultBranch: "main" });
          await git.commit({
            fs,
            gitdir: tmp,
            message: `Create room ${slug}`,
            author: author(),
            tree: await emptyTree(git, tmp),
            parent: [],
            ref: BRANCH,
          });
          await Deno.rename(tmp, gitdir);
        } catch (e) {
          await Deno.remove(tmp, { recursive: true }).catch(() => {});
          if (await exists(slug)) return false;
          throw e;
        }
        return true;
      });
    },
    hasRoom: (slug) => exists(slug),
    async listRooms() {
      const out: string[] = [];
      try {
        for await (const e of Deno.readDir(dir)) {
          if (e.isDirectory && SLUG.test(e.name) && await exists(e.name)) out.push(e.name);
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      return out.sort();
    },
    async writeFiles(slug, changes, message) {
      checkChanges(changes);
      const gitdir = gitdirOf(slug);
      return await lock(slug, async () => {
        if (!(await exists(slug))) throw noRoom(slug);
        const git = await loadGit();
        const parent = await headOid(git, gitdir);
        const { commit } = await git.readCommit({ fs, gitdir, oid: parent, cache });
        const tree = (await rewriteTree(git, gitdir, commit.tree, changes)) ??
          await emptyTree(git, gitdir);
        if (tree === commit.tree) return parent;
        return await git.commit({
          fs,
          gitdir,
          message,
          author: author(),
          tree,
          parent: [parent],
          ref: BRANCH,
        });
      });
    },
    async readFiles(slug, prefix) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      const git = await loadGit();
      const { commit } = await git.readCommit({
        fs,
        gitdir,
        oid: await headOid(git, gitdir),
        cache,
      });
      const p = prefix ? (prefix.endsWith("/") ? prefix : prefix + "/") : undefined;
      const entries = [...(await treeEntries(git, gitdir, commit.tree, p))].sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0
      );
      const decoder = new TextDecoder();
      const out: FileMap = new Map();
      const texts = await Promise.all(
        entries.map(async ([, oid]) => (await git.readBlob({ fs, gitdir, oid, cache })).blob),
      );
      entries.forEach(([path], i) => out.set(path, decoder.decode(texts[i])));
      return out;
    },
    async replaceDir(slug, prefix, files, message) {
      const p = dirPrefix(prefix);
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      const git = await loadGit();
      const { commit } = await git.readCommit({
        fs,
        gitdir,
        oid: await headOid(git, gitdir),
        cache,
      });
      const oids = await treeEntries(git, gitdir, commit.tree, p);
      // Compare by blob id: no blob needs to be read to see what changed.
      const changes = dirChanges(
        p,
        files,
        (path) => oids.get(path),
        oids.keys(),
        (text, oid) => gitBlobOid(text) === oid,
      );
      if (changes.size === 0) return null;
      return await this.writeFiles(slug, changes, message);
    },
    async log(slug) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      const git = await loadGit();
      const commits = await git.log({ fs, gitdir, ref: BRANCH, cache });
      return commits.map((c) => ({
        id: c.oid,
        message: c.commit.message.replace(/\n$/, ""),
        at: new Date(c.commit.committer.timestamp * 1000).toISOString(),
        parents: c.commit.parent,
      }));
    },
  };
}

/**
 * Makes `workflows/<name>/` of a room hold exactly `files` (writing what changed, removing
 * what the bundle no longer has) in one commit. Returns the commit id, or null when the
 * room already held exactly these files.
 */
export function syncBundle(
  rooms: RoomStore,
  slug: string,
  name: string,
  files: FileMap,
): Promise<string | null> {
  return rooms.replaceDir(
    slug,
    `workflows/${name}`,
    files,
    `Write bundle ${name} (${files.size} files)`,
  );
}
