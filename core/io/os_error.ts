/**
 * Errors of the environment — a file system that is full or read-only, a path that is a
 * file where a directory must be, a name too long, a place Deno may not touch (/proc,
 * /sys) — are the user's to fix, not bugs: they become a DvergrError (code IO, exit 2)
 * whose message keeps the operating system's words and the path they name.
 */
import { DvergrError } from "../errors.ts";

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
  if (!(e instanceof Error)) return false;
  if (OS_ERRORS.some((c) => e instanceof c)) return true;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && OS_CODES.has(code)) return true;
  // Deno reports ENOSPC, EROFS, ENAMETOOLONG… as plain errors "… (os error N): op 'path'".
  return /\(os error \d+\)/.test(e.message);
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
