/**
 * The program a command candidate's shell command line starts, found before any cell runs,
 * so a misspelt program is the user's mistake (exit 2) rather than a failed attempt in every
 * cell (the shell's exit 127 is the candidate's failure, never a fault: a candidate must not
 * be able to turn a wrong answer into a retry by exiting 127).
 *
 * Only what can be resolved statically is checked: the first word of the command line when
 * it is a plain word. Variables, quotes, globs, assignments (`A=1 prog`), redirections first,
 * subshells, functions and `exec`/`command` prefixes name their program only when the shell
 * runs them, and so do relative PATH entries (they point into the world): those are not
 * checked, and the attempt reports what the shell said.
 *
 * Permissions: --allow-read of the PATH directories.
 */
import { isAbsolute, join } from "node:path";

/** The PATH the host's programs are found on when dvergr's environment has none. */
export const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * `dvergr-` and 128 random bits in hex: a name no other process can guess (the staging
 * holder's token directory, the shell server's end-of-answer line).
 */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `dvergr-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Shell keywords and builtins: the first word is not a program the shell looks up. */
const NOT_PROGRAMS = new Set([
  "!",
  "{",
  "}",
  "case",
  "do",
  "done",
  "elif",
  "else",
  "esac",
  "fi",
  "for",
  "if",
  "in",
  "then",
  "until",
  "while",
  ".",
  ":",
  "[",
  "alias",
  "bg",
  "break",
  "cd",
  "command",
  "continue",
  "echo",
  "eval",
  "exec",
  "exit",
  "export",
  "false",
  "fc",
  "fg",
  "getopts",
  "hash",
  "jobs",
  "kill",
  "local",
  "printf",
  "pwd",
  "read",
  "readonly",
  "return",
  "set",
  "shift",
  "test",
  "times",
  "trap",
  "true",
  "type",
  "ulimit",
  "umask",
  "unalias",
  "unset",
  "wait",
]);

/**
 * The program that `command` (a `/bin/sh -c` command line) starts, when its first word is a
 * plain word naming one; null when the shell decides it at run time (see the module's doc).
 */
export function commandProgram(command: string): string | null {
  const m = /^\s*([^\s;&|<>()]*)(.?)/.exec(command)!;
  const [, word, next] = m;
  if (word === "" || NOT_PROGRAMS.has(word)) return null;
  // Quotes, expansions, globs, assignments, comments, braces: decided by the shell.
  if (!/^[A-Za-z0-9_./+,:@%-]+$/.test(word)) return null;
  // `2>file prog` (an IO number) and `name() {…}` (a function) are not programs.
  if (next === "<" || next === ">" || next === "(") return null;
  return word;
}

/**
 * The argv a `/bin/sh -c` command line amounts to when it is nothing but plain words (letters,
 * digits and `_./+,:@%-`, `=` past the first word) separated by blanks, its first naming a
 * program (no keyword or builtin, no assignment): the shell would only split it and exec it,
 * so it is exec'd without the shell (one process fewer per attempt). Null for anything the
 * shell would do more with (quotes, expansions, globs, redirections, lists, comments…).
 */
export function plainArgv(command: string): string[] | null {
  const words = command.split(/[ \t]+/).filter((w) => w !== "");
  if (words.length === 0 || NOT_PROGRAMS.has(words[0])) return null;
  if (!/^[A-Za-z0-9_./+,:@%-]+$/.test(words[0])) return null;
  return words.every((w) => /^[A-Za-z0-9_./+,:@%=-]+$/.test(w)) ? words : null;
}

/** Where the program was looked for, and whether it is there. */
export type ProgramLookup =
  | { found: true; path: string }
  | { found: false; reason: "missing" | "not-executable"; searched: string[] };

/**
 * Whether `path` is a file whose mode has one of `bits` ("missing": no file there). Synchronous:
 * one stat of a PATH entry costs microseconds, and hostProgram() runs where nothing awaits.
 */
function executable(path: string, bits: number): "yes" | "no" | "missing" {
  try {
    const info = Deno.statSync(path);
    if (!info.isFile) return "missing";
    return ((info.mode ?? 0o755) & bits) !== 0 ? "yes" : "no";
  } catch {
    return "missing";
  }
}

/**
 * Looks `program` up as the shell would on `path` (a PATH value), seeing only the host
 * directories for which `visible(dir)` holds (the sandbox's view); null when the lookup cannot
 * be decided here: an absolute or relative path outside what is visible, or a relative PATH
 * entry (the world, which the candidate may fill). A file counts as executable when its mode
 * has one of `bits` (default any x bit; 0o001 where the program runs as a uid that owns
 * nothing: the sandbox's when dvergr is root).
 */
export function lookUpProgram(
  program: string,
  path: string,
  visible: (dir: string) => boolean,
  bits = 0o111,
): ProgramLookup | null {
  if (program.includes("/")) {
    if (!isAbsolute(program) || !visible(program)) return null;
    const x = executable(program, bits);
    if (x === "yes") return { found: true, path: program };
    return { found: false, reason: x === "no" ? "not-executable" : "missing", searched: [] };
  }
  const dirs = path.split(":");
  if (dirs.some((d) => !isAbsolute(d))) return null;
  const searched = dirs.filter(visible);
  let notExecutable = false;
  for (const d of searched) {
    const x = executable(join(d, program), bits);
    if (x === "yes") return { found: true, path: join(d, program) };
    if (x === "no") notExecutable = true;
  }
  return { found: false, reason: notExecutable ? "not-executable" : "missing", searched };
}

/** Whether the host path `p` lies in one of `roots` (a root itself included). */
export function under(roots: string[], p: string): boolean {
  return roots.some((r) => p === r || p.startsWith(r.endsWith("/") ? r : r + "/"));
}

/** Whether every directory from / down to `dir` lets every user pass (o+x). */
function passableByAll(dir: string): boolean {
  const parts = dir.split("/").filter((p) => p !== "");
  for (let i = 0; i <= parts.length; i++) {
    try {
      const info = Deno.statSync("/" + parts.slice(0, i).join("/"));
      if (((info.mode ?? 0o755) & 0o001) === 0) return false;
    } catch {
      return false;
    }
  }
  return true;
}

const hostPrograms = new Map<string, string>();

/**
 * The absolute path of a host program of dvergr's own launch (bwrap, unshare, setpriv, setsid)
 * on `path`, looked up once per process: a program found by name walks PATH on every exec, one
 * failed execve per missing or closed entry (about ten per program here). `byOthers`: it is
 * exec'd by a uid that owns nothing (the sandbox's host uid, when dvergr is root), so only a
 * file every user may execute, in directories every user may pass, is what its own lookup
 * would find. Not found: the bare name, whose exec then fails as it would have.
 */
export function hostProgram(name: string, path: string, byOthers = false): string {
  const key = `${byOthers ? 1 : 0}:${name}:${path}`;
  const known = hostPrograms.get(key);
  if (known !== undefined) return known;
  let found = name;
  for (const dir of path.split(":")) {
    if (!isAbsolute(dir) || (byOthers && !passableByAll(dir))) continue;
    if (executable(join(dir, name), byOthers ? 0o001 : 0o111) === "yes") {
      found = join(dir, name);
      break;
    }
  }
  hostPrograms.set(key, found);
  return found;
}
