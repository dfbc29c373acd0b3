/**
 * Checking, before any work, that a file the user names as output (`--report`, `--junit`,
 * `export -o`) can be written there: so an hour of benchmark cells does not end in a
 * refusal, and nothing is half-written.
 *
 * Permissions: --allow-read of the path and its parents.
 */
import { dirname, resolve } from "node:path";
import { DvergrError } from "../../core/errors.ts";

const SYSTEM = /^\/(proc|sys|dev)(\/|$)/;

async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch {
    return null;
  }
}

/**
 * Refuses (USAGE, naming `flag`) an output path that is a directory, lies below a file,
 * under /proc, /sys or /dev, or has a name too long for the file system.
 */
export async function checkOutputFile(path: string, flag: string): Promise<void> {
  const abs = resolve(path);
  const refuse = (why: string) =>
    new DvergrError("USAGE", `Cannot write ${flag} "${path}": ${why}`, {
      hint: "Name a file in a directory you can write",
      details: { flag, file: path },
    });
  if (SYSTEM.test(abs)) throw refuse("dvergr does not write under /proc, /sys or /dev");
  if (abs.length >= 4096 || abs.split("/").some((s) => new TextEncoder().encode(s).length > 255)) {
    throw refuse("the path is too long for the file system");
  }
  const info = await lstatOrNull(abs);
  if (info?.isDirectory) throw refuse("it is a directory");
  // The nearest existing parent must be a directory (it is made below it otherwise).
  for (let p = dirname(abs);; p = dirname(p)) {
    const parent = await lstatOrNull(p);
    if (parent !== null) {
      if (!parent.isDirectory && !parent.isSymlink) throw refuse(`"${p}" is a file`);
      break;
    }
    if (p === dirname(p)) break;
  }
}
