/**
 * World directories a command candidate's sandbox keeps for itself: the system it binds
 * read-only (/usr, /etc…), /proc, /dev and /tmp, dvergr's own /.dvergr (capture and seed)
 * and /run (the world gateway's sockets). A world with fixtures or a capture directory
 * under one of them cannot be set up, so every attempt of a command candidate would fault:
 * the bundle is refused before any runs. Pure.
 */
import type { FileMap } from "./file_map.ts";
import type { BundleProblem } from "./types.ts";

/**
 * The top-level world names refused: those the command candidate refuses (its RESERVED
 * set, adapters/candidates/command/command.ts), and the mount points of dvergr's own.
 */
export const SANDBOX_NAMES: ReadonlySet<string> = new Set([
  "usr",
  "bin",
  "sbin",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "etc",
  "proc",
  "dev",
  "tmp",
  ".dvergr",
  "run",
]);

/** Cases named one by one for a reserved directory; beyond, they are counted. */
const CASES_NAMED = 3;

function why(name: string): string {
  return `/${name}, which the sandbox of a command candidate keeps for itself, so its world ` +
    "cannot be made and every attempt would fault: use another top-level directory, such as /docs";
}

/**
 * The problems of fixtures (shared or a case's) and `:capture` directories under a name of
 * SANDBOX_NAMES: one per directory of the shared fixtures, one per name over all cases, one
 * per capture entry (at its line in workflow.edn, `captureLine`).
 */
export function sandboxNameProblems(
  files: FileMap,
  capture: readonly string[],
  captureLine?: number,
): BundleProblem[] {
  const problems: BundleProblem[] = [];
  const shared = new Set<string>();
  const inCases = new Map<string, string[]>();
  for (const path of files.keys()) {
    const m = /^(?:fixtures\/|cases\/([^/]+)\/fixtures\/)([^/]+)\//.exec(path);
    if (!m || !SANDBOX_NAMES.has(m[2])) continue;
    if (m[1] === undefined) shared.add(m[2]);
    else {
      const ids = inCases.get(m[2]) ?? [];
      if (!ids.includes(m[1])) ids.push(m[1]);
      inCases.set(m[2], ids);
    }
  }
  for (const name of shared) {
    problems.push({ file: `fixtures/${name}/`, message: `fixtures under ${why(name)}` });
  }
  for (const [name, ids] of inCases) {
    const more = ids.length > CASES_NAMED ? ` (and ${ids.length - CASES_NAMED} more cases)` : "";
    problems.push({
      file: `cases/${ids[0]}/fixtures/${name}/`,
      message: `fixtures of case${ids.length > 1 ? "s" : ""} ${
        ids.slice(0, CASES_NAMED).map((id) => `"${id}"`).join(", ")
      }${more} under ${why(name)}`,
    });
  }
  for (const dir of capture) {
    const name = dir.split("/")[1];
    if (name === undefined || !SANDBOX_NAMES.has(name)) continue;
    problems.push({
      file: "workflow.edn",
      field: ":capture",
      ...(captureLine !== undefined ? { line: captureLine } : {}),
      message: `"${dir}" is under ${why(name)}`,
    });
  }
  return problems;
}
