/**
 * Clojure workers' boot images kept on disk, so a new worker (in this process or the next
 * dvergr run) restores SCI's booted interpreter in ~0.1 s instead of booting it in 0.5–3 s,
 * and their checker images (a loaded checker.clj as its change to a boot image's memory,
 * kept per boot image and checker), so its first call of a known checker loads nothing
 * (sandbox/sci_image.ts says what the images are; the worker itself stays permission-less:
 * the host reads the images and sends them over the worker's stdin).
 *
 * Where: `$XDG_CACHE_HOME/dvergr/sci-images`, else `$HOME/.cache/dvergr/sci-images`, a
 * directory only the user can enter (0700); nothing is kept without either variable. One
 * file per sandbox identity: the SHA-256 of dvergr's version, Deno's, the sandbox's modules
 * and deno.lock (which pins the QuickJS build and scittle), so another build never finds an
 * image that is not its own. A file is written to a temporary name (0600) and renamed, so a
 * reader sees all of it or none. Each file holds a magic word, the SHA-256 and the length of
 * the image: a file that is short, long, foreign or corrupt is ignored (and replaced by the
 * next worker's image), never restored. The worker refuses an image that does not fit its
 * module too (another layout, other handles) and boots SCI instead.
 *
 * Permissions: --allow-env (the two variables), --allow-read and --allow-write of the cache
 * directory and --allow-read of sandbox/ and deno.lock. Without them there is no cache and
 * every worker boots SCI.
 */
import { createHash } from "node:crypto";
import { join } from "../core/path.ts";
import { VERSION } from "../core/version.ts";
import { frameHeader, sameHash, unframeImage } from "./image_frame.ts";
import { checkerImageFile, pruneImages } from "./image_files.ts";

/** Where a pool finds and keeps the boot image of its Clojure workers. */
export interface BootImageStore {
  /** The image kept, checked, with its id (its SHA-256); null when none is (or not whole). */
  load(): Promise<{ image: Uint8Array; id: string } | null>;
  /**
   * Keeps `image` for the next workers; never throws. Its id (when the store names checker
   * images by it), and the write under way.
   */
  save(image: Uint8Array): { id?: string; written: Promise<void> };
  /** The checker image of checker `key` made on boot image `baseId`, checked; or null. */
  loadChecker(baseId: string, key: string): Promise<Uint8Array | null>;
  /** Keeps a checker image (unless one is kept for the pair); never throws. */
  saveChecker(baseId: string, key: string, image: Uint8Array): Promise<void>;
}

const MAGIC = new TextEncoder().encode("DVSCIMG1");
/** Images of other identities kept beside the current one (other checkouts, versions). */
const KEEP_FILES = 4;
/** Checker images kept (the most recently written). */
const KEEP_CHECKER_FILES = 64;

let identity: string | null = null;

/** The sandbox's identity (see the module comment), computed once per process. */
function sandboxIdentity(): string {
  if (identity !== null) return identity;
  const h = createHash("sha256").update(
    `dvergr sci image 1\0${VERSION}\0deno ${Deno.version.deno}\0`,
  );
  try {
    const dir = new URL("./", import.meta.url);
    const names = [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) => e.name).sort();
    for (const name of names) h.update(name).update(Deno.readFileSync(new URL(name, dir)));
    h.update(Deno.readFileSync(new URL("../deno.lock", import.meta.url)));
  } catch {
    // A compiled binary: its version stands for its modules.
  }
  return identity = h.digest("hex");
}

/** The cache directory from the environment, or null (no variable, or no permission). */
export function sciImageDir(): string | null {
  try {
    const xdg = Deno.env.get("XDG_CACHE_HOME");
    const home = Deno.env.get("HOME");
    const base = xdg || (home ? join(home, ".cache") : "");
    return base ? join(base, "dvergr", "sci-images") : null;
  } catch {
    return null;
  }
}

/** The store of boot images in `dir` (default: sciImageDir()), or null when there is none. */
export function sciImageStore(dir: string | null = sciImageDir()): BootImageStore | null {
  if (dir === null) return null;
  const file = join(dir, `${sandboxIdentity()}.img`);
  const checkerFile = (baseId: string, key: string) => checkerImageFile(dir, baseId, key);
  return {
    async load() {
      const image = await readImage(file);
      return image ? { image, id: hex(digest(image)) } : null;
    },
    save(image) {
      const hash = digest(image);
      return { id: hex(hash), written: writeImage(dir, file, image, hash, ".img", KEEP_FILES) };
    },
    loadChecker: (baseId, key) => readImage(checkerFile(baseId, key)),
    saveChecker(baseId, key, image) {
      const target = checkerFile(baseId, key);
      return Deno.stat(target).then(
        () => {}, // Kept already (made on the same base, so the same).
        () => writeImage(dir, target, image, digest(image), ".ckimg", KEEP_CHECKER_FILES),
      );
    },
  };
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function digest(bytes: Uint8Array): Uint8Array {
  return createHash("sha256").update(bytes).digest();
}

/** The image in `file` when it is whole and its hash holds; null otherwise. */
export async function readImage(file: string): Promise<Uint8Array | null> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(file);
  } catch {
    return null;
  }
  const framed = unframeImage(bytes, MAGIC);
  return framed !== null && sameHash(digest(framed.image), framed.hash) ? framed.image : null;
}

async function writeImage(
  dir: string,
  file: string,
  image: Uint8Array,
  hash: Uint8Array,
  suffix: string,
  keep: number,
): Promise<void> {
  const tmp = `${file}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    await Deno.chmod(dir, 0o700);
    const head = frameHeader(MAGIC, hash, image.byteLength);
    const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    try {
      await writeAll(f, head);
      await writeAll(f, image);
    } finally {
      f.close();
    }
    await Deno.rename(tmp, file);
    pruneImages(dir, file, suffix, keep);
  } catch {
    // Not kept: the next worker boots SCI and offers its image again.
    await Deno.remove(tmp).catch(() => {});
  }
}

async function writeAll(f: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.byteLength) at += await f.write(bytes.subarray(at));
}
