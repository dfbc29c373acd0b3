/**
 * What every operation of the memory room store works with: each room a list of
 * snapshots (commit, files), its forks, the commits made beside its head and its branches.
 * Needs no permission.
 */
import { createHash } from "node:crypto";
import { type FileMap, sortedFiles } from "../../../core/bundle/file_map.ts";
import { DvergrError } from "../../../core/errors.ts";
import {
  branchNameProblem,
  type CommitInfo,
  type ForkInfo,
} from "../../../core/ports/room_store.ts";
import { noRoom } from "../room_rules.ts";

/** A commit and the files it holds. */
export interface Snapshot {
  commit: CommitInfo;
  files: FileMap;
}

/** The state of a memory room store, passed to each of its operations. */
export interface MemoryRooms {
  readonly clock: () => Date;
  /** Each room's line of snapshots to its head, oldest first. */
  readonly rooms: Map<string, Snapshot[]>;
  readonly forks: Map<string, ForkInfo>;
  /** Commits beside the head's line (forks of runs, merges), by room and id. */
  readonly aside: Map<string, Map<string, Snapshot>>;
  /** Branches besides the head's, by room: name → commit id. */
  readonly branches: Map<string, Map<string, string>>;
}

/** An empty memory room store's state. */
export function newMemoryRooms(clock: () => Date): MemoryRooms {
  return { clock, rooms: new Map(), forks: new Map(), aside: new Map(), branches: new Map() };
}

/** Room `slug`'s line of snapshots (NOT_FOUND for no such room). */
export function history(m: MemoryRooms, slug: string): Snapshot[] {
  const r = m.rooms.get(slug);
  if (!r) throw noRoom(slug);
  return r;
}

/** The snapshot of commit `id` of room `slug`, on its head's line or beside it. */
export function snapshotOf(m: MemoryRooms, slug: string, id: string): Snapshot | undefined {
  return history(m, slug).find((h) => h.commit.id === id) ?? m.aside.get(slug)?.get(id);
}

/** A commit id that differs for every commit made (the clock and the room count in it). */
export function commitId(
  m: MemoryRooms,
  parent: string | null,
  message: string,
  files: FileMap,
): string {
  const h = createHash("sha1").update(JSON.stringify([parent, message, [...sortedFiles(files)]]));
  return h.update(String(m.rooms.size) + m.clock().toISOString()).digest("hex");
}

/** `files` with `changes` applied (null removes a path). */
export function applied(files: FileMap, changes: Map<string, string | null>): FileMap {
  const out = new Map(files);
  for (const [p, text] of changes) {
    if (text === null) out.delete(p);
    else out.set(p, text);
  }
  return out;
}

/** Whether two file maps hold the same files. */
export function sameFiles(a: FileMap, b: FileMap): boolean {
  return a.size === b.size && [...a].every(([p, t]) => b.get(p) === t);
}

/** Refuses a branch name branchNameProblem() does not accept. */
export function checkBranch(slug: string, branch: string): void {
  const problem = branchNameProblem(branch);
  if (problem) {
    throw new DvergrError(
      "USAGE",
      `Cannot use branch "${branch}" of room "${slug}": it ${problem}`,
    );
  }
}
