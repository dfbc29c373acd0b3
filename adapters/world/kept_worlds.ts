/**
 * World directories kept for later worlds of the same parent: a world whose attempt is over
 * (the engine says so: its candidate returned, isolated, without a fault, so nothing of the
 * attempt can reach the directory any more) is emptied, its top-level directories kept empty,
 * renamed (a fresh name: no world's directory has an earlier world's name, and a path the
 * attempt held names nothing once it is removed) and taken by a later world. A world made from a kept
 * directory holds only what its own seeding put there, as a fresh one does: the emptying
 * removes every entry below the top-level directories and every other top-level entry (links
 * themselves, never their targets), and the seeding removes the kept directories it does not
 * use.
 *
 * Why: each world's directory and its two top-level directories (docs, out) were made with
 * mkdir and removed with rmdir, an inode allocated and freed each on ext4, where the
 * allocator's look for recently deleted inodes (ext4's recently_deleted) made a world's
 * directories ~1 ms of CPU of dvergr's, against ~0.05 ms to empty and rename one.
 *
 * The kept directories go when the process ends (`unload`); a killed process's go with its
 * worlds directory.
 *
 * Permissions: --allow-read and --allow-write on the worlds' parent.
 */
import { join } from "node:path";
import { removeTreeQuietly } from "../files/fs.ts";

/** Kept directories per parent, at most this many (about the attempts run at once). */
const MAX_KEPT = 64;

interface Kept {
  dir: string;
  /** Its top-level directories, empty. */
  dirs: string[];
}

const kept = new Map<string, Kept[]>();
let removeAtExit = false;

function randomName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `world-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Empties the world directory `dir` of `parent` but for its top-level directories (made empty)
 * and keeps it, under a new name, for a later world of `parent`. False when it is not kept (too
 * many kept, or an entry could not be removed): the caller removes it as before.
 */
export function keepWorld(dir: string, parent: string): boolean {
  const pool = kept.get(parent) ?? [];
  if (pool.length >= MAX_KEPT) return false;
  const dirs: string[] = [];
  const renamed = join(parent, randomName());
  try {
    for (const e of Deno.readDirSync(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory && !e.isSymlink) {
        for (const c of Deno.readDirSync(path)) {
          Deno.removeSync(`${path}/${c.name}`, { recursive: true });
        }
        dirs.push(e.name);
      } else {
        Deno.removeSync(path);
      }
    }
    // As makeTempDir made it (a sandboxed attempt's uid was given passage: host_identity.ts).
    Deno.chmodSync(dir, 0o700);
    Deno.renameSync(dir, renamed);
  } catch {
    return false;
  }
  if (!removeAtExit) {
    removeAtExit = true;
    globalThis.addEventListener("unload", () => {
      for (const k of [...kept.values()].flat()) removeTreeQuietly(k.dir);
    });
  }
  pool.push({ dir: renamed, dirs });
  kept.set(parent, pool);
  return true;
}

/** A kept directory of `parent` and its (empty) top-level directories; null when none is kept. */
export function takeKeptWorld(parent: string): Kept | null {
  const pool = kept.get(parent);
  for (let k = pool?.pop(); k !== undefined; k = pool?.pop()) {
    try {
      if (Deno.lstatSync(k.dir).isDirectory) return k;
    } catch {
      // Gone with its parent (a home that closed): not taken.
    }
    removeTreeQuietly(k.dir);
  }
  return null;
}

/** How many directories of `parent` are kept (tests). */
export function keptWorlds(parent: string): number {
  return kept.get(parent)?.length ?? 0;
}
