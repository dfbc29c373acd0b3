/**
 * Asking the file system what is at a path (--allow-read), and removing a tree quietly
 * (--allow-write).
 */

/** Whether anything (a file, a directory, a link, even a broken one) is at `path`. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** Whether a directory (or a link to one) is at `path`. */
export async function isDir(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return false;
    throw e;
  }
}

/**
 * Removes the tree at `path` with one synchronous call (dvergr's own small directories of an
 * attempt: an asynchronous call costs a thread's hand-off more), leaving it where it cannot:
 * gone already, or left for whoever removes its parent.
 */
export function removeTreeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch {
    // Gone already, or its parent's removal takes it.
  }
}
