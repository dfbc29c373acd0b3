/**
 * The sandbox of a command that grades (`dvergr calibrate`, `dvergr check --answer`) started
 * before the command's modules load: the first argument that is a bundle directory says which
 * checker it has, and a pool of thread workers (sandbox/checker_pool.ts
 * prestartCommandPool) loads QuickJS while this thread loads the command, reads the bundle
 * and parses it. A ROOM/NAME bundle, or none, starts nothing (the command starts its pool
 * when it needs it).
 */
import { join } from "node:path";

/** Which checker file the directory `dir` holds, or null when it is not a bundle's. */
async function checkerFileOf(dir: string): Promise<"checker.js" | "checker.clj" | null> {
  for (const file of ["checker.js", "checker.clj"] as const) {
    try {
      if ((await Deno.stat(join(dir, file))).isFile) return file;
    } catch {
      // Not there (or not readable): the command says so in its own words.
    }
  }
  return null;
}

/**
 * Starts the sandbox for the first bundle directory among `args`; resolves to what closes it
 * when the command did not take it (call it once the command has returned).
 */
export async function prestartSandbox(args: string[]): Promise<() => void> {
  for (const arg of args) {
    if (arg.startsWith("-")) continue;
    const file = await checkerFileOf(arg);
    if (file === null) continue;
    const { prestartCommandPool } = await import("../sandbox/checker_pool.ts");
    return prestartCommandPool(file);
  }
  return () => {};
}
