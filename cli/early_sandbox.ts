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
  const dir = imageDir(env);
  const layout = keptLayout(env);
  const image = dir === null ? null : keptImageFile(dir);
  sendEarlyInit(thread, {
    type: "init",
    memoryBytes: DEFAULT_MEMORY_BYTES,
    stackBytes: STACK_BYTES,
    ...(layout ? { layout } : {}),
    ...(image ? { image } : {}),
    ...(dir === null ? {} : { keepImage: true }),
  });
  if (dir !== null && image !== null && checkerSource !== undefined) {
    // The key the pool routes the checker by (sandbox/worker_pool.ts checkerKey).
    const key = sha256Hex(checkerSource);
    // None kept: the checker loads on its first call.
    const bytes = readImageFile(checkerImageFile(dir, claimedId(image), key));
    if (bytes !== null) thread.worker.postMessage({ type: "prepared", key, image: bytes });
  }
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
 * start; it runs on the baseline compiler (sandbox/worker_process.ts).
 */
export function startEarlyBenchmarkProcess(): void {
  if (processWorkersAvailable()) startEarlyProcess(CHECKER_PROCESS_ENTRY, true);
}
