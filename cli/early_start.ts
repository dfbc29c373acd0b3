/**
 * The first module main.ts evaluates: when dvergr runs as a program and the command will
 * ask a checker.js sandbox, the sandbox's thread worker starts here (sandbox/early_thread.ts),
 * before the other modules of main.ts and the command's own are evaluated, the bundle read
 * and parsed. Its modules and QuickJS then load on another core meanwhile, instead of after
 * all that (`dvergr calibrate` and `dvergr check` of invoice-fields: ~60 ms sooner).
 *
 * Started for `dvergr calibrate DIR` and `dvergr check DIR --answer …` when DIR holds a
 * checker.js, and for `dvergr check DIR` when no load of that checker is kept
 * (sandbox/load_cache.ts): a kept load asks no sandbox. The worker is given the QuickJS
 * memory layout and the boot image kept in the cache directory (sandbox/layout_cache.ts,
 * sandbox/quickjs_image_cache.ts), as the command's pool gives them.
 *
 * `dvergr benchmark DIR` (not --check, not --enqueue) starts its first checker worker
 * process here the same way when DIR holds a checker.js (sandbox/worker_process.ts): Deno
 * boots and loads the worker's modules while this process loads the command's and reads the
 * bundle; the run's pool takes it over (~50-100 ms sooner than from cli/prestart.ts, where the
 * pool is made). It is given the init the pool would send as its arguments
 * (sandbox/init_args.ts): the worker has its boot image restored before this process has
 * loaded the command, instead of after; the image of the bundle's checker, when one is kept,
 * follows over its stdin (sandbox/worker_process.ts says why).
 *
 * Nothing else starts anything here; what is started and not taken goes with the process. A
 * checker.clj's sandbox starts from cli/prestart.ts, once the command is known to run.
 *
 * This module decides and starts a thread worker; what makes its init (the layout and image
 * caches) and what starts a worker process is cli/early_sandbox.ts, imported only when
 * something starts: its modules (~8) cost every other start (`--help`, a `check` whose load
 * is kept) ~1 ms to load and evaluate for nothing, and the thread's start need not wait for
 * them.
 *
 * Permissions: read of the bundle directory, the cache directory and sandbox/, env; run of
 * the deno executable (a benchmark's worker process).
 */
import { join } from "../core/path.ts";
import { loadCacheDir, loadsKept, prepareSandboxIdentity } from "../sandbox/load_cache.ts";
import { CHECKER_THREAD_ENTRY, startEarlyThread } from "../sandbox/early_thread.ts";
import { importLater } from "./import_later.ts";

/** cli/early_sandbox.ts, imported (awaited at the top level: main.ts goes on after it). */
const early = () =>
  importLater<typeof import("./early_sandbox.ts")>("./early_sandbox.ts", import.meta.url);

/**
 * The source of the checker.js `dvergr <args>` will ask a sandbox for (see the module
 * comment), or null when it will ask none; reads the bundle's checker.js and stats the cache,
 * nothing else.
 */
export function earlySandboxChecker(
  args: string[],
  env: (name: string) => string | undefined,
): string | null {
  const [name, ...rest] = args;
  if (name !== "check" && name !== "calibrate") return null;
  if (rest.includes("-h") || rest.includes("--help")) return null;
  const checker = checkerOf(rest);
  if (checker === undefined) return null;
  const source = Deno.readTextFileSync(checker);
  if (name === "calibrate" || rest.some((a) => a === "--answer" || a.startsWith("--answer="))) {
    return source;
  }
  const cache = loadCacheDir(env);
  return cache === null || !loadsKept(cache, source) ? source : null;
}

/** The checker.js of the first bundle directory among a command's arguments, if any. */
function checkerOf(args: string[]): string | undefined {
  return args.filter((a) => !a.startsWith("-")).map((a) => join(a, "checker.js")).find(isFile);
}

/**
 * The checker.js of `dvergr <args>` when it is a benchmark whose run would start a checker.js
 * worker process at once: a bundle directory holding checker.js (found as cli/prestart.ts
 * finds it), cells run here (not --check, not --enqueue); null otherwise. Whether process
 * workers can start is asked only then (cli/early_sandbox.ts startEarlyBenchmarkProcess).
 */
export function earlyBenchmarkChecker(args: string[]): string | null {
  const [name, ...rest] = args;
  if (name !== "benchmark") return null;
  if (["-h", "--help", "--check", "--enqueue"].some((flag) => rest.includes(flag))) return null;
  for (const arg of rest) {
    if (arg.startsWith("-")) continue;
    const js = join(arg, "checker.js");
    if (isFile(js)) return js;
    if (isFile(join(arg, "checker.clj"))) return null;
  }
  return null;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

if (Deno.mainModule === new URL("../main.ts", import.meta.url).href) {
  try {
    const env = (name: string) => Deno.env.get(name);
    const benchmark = earlyBenchmarkChecker(Deno.args);
    const checker = benchmark !== null ? null : earlySandboxChecker(Deno.args, env);
    // Nothing to start (--help, a check whose load is kept, most commands): what makes an
    // init, a worker process, loads only when something starts (cli/early_sandbox.ts).
    if (checker !== null) {
      // The worker starts now, its init follows once the modules that make it have loaded:
      // it needs the init only once its own modules have loaded.
      const thread = startEarlyThread(CHECKER_THREAD_ENTRY);
      (await early()).initEarlyCheckerThread(thread, env, checker);
      // The sandbox's identity names what the command keeps (its checker's load, the
      // layout): when nothing is kept yet, it is hashed off this thread meanwhile.
      void prepareSandboxIdentity();
    } else if (benchmark !== null) {
      // Its source names the checker's image the worker is given with its init.
      (await early()).startEarlyBenchmarkProcess(env, Deno.readTextFileSync(benchmark));
    }
  } catch {
    // Not started (a file not readable, no permission): the command starts its own.
  }
}
