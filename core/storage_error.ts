/**
 * Telling an error of a file system that cannot take what dvergr writes (full, over quota,
 * read-only, over the file size limit, a failed device) from any other: pure, over the
 * error's code and message, so the engine decides on it without reaching the system. The
 * adapters that write (adapters/files/os_error.ts) turn such errors into IO errors.
 */
import { DvergrError } from "./errors.ts";

/** errno names of a file system that cannot take what is written. */
const STORAGE_CODES = new Set(["ENOSPC", "EDQUOT", "EROFS", "EFBIG", "EIO"]);

/** Linux errno numbers of the same: EIO 5, EFBIG 27, ENOSPC 28, EROFS 30, EDQUOT 122. */
const STORAGE_OS_ERROR = /\(os error (5|27|28|30|122)\)/;

/**
 * SQLite's words (Deno KV gives no errno) for the same: SQLITE_FULL, SQLITE_IOERR (what a write
 * over RLIMIT_FSIZE becomes), SQLITE_READONLY, SQLITE_CANTOPEN.
 */
export const SQLITE_STORAGE =
  /^(database or disk is full|disk I\/O error|attempt to write a readonly database|unable to open database file)/;

/**
 * Whether `e` says a file system cannot take what dvergr writes: it is full, over quota,
 * read-only, the file is over its size limit (RLIMIT_FSIZE), or the device failed — in
 * Deno's words, node:fs's or SQLite's (Deno KV), or as the IO error storageProblem() made
 * of one. Such an error stops a benchmark instead of becoming a cell's fault: every cell
 * after it would fault the same way, and the cells already committed are kept for the rerun.
 */
export function isStorageError(e: unknown): boolean {
  if (e instanceof DvergrError) return e.code === "IO" && isStorageError(e.cause);
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && STORAGE_CODES.has(code)) return true;
  return STORAGE_OS_ERROR.test(e.message) || SQLITE_STORAGE.test(e.message);
}
