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
 * layer lives in `core/codecs/git/` (objects, zlib) and here: pack writing and reading, the
 * repository (refs, the branch lock), pack merging. The RoomStore port
 * (core/ports/room_store.ts) on top of it is this module (rooms, reading, history) with
 * room_write.ts (commits on the head), room_branches.ts (commits beside it), room_fork.ts
 * and tree_rewrite.ts, each an operation over one GitRooms value (git_rooms.ts).
 *
 * Permissions: --allow-read and --allow-write on the rooms directory.
 */
import { join } from "node:path";
import { isSlug } from "../../../core/room_slug.ts";
import type { FileMap } from "../../../core/bundle/file_map.ts";
import type { CommitInfo, InitialDir, RoomStore } from "../../../core/ports/room_store.ts";
import {
  commitObject,
  encoder,
  type GitObject,
  gitObject,
} from "../../../core/codecs/git/objects.ts";
import { installPack, PackBuilder, settled, writeDurable } from "./pack_write.ts";
import { withObjects } from "./object_reader.ts";
import { BRANCH, initBare, readHead } from "./repository.ts";
import { newTree, treeEntries } from "./tree_rewrite.ts";
import { existingGitdir, gitdirOf, type GitRooms, hasGitRoom, OID_RE } from "./git_rooms.ts";
import { replaceDir, writeFiles } from "./room_write.ts";
import { branchHead, commitOn, moveHead } from "./room_branches.ts";
import { forkOf, forkRoom, setForkBase } from "./room_fork.ts";
import { checkChanges, dirChanges, dirPrefix, keyedMutex, noCommit } from "../room_rules.ts";

/** File texts keep a leading byte order mark: it is part of the file and of the content id. */
const textDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

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
  const g: GitRooms = {
    dir,
    clock,
    lock: keyedMutex(),
    maxPacks: options.maxPacks ?? 16,
    maxLoose: options.maxLoose ?? 256,
    beforeBranchMove: options.beforeBranchMove,
  };
  return {
    createRoom: (slug, initial) => createRoom(g, slug, initial),
    hasRoom: (slug) => hasGitRoom(g, slug),
    listRooms: () => listRooms(g),
    writeFiles: (slug, changes, message) => writeFiles(g, slug, changes, message),
    readFiles: (slug, prefix, at) => readFiles(g, slug, prefix, at),
    replaceDir: (slug, prefix, files, message, opts) =>
      replaceDir(g, slug, prefix, files, message, opts),
    log: (slug) => log(g, slug),
    head: async (slug) => readHead(await existingGitdir(g, slug)),
    forkRoom: (from, to) => forkRoom(g, from, to),
    forkOf: (slug) => forkOf(g, slug),
    setForkBase: (slug, base) => setForkBase(g, slug, base),
    commitOn: (slug, c) => commitOn(g, slug, c),
    branchHead: (slug, branch) => branchHead(g, slug, branch),
    moveHead: (slug, from, to) => moveHead(g, slug, from, to),
  };
}

/**
 * createRoom() of the port: false when the room exists; a half-created room never appears.
 * With `initial`, the room's second commit (the directory's files) goes in the same pack as
 * its first, and the branch names it: the room appears holding them.
 */
async function createRoom(g: GitRooms, slug: string, initial?: InitialDir): Promise<boolean> {
  const gitdir = gitdirOf(g, slug);
  return await g.lock(slug, async () => {
    if (await hasGitRoom(g, slug)) return false;
    const builder = new PackBuilder();
    // Built (and its paths checked) before anything is written.
    const head = firstCommits(g, slug, builder, initial);
    // Build in a temporary sibling, then rename: a half-created room never appears.
    await Deno.mkdir(g.dir, { recursive: true });
    const tmp = `${gitdir}.tmp-${crypto.randomUUID()}`;
    try {
      await initBare(tmp);
      // Both durable before the room appears (the rename), not one after the other: the
      // branch may name its commit before the pack is synced while no reader can see either.
      await settled([
        installPack(tmp, builder.finish()),
        writeDurable(join(tmp, BRANCH), encoder.encode(`${head}\n`)),
      ]);
      await Deno.rename(tmp, gitdir);
    } catch (e) {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
      if (await hasGitRoom(g, slug)) return false;
      throw e;
    }
    return true;
  });
}

/**
 * A new room's commits, added to `builder`: the empty first one, and with `initial` the one
 * that writes its directory (as replaceDir() on the empty room would); returns the last.
 */
function firstCommits(
  g: GitRooms,
  slug: string,
  builder: PackBuilder,
  initial: InitialDir | undefined,
): string {
  const empty = gitObject("tree", new Uint8Array());
  const first = commitObject(empty.oid, [], `Create room ${slug}`, g.clock());
  builder.addObject(empty);
  builder.addObject(first);
  if (initial === undefined) return first.oid;
  const changes = dirChanges(dirPrefix(initial.prefix), initial.files, () => undefined, []);
  checkChanges(changes, slug);
  if (changes.size === 0) return first.oid;
  const made = new Map<string, GitObject>();
  const tree = newTree(changes, made, slug);
  const commit = commitObject(tree, [first.oid], initial.message, g.clock());
  for (const object of made.values()) if (object.oid !== empty.oid) builder.addObject(object);
  builder.addObject(commit);
  return commit.oid;
}

async function listRooms(g: GitRooms): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(g.dir)) {
      if (e.isDirectory && isSlug(e.name) && await hasGitRoom(g, e.name)) out.push(e.name);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return out.sort();
}

/** readFiles() of the port: the files at or under `prefix`, sorted by path. */
async function readFiles(
  g: GitRooms,
  slug: string,
  prefix?: string,
  at?: string,
): Promise<FileMap> {
  const gitdir = await existingGitdir(g, slug);
  const p = prefix ? (prefix.endsWith("/") ? prefix : prefix + "/") : undefined;
  if (at !== undefined && !OID_RE.test(at)) throw noCommit(slug, at);
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
}

/** log() of the port: newest first, as git log orders by committer time. */
async function log(g: GitRooms, slug: string): Promise<CommitInfo[]> {
  const gitdir = await existingGitdir(g, slug);
  return await withObjects(gitdir, (db) => {
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
}
