import { dirname } from "../core/path.ts";
import { DvergrError } from "../core/errors.ts";

/**
 * Writes `text` to `path` atomically (a temporary sibling, then a rename), creating its
 * directory: a reader sees the old file or the new one, never half of it. A directory at
 * `path` is refused.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  try {
    if ((await Deno.stat(path)).isDirectory) {
      throw new DvergrError("TARGET_EXISTS", `Cannot write "${path}": it is a directory`, {
        hint: "Name a file, e.g. -o recall.edn or --junit ci/results.xml",
      });
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await Deno.mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}
