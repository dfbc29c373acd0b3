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
 * bundle; the run's pool takes it over and sends its init (~50-100 ms sooner than from
 * cli/prestart.ts, where the pool is made).
 *
 * Nothing else starts anything here; what is started and not taken goes with the process. A
 * checker.clj's sandbox starts from cli/prestart.ts, once the command is known to run.
 *
 * Permissions: read of the bundle directory, the cache directory and sandbox/, env; run of
 * the deno executable (a benchmark's worker process).
 */
import { join } from "../core/path.ts";
import {
  CHECKER_THREAD_ENTRY,
  type EarlyThread,
  startEarlyThread,
} from "../sandbox/early_thread.ts";
import { DEFAULT_MEMORY_BYTES, STACK_BYTES } from "../sandbox/pool_types.ts";
import { loadCacheDir, loadsKept, prepareSandboxIdentity } from "../sandbox/load_cache.ts";
import { keptLayout } from "../sandbox/layout_cache.ts";
import {
  checkerImageFile,
  imageDir,
  keptImageFile,
  readImageFile,
} from "../sandbox/quickjs_image_cache.ts";
import { claimedId } from "../sandbox/quickjs_image.ts";
import { sha256Hex } from "../core/sha256.ts";
import {
  CHECKER_PROCESS_ENTRY,
  processWorkersAvailable,
  startEarlyProcess,
} from "../sandbox/worker_process.ts";

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
 * Starts a checker.js thread worker with the init a command's pool sends (QuickJS loads at
 * once), kept for the first pool that starts a thread worker with the same entry and init:
 * the layout and the boot image kept in the cache directory (read once the worker is made),
 * and a request for the worker's own image when it makes one. Given the checker's source,
 * the worker is also sent the checker's image made on that boot image, when one is kept
 * (sandbox/quickjs_image_cache.ts): its first call then loads nothing.
 */
export function startEarlyCheckerThread(
  env: (name: string) => string | undefined = () => undefined,
  checkerSource?: string,
): EarlyThread {
  const dir = imageDir(env);
  const thread = startEarlyThread(CHECKER_THREAD_ENTRY, () => {
    const layout = keptLayout(env);
    const image = dir === null ? null : keptImageFile(dir);
    return {
      type: "init",
      memoryBytes: DEFAULT_MEMORY_BYTES,
      stackBytes: STACK_BYTES,
      ...(layout ? { layout } : {}),
      ...(image ? { image } : {}),
      ...(dir === null ? {} : { keepImage: true }),
    };
  });
  const { image } = thread.init;
  if (dir !== null && image !== undefined && checkerSource !== undefined) {
    // The key the pool routes the checker by (sandbox/worker_pool.ts checkerKey).
    const key = sha256Hex(checkerSource);
    // None kept: the checker loads on its first call.
    const bytes = readImageFile(checkerImageFile(dir, claimedId(image), key));
    if (bytes !== null) thread.worker.postMessage({ type: "prepared", key, image: bytes });
  }
  return thread;
}

/**
 * Whether `dvergr <args>` is a benchmark whose run starts a checker.js worker process at
 * once: a bundle directory holding checker.js (found as cli/prestart.ts finds it), cells run
 * here (not --check, not --enqueue), and process workers can start.
 */
export function wantsEarlyWorkerProcess(args: string[]): boolean {
  const [name, ...rest] = args;
  if (name !== "benchmark") return false;
  if (["-h", "--help", "--check", "--enqueue"].some((flag) => rest.includes(flag))) return false;
  for (const arg of rest) {
    if (arg.startsWith("-")) continue;
    if (isFile(join(arg, "checker.js"))) return processWorkersAvailable();
    if (isFile(join(arg, "checker.clj"))) return false;
  }
  return false;
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
    if (wantsEarlyWorkerProcess(Deno.args)) {
      // The first worker of a checker.js pool of processes runs on the baseline compiler.
      startEarlyProcess(CHECKER_PROCESS_ENTRY, true);
    } else {
      const checker = earlySandboxChecker(Deno.args, env);
      if (checker !== null) {
        startEarlyCheckerThread(env, checker);
        // The sandbox's identity names what the command keeps (its checker's load, the
        // layout): when nothing is kept yet, it is hashed off this thread meanwhile.
        void prepareSandboxIdentity();
      }
    }
  } catch {
    // Not started (a file not readable, no permission): the command starts its own.
  }
}
