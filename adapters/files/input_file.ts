/**
 * Reading a file the user names (a table, a spec, a shared file, an export): only a
 * regular file is read, and at most `maxBytes` of it, so `/dev/zero`, a FIFO or a
 * directory given by mistake is refused with the file named instead of being read until
 * memory runs out (or forever).
 *
 * Permissions: --allow-read of the file.
 */
import { constants as fsConstants, promises as fsp } from "node:fs";
import { DvergrError } from "../../core/errors.ts";

/** Sizes of the files the user gives. */
export const INPUT_LIMITS = {
  /** A case-pack table. */
  table: 512 * 1024 * 1024,
  /** A spec, a shared file, an attachment, a file given to a room. */
  text: 64 * 1024 * 1024,
  /** An export (a whole bundle as one EDN file). */
  export: 512 * 1024 * 1024,
} as const;

// Opening never waits for a FIFO's writer.
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0);

function mib(n: number): string {
  return `${Math.round(n / (1024 * 1024))} MiB`;
}

/**
 * The bytes of the regular file at `path`; a DvergrError naming `what "shown"` when it is
 * missing, not a regular file, larger than `maxBytes`, or cannot be read.
 */
export async function readInputFile(
  path: string,
  opts: { shown: string; what: string; maxBytes: number; hint?: string },
): Promise<Uint8Array> {
  const { shown, what } = opts;
  const refuse = (why: string, code: "NOT_FOUND" | "USAGE" = "USAGE") =>
    new DvergrError(code, `Cannot read the ${what} "${shown}": ${why}`, {
      hint: opts.hint ?? `Give the path of a regular file (at most ${mib(opts.maxBytes)})`,
      details: { file: shown },
    });
  let file: fsp.FileHandle;
  try {
    file = await fsp.open(path, OPEN_FLAGS);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || e instanceof Deno.errors.NotFound) {
      throw refuse("no such file", "NOT_FOUND");
    }
    if (code === "EISDIR") throw refuse("it is a directory", "NOT_FOUND");
    throw refuse(e instanceof Error ? e.message : String(e));
  }
  try {
    const info = await file.stat();
    if (info.isDirectory()) throw refuse("it is a directory", "NOT_FOUND");
    if (!info.isFile()) {
      throw refuse(
        info.isFIFO()
          ? "it is a FIFO, not a regular file"
          : info.isCharacterDevice() || info.isBlockDevice()
          ? "it is a device, not a regular file"
          : "it is not a regular file",
      );
    }
    if (info.size > opts.maxBytes) {
      throw refuse(`it is larger than ${mib(opts.maxBytes)} (${info.size} bytes)`);
    }
    // The size may grow while it is read: read at most one byte past the limit.
    const buf = new Uint8Array(Math.min(opts.maxBytes + 1, info.size + 65536));
    let n = 0;
    for (;;) {
      if (n === buf.length) break;
      const { bytesRead } = await file.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > opts.maxBytes) throw refuse(`it is larger than ${mib(opts.maxBytes)}`);
    return buf.subarray(0, n);
  } catch (e) {
    if (e instanceof DvergrError) throw e;
    throw refuse(e instanceof Error ? e.message : String(e));
  } finally {
    await file.close().catch(() => {});
  }
}
