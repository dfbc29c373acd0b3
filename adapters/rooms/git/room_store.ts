/**
 * Rooms: one git repository per room, holding its workspace (`workflows/<name>/…` bundles,
 * tables, anything a client writes). Versioned, forkable, reviewable as diffs.
 *
 * The git store keeps each room as a bare repository under `<home>/rooms/<slug>/` (clone it
 * with `git clone <home>/rooms/<slug>` to browse). A write builds the new trees from the
 * head's in memory, writes the commit's new objects as ONE packfile with its index (temporary
 * names, synced, renamed in), then moves the branch: a process killed mid-write leaves the
 * room at its previous commit. There is no index or working tree to drift or corrupt. One
 * pack per commit instead of one file per object (isomorphic-git's way, ~2 ms a file on a
 * slow disk): 1,000 files commit in ~0.1 s instead of 9-16 s. Small packs are merged when a
 * room has many. The objects are read by `git/object_reader.ts` (packs, deltas, loose objects,
 * packed refs), so a room git itself repacked or an older loose-object room reads too. The git
 * layer lives in `core/codecs/git/` (objects, zlib) and here: pack writing and reading, the repository (refs, the
 * branch lock), pack merging; this module is the RoomStore port (core/ports/room_store.ts) on top of it.
 *
 * Permissions: --allow-read and --allow-write on the rooms directory.
 */
import { checkSlug, isSlug } from "../../../core/room_slug.ts";
import { pathExists } from "../../files/fs.ts";
import { join } from "node:path";
import { DvergrError } from "../../../core/errors.ts";
import type { FileMap } from "../../../core/bundle/file_map.ts";
import {
  commitObject,
  encoder,
  encodeTree,
  type GitObject,
  gitObject,
  objectId,
  type TreeItem,
} from "../../../core/codecs/git/objects.ts";
import { installPack, PackBuilder, writeDurable } from "./pack_write.ts";
import { type ObjectReader, treeCache, withObjects } from "./object_reader.ts";
import { BRANCH, initBare, lockBranch, readHead } from "./repository.ts";
import { consolidate } from "./pack_merge.ts";

import {
  type BranchCommit,
  branchNameProblem,
  type CommitInfo,
  type ForkInfo,
  type RoomStore,
} from "../../../core/ports/room_store.ts";
import {
  blockerRemovals,
  checkChanges,
  conflictError,
  dirChanges,
  dirPrefix,
  keyedMutex,
  noCommit,
  noRoom,
  roomExists,
  underPrefix,
} from "../room_rules.ts";

/** Where a git room keeps what it was forked from (beside the repository's own files). */
const FORK_FILE = "dvergr-fork.json";

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    // A lock is another writer's, of the room forked from.
    if (e.name.endsWith(".lock") || e.name === FORK_FILE) continue;
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory) await copyDir(a, b);
    else if (e.isFile) await Deno.copyFile(a, b);
  }
}

/** The git object id of a blob holding `text` (UTF-8). */
function gitBlobOid(text: string): string {
  return objectId("blob", new TextEncoder().encode(text));
}

/** File texts keep a leading byte order mark: it is part of the file and of the content id. */
const textDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Refuses a branch name branchNameProblem() does not accept. */
function checkBranch(slug: string, branch: string): void {
  const problem = branchNameProblem(branch);
  if (problem) {
    throw new DvergrError(
      "USAGE",
      `Cannot use branch "${branch}" of room "${slug}": it ${problem}`,
      {
        hint: "Name branches like runs/20260101-abc",
      },
    );
  }
}

/**
 * Creates `refs/heads/<branch>` at `oid` once: written and synced under a temporary name, then
 * hard-linked into place (which fails when the branch exists), so a crash leaves no half ref.
 */
