/**
 * Rooms in memory: each room a list of snapshots (commit, files) in a Map. The same
 * contract as the git store (tests/ports/room_store_contract.ts); the memory home's rooms
 * and tests'. Its state is memory_rooms.ts; branches beside the head are room_branches.ts.
 * Needs no permission.
 */
import { checkSlug } from "../../../core/room_slug.ts";
import { fileDirConflict, type FileMap, sortedFiles } from "../../../core/bundle/file_map.ts";
import type {
  ForkInfo,
  InitialDir,
  ReplaceDirOptions,
  RoomStore,
} from "../../../core/ports/room_store.ts";
import {
  blockerRemovals,
  checkChanges,
  conflictError,
  dirChanges,
  dirPrefix,
  noCommit,
  roomExists,
  underPrefix,
} from "../room_rules.ts";
import {
  applied,
  commitId,
  history,
  type MemoryRooms,
  newMemoryRooms,
  sameFiles,
  snapshotOf,
} from "./memory_rooms.ts";
import { branchHead, commitOn, moveHead } from "./room_branches.ts";

/** An in-memory room store: the same contract, snapshots in a Map (tests). */
export function memoryRoomStore(clock: () => Date = () => new Date()): RoomStore {
  const m = newMemoryRooms(clock);
  // The operations are async, so an unknown room is a rejected promise (as the git
  // store's), not a throw.
  return {
    createRoom: (slug, initial) => createRoom(m, slug, initial),
    hasRoom: (slug) => Promise.resolve(m.rooms.has(slug)),
    listRooms: () => Promise.resolve([...m.rooms.keys()].sort()),
    writeFiles: (slug, changes, message) => writeFiles(m, slug, changes, message),
    readFiles: (slug, prefix, at) => readFiles(m, slug, prefix, at),
    replaceDir: (slug, prefix, files, message, opts) =>
      replaceDir(m, slug, prefix, files, message, opts),
    log: async (slug) => {
      await Promise.resolve();
      return history(m, slug).map((h) => h.commit).reverse();
    },
    head: async (slug) => {
      await Promise.resolve();
      const line = history(m, slug);
      return line[line.length - 1].commit.id;
    },
    forkRoom: (from, to) => forkRoom(m, from, to),
    forkOf: async (slug) => {
      await Promise.resolve();
      history(m, slug);
      return m.forks.get(slug) ?? null;
    },
    setForkBase: (slug, base) => {
      const info = m.forks.get(slug);
      if (info) m.forks.set(slug, { ...info, base });
      return Promise.resolve();
    },
    commitOn: (slug, c) => commitOn(m, slug, c),
    branchHead: (slug, branch) => branchHead(m, slug, branch),
    moveHead: (slug, from, to) => moveHead(m, slug, from, to),
  };
}

async function createRoom(
  m: MemoryRooms,
  slug: string,
  initial?: InitialDir,
): Promise<boolean> {
  if (!(await createEmptyRoom(m, slug))) return false;
  if (initial === undefined) return true;
  try {
    await replaceDir(m, slug, initial.prefix, initial.files, initial.message);
  } catch (e) {
    // Both or neither: no room is left without its directory.
    m.rooms.delete(slug);
    throw e;
  }
  return true;
}

async function createEmptyRoom(m: MemoryRooms, slug: string): Promise<boolean> {
  await Promise.resolve();
  checkSlug(slug);
  if (m.rooms.has(slug)) return false;
  const files: FileMap = new Map();
  const message = `Create room ${slug}`;
  m.rooms.set(slug, [{
    commit: {
      id: commitId(m, null, message, files),
      message,
      at: m.clock().toISOString(),
      parents: [],
    },
    files,
  }]);
  return true;
}

async function writeFiles(
  m: MemoryRooms,
  slug: string,
  changes: Map<string, string | null>,
  message: string,
): Promise<string> {
  await Promise.resolve();
  checkChanges(changes, slug);
  const line = history(m, slug);
  const last = line[line.length - 1];
  const files = applied(last.files, changes);
  const conflict = fileDirConflict(files.keys());
  if (conflict) throw conflictError(slug, conflict);
  if (sameFiles(files, last.files)) return last.commit.id;
  const id = commitId(m, last.commit.id, message, files);
  line.push({
    commit: { id, message, at: m.clock().toISOString(), parents: [last.commit.id] },
    files,
  });
  return id;
}

async function readFiles(
  m: MemoryRooms,
  slug: string,
  prefix?: string,
  at?: string,
): Promise<FileMap> {
  await Promise.resolve();
  const line = history(m, slug);
  const snapshot = at === undefined ? line[line.length - 1] : snapshotOf(m, slug, at);
  if (!snapshot) throw noCommit(slug, at!);
  const out: FileMap = new Map();
  for (const [p, t] of sortedFiles(snapshot.files)) {
    if (underPrefix(p, prefix)) out.set(p, t);
  }
  return out;
}

async function replaceDir(
  m: MemoryRooms,
  slug: string,
  prefix: string,
  files: FileMap,
  message: string,
  opts?: ReplaceDirOptions,
): Promise<string | null> {
  await Promise.resolve();
  const p = dirPrefix(prefix);
  const line = history(m, slug);
  const current = line[line.length - 1].files;
  const changes = dirChanges(p, files, (path) => current.get(path), current.keys());
  if (changes.size === 0) return null;
  if (opts?.removeFilesInTheWay) blockerRemovals(p, changes);
  return await writeFiles(m, slug, changes, message);
}

async function forkRoom(m: MemoryRooms, from: string, to: string): Promise<ForkInfo> {
  await Promise.resolve();
  checkSlug(to);
  const line = history(m, from);
  if (m.rooms.has(to)) throw roomExists(to);
  m.rooms.set(to, line.map((h) => ({ commit: h.commit, files: new Map(h.files) })));
  const info = { parent: from, base: line[line.length - 1].commit.id };
  m.forks.set(to, info);
  return info;
}
