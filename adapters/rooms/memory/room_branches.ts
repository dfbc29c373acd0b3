/** Branches of memory rooms: commits beside the head, made-once branches, the head moved. */
import type { BranchCommit } from "../../../core/ports/room_store.ts";
import { DvergrError } from "../../../core/errors.ts";
import { fileDirConflict } from "../../../core/bundle/file_map.ts";
import { checkChanges, conflictError, noCommit } from "../room_rules.ts";
import {
  applied,
  checkBranch,
  commitId,
  history,
  type MemoryRooms,
  sameFiles,
  snapshotOf,
} from "./memory_rooms.ts";

/** commitOn() of the port. */
export async function commitOn(m: MemoryRooms, slug: string, c: BranchCommit): Promise<string> {
  await Promise.resolve();
  checkChanges(c.changes, slug);
  if (c.branch !== undefined) checkBranch(slug, c.branch);
  const parents = [c.on, ...(c.also ?? [])];
  const snaps = parents.map((p) => snapshotOf(m, slug, p));
  const missing = parents.find((_, i) => !snaps[i]);
  if (missing !== undefined) throw noCommit(slug, missing);
  const base = snaps[0]!;
  const files = applied(base.files, c.changes);
  const conflict = fileDirConflict(files.keys());
  if (conflict) throw conflictError(slug, conflict);
  const named = m.branches.get(slug) ?? new Map<string, string>();
  if (c.branch !== undefined && named.has(c.branch)) {
    throw new DvergrError(
      "CONFLICT",
      `Cannot create branch "${c.branch}" of room "${slug}": it exists`,
    );
  }
  if (sameFiles(files, base.files) && parents.length === 1 && c.branch === undefined) {
    return c.on;
  }
  const id = commitId(m, c.on, c.message + parents.join(","), files);
  const entry = {
    commit: { id, message: c.message, at: m.clock().toISOString(), parents },
    files,
  };
  if (!m.aside.has(slug)) m.aside.set(slug, new Map());
  m.aside.get(slug)!.set(id, entry);
  if (c.branch !== undefined) {
    named.set(c.branch, id);
    m.branches.set(slug, named);
  }
  return id;
}

/** branchHead() of the port. */
export async function branchHead(
  m: MemoryRooms,
  slug: string,
  branch: string,
): Promise<string | null> {
  await Promise.resolve();
  checkBranch(slug, branch);
  history(m, slug);
  return m.branches.get(slug)?.get(branch) ?? null;
}

/** moveHead() of the port. */
export async function moveHead(
  m: MemoryRooms,
  slug: string,
  from: string,
  to: string,
): Promise<boolean> {
  await Promise.resolve();
  const line = history(m, slug);
  const target = snapshotOf(m, slug, to);
  if (!target) throw noCommit(slug, to);
  if (line[line.length - 1].commit.id !== from) return false;
  line.push({ commit: target.commit, files: new Map(target.files) });
  return true;
}
