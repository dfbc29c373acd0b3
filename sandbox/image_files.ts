/**
 * Where the kept sandbox images lie in their cache directory, and how it is kept small: the
 * names and the pruning both image caches use (sandbox/quickjs_image_cache.ts for QuickJS,
 * sandbox/sci_image_cache.ts for Clojure; each directory holds one kind).
 *
 * Permissions: --allow-read and --allow-write of the cache directory.
 */
import { join } from "../core/path.ts";

/** The file of the checker image of checker `key` made on boot image `baseId`. */
export function checkerImageFile(dir: string, baseId: string, key: string): string {
  return join(dir, `${baseId.slice(0, 32)}-${key.slice(0, 32)}.ckimg`);
}

/**
 * Removes the oldest files ending in `suffix` but `kept`, beyond `keep` in all. A file another
 * process removed meanwhile is passed over: pruning never fails the write it follows.
 */
export function pruneImages(dir: string, kept: string, suffix: string, keep: number): void {
  const others: { path: string; mtime: number }[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (!e.isFile || path === kept || !e.name.endsWith(suffix)) continue;
    try {
      others.push({ path, mtime: Deno.statSync(path).mtime?.getTime() ?? 0 });
    } catch {
      // Removed by another process since the listing.
    }
  }
  others.sort((a, b) => b.mtime - a.mtime);
  for (const o of others.slice(keep - 1)) {
    try {
      Deno.removeSync(o.path);
    } catch {
      // Gone already.
    }
  }
}