async function createRef(gitdir: string, slug: string, branch: string, oid: string) {
  const ref = join(gitdir, "refs", "heads", branch);
  await Deno.mkdir(join(ref, ".."), { recursive: true });
  const tmp = join(gitdir, `dvergr-ref.tmp-${crypto.randomUUID()}`);
  await writeDurable(tmp, encoder.encode(`${oid}\n`));
  try {
    await Deno.link(tmp, ref);
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    throw new DvergrError(
      "CONFLICT",
      `Cannot create branch "${branch}" of room "${slug}": it exists`,
      {
        hint: "Branches are made once; name another",
      },
    );
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}

/** Options of the git room store. */
export interface GitRoomStoreOptions {
  /** Packs a room may have before a write merges them into one (default 16). */
  maxPacks?: number;
  /** Loose objects (from older versions, or git) a room may have before a write packs them. */
  maxLoose?: number;
  /** Called after a commit's pack is in place, before the branch moves (tests stop here). */
  beforeBranchMove?: (slug: string) => void | Promise<void>;
}

/**
 * Rooms as bare git repositories under `dir` (`<dir>/<slug>/`). Each commit's new objects
 * are written as one packfile, then the branch moves. Writes within this process are
 * serialised per room; across processes the branch moves under git's `main.lock`, and a
 * write that finds the head moved by another process is built again on the new head.
 */
export function gitRoomStore(
  dir: string,
  clock: () => Date = () => new Date(),
  options: GitRoomStoreOptions = {},
): RoomStore {
  const lock = keyedMutex();
  const maxPacks = options.maxPacks ?? 16;
  const maxLoose = options.maxLoose ?? 256;
  const gitdirOf = (slug: string) => {
    checkSlug(slug);
    return join(dir, slug);
  };

  const exists = (slug: string) => pathExists(join(gitdirOf(slug), "HEAD"));

  /** Path → blob oid of every file at or under `prefix` in a tree. */
  function treeEntries(
    db: ObjectReader,
    treeOid: string,
    prefix: string | undefined,
    base = "",
    out = new Map<string, string>(),
  ): Map<string, string> {
    for (const e of db.tree(treeOid)) {
      const path = base + e.name;
      if (e.isTree) {
        const dirPath = path + "/";
        const relevant = !prefix || prefix.startsWith(dirPath) || dirPath.startsWith(prefix);
        if (relevant) treeEntries(db, e.oid, prefix, dirPath, out);
      } else if (e.mode !== "160000" && underPrefix(path, prefix)) {
        out.set(path, e.oid);
      }
    }
    return out;
  }

  /**
   * Applies changes (relative to this tree) and returns the new tree's oid, or null if empty.
   * New blobs and trees go to `made`.
   */
  /**
   * The tree `treeOid` with `changes` (paths relative to it) applied. Deletions go first, so
   * a file may be replaced by a directory (or back) in one change set; otherwise a write that
   * would turn a file into a directory or a directory into a file is refused (`at` is the
   * tree's path, for the message), never resolved by dropping one of the two.
   */
  function rewriteTree(
    db: ObjectReader,
    treeOid: string | null,
    changes: Map<string, string | null>,
    made: Map<string, GitObject>,
    slug: string,
    at = "",
  ): string | null {
    const entries = new Map<string, TreeItem>();
    if (treeOid) { for (const e of db.tree(treeOid)) entries.set(e.name, e); }
    const sub = new Map<string, Map<string, string | null>>();
    const blobs = new Map<string, string>();
    for (const [path, text] of changes) {
      const slash = path.indexOf("/");
      if (slash >= 0) {
        const head = path.slice(0, slash);
        if (!sub.has(head)) sub.set(head, new Map());
        sub.get(head)!.set(path.slice(slash + 1), text);
      } else if (text === null) {
        if (entries.get(path)?.isTree === false) entries.delete(path);
      } else blobs.set(path, text);
    }
    for (const [name, subChanges] of sub) {
      const old = entries.get(name);
      if (old && !old.isTree) {
        if ([...subChanges.values()].every((t) => t === null)) continue;
        const inside = [...subChanges].find(([, t]) => t !== null)![0];
        throw conflictError(slug, { file: at + name, inside: `${at}${name}/${inside}` });
      }
      const oid = rewriteTree(db, old?.oid ?? null, subChanges, made, slug, `${at}${name}/`);
      if (oid) entries.set(name, { mode: "40000", name, oid, isTree: true });
      else entries.delete(name);
    }
    for (const [path, text] of blobs) {
      if (entries.get(path)?.isTree) {
        throw new DvergrError(
          "PATH_INVALID",
          `Cannot write "${at}${path}" to room "${slug}": it is a directory of the room, and ` +
            "writing a file there would lose the files in it",
          { hint: "Remove the directory's files first (null for each), or use another path" },
        );
      }
      const blob = gitObject("blob", encoder.encode(text));
      made.set(blob.oid, blob);
      entries.set(path, { mode: "100644", name: path, oid: blob.oid, isTree: false });
    }
    if (entries.size === 0) return null;
    const items = [...entries.values()];
    const tree = gitObject("tree", encodeTree(items));
    made.set(tree.oid, tree);
    if (!treeCache.has(tree.oid)) treeCache.set(tree.oid, items);
    return tree.oid;
  }

  /** commitOn() of the port, the branch created by a hard link (atomic: made once or not). */
  async function commitOn(slug: string, c: BranchCommit): Promise<string> {
    checkChanges(c.changes, slug);
    if (c.branch !== undefined) checkBranch(slug, c.branch);
    const gitdir = gitdirOf(slug);
    if (!(await exists(slug))) throw noRoom(slug);
    return await lock(slug, async () => {
      const oid = await withObjects(gitdir, async (db) => {
        for (const p of [c.on, ...(c.also ?? [])]) {
          if (!/^[0-9a-f]{40}$/.test(p) || !db.has(p)) throw noCommit(slug, p);
        }
        const made = new Map<string, GitObject>();
        const { tree: oldTree } = db.commit(c.on);
        let tree = rewriteTree(db, oldTree, c.changes, made, slug);
        if (tree === null) {
          const empty = gitObject("tree", new Uint8Array());
          made.set(empty.oid, empty);
          tree = empty.oid;
        }
        if (tree === oldTree && !c.also?.length && c.branch === undefined) return c.on;
        const commit = commitObject(tree, [c.on, ...(c.also ?? [])], c.message, clock());
        made.set(commit.oid, commit);
        const builder = new PackBuilder();
        for (const object of made.values()) if (!db.has(object.oid)) builder.addObject(object);
        if (builder.count > 0) await installPack(gitdir, builder.finish());
        return commit.oid;
      });
      if (c.branch !== undefined) await createRef(gitdir, slug, c.branch, oid);
      return oid;
    });
  }

  return {
    commitOn,
    async branchHead(slug, branch) {
      checkBranch(slug, branch);
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      try {
        const oid = (await Deno.readTextFile(join(gitdir, "refs", "heads", branch))).trim();
        return /^[0-9a-f]{40}$/.test(oid) ? oid : null;
      } catch (e) {
        if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
          return null;
        }
        throw e;
      }
    },
    async moveHead(slug, from, to) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      return await lock(slug, async () => {
        const known = await withObjects(gitdir, (db) => /^[0-9a-f]{40}$/.test(to) && db.has(to));
        if (!known) throw noCommit(slug, to);
        if (readHead(gitdir) !== from) return false;
        return await (await lockBranch(gitdir)).move(from, to);
      });
    },
    async createRoom(slug) {
      const gitdir = gitdirOf(slug);
      return await lock(slug, async () => {
        if (await exists(slug)) return false;
        // Build in a temporary sibling, then rename: a half-created room never appears.
        await Deno.mkdir(dir, { recursive: true });
        const tmp = `${gitdir}.tmp-${crypto.randomUUID()}`;
        try {
          await initBare(tmp);
          const tree = gitObject("tree", new Uint8Array());
          const commit = commitObject(tree.oid, [], `Create room ${slug}`, clock());
          const builder = new PackBuilder();
          builder.addObject(tree);
          builder.addObject(commit);
          await installPack(tmp, builder.finish());
          await writeDurable(join(tmp, BRANCH), encoder.encode(`${commit.oid}\n`));
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
          if (e.isDirectory && isSlug(e.name) && await exists(e.name)) out.push(e.name);
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      return out.sort();
    },
    async writeFiles(slug, changes, message) {
      checkChanges(changes, slug);
      const gitdir = gitdirOf(slug);
      return await lock(slug, async () => {
        if (!(await exists(slug))) throw noRoom(slug);
        // First optimistically: the branch is locked only to move it, for milliseconds. When
        // another process moved it meanwhile, again holding the lock throughout, so that
        // busy rooms cannot starve a writer.
        for (let attempt = 0;; attempt++) {
          const held = attempt === 0 ? null : await lockBranch(gitdir);
          const result = await withObjects(gitdir, async (db) => {
            const parent = readHead(gitdir);
            const made = new Map<string, GitObject>();
            const { tree: oldTree } = db.commit(parent);
            let tree = rewriteTree(db, oldTree, changes, made, slug);
            if (tree === null) {
              const empty = gitObject("tree", new Uint8Array());
              made.set(empty.oid, empty);
              tree = empty.oid;
            }
            if (tree === oldTree) return { commit: parent, packs: 0, loose: 0 };
            const commit = commitObject(tree, [parent], message, clock());
            made.set(commit.oid, commit);
            const builder = new PackBuilder();
            for (const object of made.values()) if (!db.has(object.oid)) builder.addObject(object);
            await installPack(gitdir, builder.finish());
            await options.beforeBranchMove?.(slug);
            const branch = held ?? await lockBranch(gitdir);
            if (!(await branch.move(parent, commit.oid))) return null;
            return { commit: commit.oid, packs: db.packs.length + 1, loose: db.looseOids().size };
          }).finally(() => held?.release());
          if (result) {
            if (result.packs > maxPacks || result.loose > maxLoose) {
              // The commit stands whatever happens here; a merge that failed (a full disk)
              // is tried again at the next write.
              await consolidate(gitdir, maxPacks).catch(() => {});
            }
            return result.commit;
          }
          if (attempt >= 3) {
            // Even under the lock: a writer that ignores git's lock (or took ours as stale).
            throw new DvergrError(
              "CONFLICT",
              `Cannot commit to room "${slug}": another process keeps moving its branch`,
              { hint: "Retry when the other writers are done", result: true },
            );
          }
        }
      });
    },
    async readFiles(slug, prefix, at) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      const p = prefix ? (prefix.endsWith("/") ? prefix : prefix + "/") : undefined;
      if (at !== undefined && !/^[0-9a-f]{40}$/.test(at)) throw noCommit(slug, at);
      return await withObjects(gitdir, (db) => {
        if (at !== undefined && !db.has(at)) throw noCommit(slug, at);
        const entries = [...treeEntries(db, db.commit(at ?? readHead(gitdir)).tree, p)].sort((
          [a],
          [b],
        ) => a < b ? -1 : a > b ? 1 : 0);
        const out: FileMap = new Map();
        for (const [path, oid] of entries) out.set(path, textDecoder.decode(db.blob(oid)));
        return out;
      });
    },
    async replaceDir(slug, prefix, files, message, opts) {
      const p = dirPrefix(prefix);
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      const oids = await withObjects(
        gitdir,
        (db) => treeEntries(db, db.commit(readHead(gitdir)).tree, p),
      );
      // Compare by blob id: no blob needs to be read to see what changed.
      const changes = dirChanges(
        p,
        files,
        (path) => oids.get(path),
        oids.keys(),
        (text, oid) => gitBlobOid(text) === oid,
      );
      if (changes.size === 0) return null;
      if (opts?.removeFilesInTheWay) blockerRemovals(p, changes);
      return await this.writeFiles(slug, changes, message);
    },
    async log(slug) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      return await withObjects(gitdir, (db) => {
        // Newest first, as git log orders by committer time (a room's history is a line).
        const head = readHead(gitdir);
        const out: CommitInfo[] = [];
        const seen = new Set([head]);
        const queue = [{ id: head, commit: db.commit(head) }];
        while (queue.length > 0) {
          let k = 0;
          for (let i = 1; i < queue.length; i++) {
            if (queue[i].commit.time > queue[k].commit.time) k = i;
          }
          const [{ id, commit }] = queue.splice(k, 1);
          out.push({
            id,
            message: commit.message.replace(/\n$/, ""),
            at: new Date(commit.time * 1000).toISOString(),
            parents: [...commit.parents],
          });
          for (const parent of commit.parents) {
            if (seen.has(parent)) continue;
            seen.add(parent);
            queue.push({ id: parent, commit: db.commit(parent) });
          }
        }
        return out;
      });
    },
    async head(slug) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      return readHead(gitdir);
    },
    async forkRoom(from, to) {
      const src = gitdirOf(from);
      const dst = gitdirOf(to);
      if (!(await exists(from))) throw noRoom(from);
      return await lock(to, async () => {
        if (await exists(to)) throw roomExists(to);
        // Copied into a temporary sibling, then renamed: a half-made fork never appears. The
        // branch is read before the copy, so a write to the parent meanwhile is not the base.
        const base = readHead(src);
        const tmp = `${dst}.tmp-${crypto.randomUUID()}`;
        try {
          await copyDir(src, tmp);
          await Deno.remove(join(tmp, BRANCH)).catch(() => {});
          await writeDurable(join(tmp, BRANCH), encoder.encode(`${base}\n`));
          const info: ForkInfo = { parent: from, base };
          await Deno.writeTextFile(join(tmp, FORK_FILE), JSON.stringify(info) + "\n");
          await Deno.rename(tmp, dst);
          return info;
        } catch (e) {
          await Deno.remove(tmp, { recursive: true }).catch(() => {});
          if (await exists(to)) throw roomExists(to);
          throw e;
        }
      });
    },
    async forkOf(slug) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      try {
        const info = JSON.parse(await Deno.readTextFile(join(gitdir, FORK_FILE)));
        return { parent: String(info.parent), base: String(info.base) };
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    },
    async setForkBase(slug, base) {
      const gitdir = gitdirOf(slug);
      const info = await this.forkOf(slug);
      if (!info) return;
      const tmp = join(gitdir, `${FORK_FILE}.tmp-${crypto.randomUUID()}`);
      await Deno.writeTextFile(tmp, JSON.stringify({ ...info, base }) + "\n");
      await Deno.rename(tmp, join(gitdir, FORK_FILE));
    },
  };
}
