/**
 * The rules every room store keeps (its memory and git implementations alike): which
 * changes a write may make (relative room paths, no path both a file and a directory),
 * the errors it gives, and how a directory write becomes a set of changes. Pure, except
 * the per-key mutex that serialises writes within this process.
 */
import { DvergrError } from "../../core/errors.ts";
import {
  conflictText,
  fileDirConflict,
  type FileMap,
  relativePathProblem,
} from "../../core/bundle/file_map.ts";

/** Deletions of every parent path of `prefix/` (a no-op for directories and absent paths). */
export function blockerRemovals(prefix: string, changes: Map<string, string | null>): void {
  const segs = prefix.replace(/\/$/, "").split("/");
  for (let i = 1; i <= segs.length; i++) {
    const p = segs.slice(0, i).join("/");
    if (!changes.has(p)) changes.set(p, null);
  }
}

/** A room write that would make a path both a file and a directory. */
export function conflictError(slug: string, c: { file: string; inside: string }): DvergrError {
  return new DvergrError(
    "PATH_INVALID",
    `Cannot write to room "${slug}": ${conflictText(c)}; one of the two would be lost`,
    { hint: "Remove the file first (null), or write the files under another directory" },
  );
}

export function checkChanges(changes: Map<string, string | null>, slug = ""): void {
  const written = [...changes].filter(([, t]) => t !== null).map(([p]) => p);
  const conflict = fileDirConflict(written);
  if (conflict) throw conflictError(slug, conflict);
  for (const path of changes.keys()) {
    const problem = relativePathProblem(path, "room");
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

export function noRoom(slug: string): DvergrError {
  return new DvergrError("NOT_FOUND", `Cannot open room "${slug}": no such room in this home`, {
    hint: "Benchmark a bundle directory to create its room, or check the --home",
  });
}

export function underPrefix(path: string, prefix?: string): boolean {
  if (!prefix) return true;
  const p = prefix.endsWith("/") ? prefix : prefix + "/";
  return path.startsWith(p);
}

/** Serialises work per key within this process. */
export function keyedMutex() {
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

export function dirPrefix(prefix: string): string {
  const p = prefix.endsWith("/") ? prefix : prefix + "/";
  const problem = relativePathProblem(p.slice(0, -1), "room");
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
export function dirChanges<T>(
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

export function noCommit(slug: string, at: string): DvergrError {
  return new DvergrError(
    "NOT_FOUND",
    `Cannot read commit ${at} of room "${slug}": it is not in the room's history`,
    { hint: `List the room's commits with room_log (dvergr room log ${slug})` },
  );
}

export function roomExists(slug: string): DvergrError {
  return new DvergrError("CONFLICT", `Cannot fork into room "${slug}": it exists already`, {
    hint: "Name another fork, or leave out `as` to get a new name",
  });
}
