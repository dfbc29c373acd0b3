/**
 * What cli/early_start.ts needs once it starts something, loaded only then: the init of the
 * checker.js thread worker it started (`check`, `calibrate`), the one its pool would send, or
 * the first worker process of a `dvergr benchmark` run. See cli/early_start.ts. It imports nothing of
 * cli/early_start.ts: that module awaits this one's import while it is evaluated.
 *
 * Permissions: read of the cache directory and sandbox/; run of the deno executable (a
 * benchmark's worker process).
 */
import {
  CHECKER_THREAD_ENTRY,
  type EarlyThread,
  sendEarlyInit,
  startEarlyThread,
} from "../sandbox/early_thread.ts";
import { DEFAULT_MEMORY_BYTES, STACK_BYTES } from "../sandbox/pool_types.ts";
import type { InitMessage, PreparedMessage } from "../sandbox/protocol.ts";
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
 * Sends the checker.js thread worker `thread` (started without one: sandbox/early_thread.ts)
 * the init a command's pool sends (QuickJS loads at once), so that the first pool that starts
 * a thread worker with the same entry and init takes it: the layout and the boot image kept in
 * the cache directory, and a request for the worker's own image when it makes one. Given the
 * checker's source, the worker is also sent the checker's image made on that boot image, when
 * one is kept (sandbox/quickjs_image_cache.ts): its first call then loads nothing.
 */
export function initEarlyCheckerThread(
  thread: EarlyThread,
  env: (name: string) => string | undefined = () => undefined,
  checkerSource?: string,
): void {
  const init = earlyInit(env);
  sendEarlyInit(thread, init);
  const prepared = preparedChecker(env, init, checkerSource);
  if (prepared !== null) thread.worker.postMessage(prepared);
}

/**
 * The image of the checker `checkerSource` made on the boot image of `init`, as the message
 * that gives it to a worker, when one is kept (sandbox/quickjs_image_cache.ts); null when
 * none is (the checker loads on its first call).
 */
function preparedChecker(
  env: (name: string) => string | undefined,
  init: InitMessage,
  checkerSource: string | undefined,
): PreparedMessage | null {
  const dir = imageDir(env);
  const { image } = init;
  if (dir === null || image === undefined || checkerSource === undefined) return null;
  // The key the pool routes the checker by (sandbox/worker_pool.ts checkerKey).
  const key = sha256Hex(checkerSource);
  const bytes = readImageFile(checkerImageFile(dir, claimedId(image), key));
  return bytes === null ? null : { type: "prepared", key, image: bytes };
}

/**
 * The init a command's checker.js pool sends its workers: the default limits, the layout and
 * the boot image kept in the cache directory, and a request for the worker's own image when
 * it makes one.
 */
function earlyInit(env: (name: string) => string | undefined): InitMessage {
  const dir = imageDir(env);
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
}

/** A checker.js thread worker started and sent its init at once (initEarlyCheckerThread). */
export function startEarlyCheckerThread(
  env: (name: string) => string | undefined = () => undefined,
  checkerSource?: string,
): EarlyThread {
  const thread = startEarlyThread(CHECKER_THREAD_ENTRY);
  initEarlyCheckerThread(thread, env, checkerSource);
  return thread;
}

/**
 * Starts the first checker.js worker process of a benchmark run, when process workers can
 * start; it runs on the baseline compiler (sandbox/worker_process.ts) and is given, as its
 * arguments, the init the run's pool sends (cli/prestart.ts benchmarkPoolOptions: the kept
 * layout and boot image), so that it boots while this process loads the command; the image
 * of `checkerSource`, when one is kept, follows over its stdin as the pool takes it.
 */
export function startEarlyBenchmarkProcess(
  env: (name: string) => string | undefined = () => undefined,
  checkerSource?: string,
): void {
  if (!processWorkersAvailable()) return;
  const init = earlyInit(env);
  const prepared = preparedChecker(env, init, checkerSource);
  startEarlyProcess(CHECKER_PROCESS_ENTRY, true, init, prepared ?? undefined);
}
