/**
 * A record of the checkers that loaded: `dvergr check` without an answer asks the sandbox only
 * whether the checker loads (no syntax error, no throw, its top level ends), which costs a
 * sandbox start (~0.3 s: a worker, QuickJS, the checker). A checker that loaded once with the
 * same call in the same sandbox loads again, so such a call's verdict is kept on disk: in a
 * directory named by the SHA-256 of the sandbox's identity (dvergr's version and its sandbox
 * modules) and the checker's source, a file named by the SHA-256 of the call's input. Only
 * verdicts are kept: a checker that does not load, faults or times out is asked again every
 * time, so its problem is always found afresh. Whether a checker has a directory at all
 * (loadsKept) is known from its source alone, before the bundle is parsed.
 *
 * Where: `$XDG_CACHE_HOME/dvergr/checker-loads`, else `$HOME/.cache/dvergr/checker-loads`;
 * nothing is kept without either. A file that cannot be read or written is a miss.
 *
 * Permissions: --allow-read/--allow-write of the cache directory and of sandbox/.
 */
import { join } from "../core/path.ts";
import { sha256Hex } from "../core/sha256.ts";
import type { CheckerInput, CheckerRun, CheckerRunner } from "../core/checker.ts";
import { VERSION } from "../core/version.ts";

/** The sandbox identity of this dvergr, computed once. */
let identity: string | null = null;

/**
 * The sandbox's identity: dvergr's version `version`, Deno's and, from a source tree, its
 * sandbox modules and deno.json, which pins QuickJS's version (a compiled binary's version
 * stands for them).
 */
export function sandboxIdentity(version = VERSION): string {
  if (version === VERSION && identity !== null) return identity;
  // The same bytes node:crypto's createHash was given (sources are UTF-8), hashed without
  // node:crypto: its first import boots Node's compatibility layer (~15 ms of a check).
  let text = `dvergr ${version} deno ${Deno.version.deno}\n`;
  try {
    const dir = new URL("./", import.meta.url);
    const names = [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) => e.name).sort();
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    for (const name of names) text += name + decoder.decode(Deno.readFileSync(new URL(name, dir)));
    text += "deno.json" + decoder.decode(Deno.readFileSync(new URL("../deno.json", dir)));
  } catch {
    // A compiled binary: its version stands for its modules.
  }
  const digest = sha256Hex(text);
  if (version === VERSION) identity = digest;
  return digest;
}

/** dvergr's cache directory, from the environment (null: none). */
export function dvergrCacheDir(env: (name: string) => string | undefined): string | null {
  const base = env("XDG_CACHE_HOME") || (env("HOME") ? join(env("HOME")!, ".cache") : "");
  return base ? join(base, "dvergr") : null;
}

/** Where the records are kept, from the environment (null: nowhere). */
export function loadCacheDir(env: (name: string) => string | undefined): string | null {
  const dir = dvergrCacheDir(env);
  return dir === null ? null : join(dir, "checker-loads");
}

/** The directory of the kept loads of checker `source` in the sandbox `identity`. */
function checkerDir(dir: string, source: string, identity = sandboxIdentity()): string {
  return join(dir, sha256Hex(`${identity}\0${source}`));
}

function fileOf(dir: string, source: string, input: CheckerInput): string {
  const key = sha256Hex(JSON.stringify(input));
  return join(checkerDir(dir, source), `${key}.json`);
}

/**
 * Whether any load of checker `source` in the sandbox `identity` (this one) is kept in `dir`;
 * one stat.
 */
export function loadsKept(dir: string, source: string, identity = sandboxIdentity()): boolean {
  try {
    return Deno.statSync(checkerDir(dir, source, identity)).isDirectory;
  } catch {
    return false;
  }
}

/**
 * `runner` whose `check` answers from the records in `dir` when it has this call's verdict,
 * and records each new verdict there. Calls with options (a time limit of their own) are not
 * kept.
 */
export function loadCachingRunner(runner: CheckerRunner, dir: string): CheckerRunner {
  return {
    ...runner,
    async check(source, input, opts) {
      if (opts !== undefined) return await runner.check(source, input, opts);
      const file = fileOf(dir, source, input);
      try {
        const kept = JSON.parse(await Deno.readTextFile(file)) as CheckerRun;
        if (kept.ok) return kept;
      } catch {
        // Not kept (or unreadable): ask the sandbox.
      }
      const run = await runner.check(source, input);
      if (run.ok) {
        try {
          await Deno.mkdir(checkerDir(dir, source), { recursive: true });
          const tmp = `${file}.${crypto.randomUUID()}.tmp`;
          await Deno.writeTextFile(tmp, JSON.stringify(run));
          await Deno.rename(tmp, file);
        } catch {
          // Not kept: the next check asks the sandbox again.
        }
      }
      return run;
    },
    judgeRequests: (source, input, opts) => runner.judgeRequests(source, input, opts),
    generate: (source, request, opts) => runner.generate(source, request, opts),
    close: () => runner.close(),
  };
}
