/**
 * Errors of the environment — a file system that is full or read-only, a path that is a
 * file where a directory must be, a name too long, a place Deno may not touch (/proc,
 * /sys) — are the user's to fix, not bugs: they become a DvergrError (code IO, exit 2)
 * whose message keeps the operating system's words and the path they name.
 */
import { DvergrError } from "../../core/errors.ts";
import { isStorageError, SQLITE_STORAGE } from "../../core/storage_error.ts";
export { isStorageError };

const OS_ERRORS = [
  Deno.errors.NotFound,
  Deno.errors.PermissionDenied,
  Deno.errors.AlreadyExists,
  Deno.errors.NotADirectory,
  Deno.errors.IsADirectory,
  Deno.errors.FilesystemLoop,
  Deno.errors.NotCapable,
  Deno.errors.Busy,
  Deno.errors.WriteZero,
];

/** errno names Node-style APIs give (node:fs) for the same kinds of trouble. */
const OS_CODES = new Set([
  "ENOENT",
  "EACCES",
  "EPERM",
  "EEXIST",
  "ENOTDIR",
  "EISDIR",
  "ELOOP",
  "ENOSPC",
  "EDQUOT",
  "EROFS",
  "ENAMETOOLONG",
  "EMFILE",
  "ENFILE",
  "EBUSY",
  "EXDEV",
  "EFBIG",
  "EIO",
]);

/** Whether `e` is an error of the file system or the environment rather than of dvergr. */
export function isOsError(e: unknown): e is Error {
  // One made of an OS error already says what it needs to.
  if (!(e instanceof Error) || e instanceof DvergrError) return false;
  if (OS_ERRORS.some((c) => e instanceof c)) return true;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && OS_CODES.has(code)) return true;
  if (SQLITE_STORAGE.test(e.message)) return true;
  // Deno reports ENOSPC, EROFS, ENAMETOOLONG… as plain errors "… (os error N): op 'path'".
  return /\(os error \d+\)/.test(e.message);
}

/**
 * `e` as the IO error of writing `what` (a description that names the path, such as
 * `the home's records "/h/state.kv"`) when it is an error of the environment, for errors that
 * do not name the path themselves (SQLite's, a write to an open file); `e` itself otherwise.
 */
export function storageProblem(e: unknown, what: string): unknown {
  if (e instanceof DvergrError || !isOsError(e)) return e;
  return new DvergrError("IO", `Cannot write ${what}: ${e.message}`, {
    hint: "Free space on its file system (or raise its quota or the file size limit of " +
      "`ulimit -f`, or make it writable), then run the command again",
    cause: e,
  });
}

/** The DvergrError an error of the environment becomes, or null for anything else. */
export function osProblem(e: unknown): DvergrError | null {
  if (!isOsError(e)) return null;
  const notCapable = e instanceof Deno.errors.NotCapable;
  const message = notCapable
    ? e.message.replace(/, run again with the --allow-all flag$/, "") +
      " (dvergr does not read or write /proc, /sys or devices)"
    : e.message;
  return new DvergrError("IO", `Cannot complete the command: ${message}`, {
    hint: notCapable
      ? "Give a path in an ordinary directory"
      : "A file or directory could not be read or written: check the path named, its " +
        "permissions and the free space of its file system",
    cause: e,
  });
}
