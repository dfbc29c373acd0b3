/**
 * Writing a bundle directory so that an interrupted run leaves nothing behind for long:
 * writers of one parent directory take turns (an exclusive lock on the parent, which the
 * kernel releases when a process dies, even by `kill -9`), and the writer holding it
 * removes the `<name>.tmp-…` and `<name>.old-…` siblings an interrupted writer left,
 * since no live writer can own them.
 *
 * Permissions: --allow-read and --allow-write of the parent directory.
 */
import { basename, dirname, join, resolve } from "node:path";
import type { FileMap } from "../../core/bundle/file_map.ts";
import { writeBundleDir } from "./bundle_dir.ts";

/** Removes what interrupted writes of `target` left beside it; returns the names removed. */
async function removeStale(target: string): Promise<string[]> {
  const parent = dirname(target);
  const prefixes = [`${basename(target)}.tmp-`, `${basename(target)}.old-`];
  const removed: string[] = [];
  for await (const e of Deno.readDir(parent)) {
    if (!prefixes.some((p) => e.name.startsWith(p))) continue;
    await Deno.remove(join(parent, e.name), { recursive: true });
    removed.push(e.name);
  }
  return removed;
}

/**
 * writeBundleDir() under the parent directory's lock, after removing the temporary
 * output of interrupted writes of the same directory. Returns the stale names removed.
 */
export async function writeBundleDirOnce(
  dir: string,
  files: FileMap,
  opts: { force?: boolean } = {},
): Promise<string[]> {
  const target = resolve(dir);
  const parent = dirname(target);
  await Deno.mkdir(parent, { recursive: true });
  const lock = await Deno.open(parent, { read: true });
  try {
    await lock.lock(true);
    const removed = await removeStale(target);
    await writeBundleDir(target, files, opts);
    return removed;
  } finally {
    lock.close();
  }
}
