/**
 * Where the host keeps the boot image of its checker.js workers (sandbox/quickjs_image.ts),
 * so that the next worker, of this command or the next one, restores it instead of running
 * the prelude: `$XDG_CACHE_HOME/dvergr/sandbox-images/<identity>.img`, else under
 * `$HOME/.cache`; nowhere without either. The identity is the sandbox's
 * (sandbox/load_cache.ts: dvergr's and Deno's versions, the sandbox modules and deno.json,
 * which pins QuickJS's version), so another build never finds an image that is not its own.
 *
 * The host does not look inside a file: it reads its bytes once per process (the early
 * worker of cli/early_start.ts and the command's pool get the same bytes) and sends them
 * in the worker's init; the worker checks the hash and that the image fits its module, and
 * runs the prelude when either fails (a miss, never a crash). A worker that ran the prelude
 * sends its image back in its "ready" and the pool keeps it here: written to a temporary
 * name (0600, in a 0700 directory) and renamed, so a reader sees all of it or none.
 *
 * Checker images (a checker.js loaded in a worker restored from a boot image: its first call
 * there then neither parses nor runs its top level) are kept beside, one file per boot image
 * and checker (`<boot image's SHA-256>-<checker's SHA-256>.ckimg`, 64 at most), in the same
 * file format, checked by the worker the same way.
 *
 * Permissions: read and write of the cache directory, read of sandbox/ and deno.json.
 */
import { join } from "../core/path.ts";
import { dvergrCacheDir, sandboxIdentity } from "./load_cache.ts";
import type { BootImageStore } from "./sci_image_cache.ts";
import { claimedId, imageFileBytes } from "./quickjs_image.ts";
import { checkerImageFile, pruneImages } from "./image_files.ts";

export { checkerImageFile };

/** Images of other identities kept beside the current one (other checkouts, versions). */
const KEEP_FILES = 4;
/** Checker images kept (the most recently written). */
const KEEP_CHECKER_FILES = 64;
/**
 * Largest image file read: an image is the QuickJS memory below its heap's top (~220 KB
 * after the prelude, a few MB with a large checker); a larger file is not one of ours.
 */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

/** The bytes of the image file `file`; null when it is missing, unreadable or too large. */
export function readImageFile(file: string): Uint8Array | null {
  try {
    if (Deno.statSync(file).size > MAX_FILE_BYTES) return null;
    const bytes = Deno.readFileSync(file);
    return bytes.byteLength > MAX_FILE_BYTES ? null : bytes;
  } catch {
    return null;
  }
}

/** The directory of the images, from the environment (null: nowhere). */
export function imageDir(env: (name: string) => string | undefined): string | null {
  const dir = dvergrCacheDir(env);
  return dir === null ? null : join(dir, "sandbox-images");
}

/** The image file read (or written) last in this process, and its bytes. */
let read: { file: string; bytes: Uint8Array } | undefined;

/**
 * The bytes of the image file kept in `dir` for this sandbox, read once per process (the
 * same bytes for the early worker and the pool), or null; with no directory at all (a first
 * check) that is known from one stat, without the sandbox's identity.
 */
export function keptImageFile(dir: string): Uint8Array | null {
  try {
    if (!Deno.statSync(dir).isDirectory) return null;
  } catch {
    return null;
  }
  const file = join(dir, `${sandboxIdentity()}.img`);
  if (read?.file === file) return read.bytes;
  // None kept (or not readable): the worker runs the prelude.
  const bytes = readImageFile(file);
  if (bytes !== null) read = { file, bytes };
  return bytes;
}

/** The store of checker.js boot images in `dir`, or null when there is none. */
export function quickjsImageStore(dir: string | null): BootImageStore | null {
  if (dir === null) return null;
  return {
    load() {
      const bytes = keptImageFile(dir);
      return Promise.resolve(bytes ? { image: bytes, id: claimedId(bytes) } : null);
    },
    save(image) {
      const file = join(dir, `${sandboxIdentity()}.img`);
      return {
        written: writeImage(dir, file, image, ".img", KEEP_FILES).then((bytes) => {
          if (bytes) read = { file, bytes };
        }),
      };
    },
    loadChecker: (baseId, key) =>
      Promise.resolve(readImageFile(checkerImageFile(dir, baseId, key))),
    async saveChecker(baseId, key, image) {
      const file = checkerImageFile(dir, baseId, key);
      try {
        Deno.statSync(file);
        return; // Kept already (made on the same boot image, so the same).
      } catch {
        await writeImage(dir, file, image, ".ckimg", KEEP_CHECKER_FILES);
      }
    },
  };
}

/**
 * Writes the image file of `image` to `file` (the bytes written, or null when it could not
 * be) and keeps at most `keep` files ending in `suffix`.
 */
async function writeImage(
  dir: string,
  file: string,
  image: Uint8Array,
  suffix: string,
  keep: number,
): Promise<Uint8Array | null> {
  const bytes = await imageFileBytes(image);
  const tmp = `${file}.${crypto.randomUUID()}.tmp`;
  // Written at once: a one-shot command exits right after its verdicts.
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    Deno.chmodSync(dir, 0o700);
    Deno.writeFileSync(tmp, bytes, { createNew: true, mode: 0o600 });
    Deno.renameSync(tmp, file);
    pruneImages(dir, file, suffix, keep);
    return bytes;
  } catch {
    // Not kept: the next worker makes it again.
    try {
      Deno.removeSync(tmp);
    } catch {
      // Never written.
    }
    return null;
  }
}
