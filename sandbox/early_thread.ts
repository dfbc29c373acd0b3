/**
 * A checker.js thread worker started before its pool exists: a one-shot command (`dvergr
 * check`, `dvergr calibrate`) starts it as the first thing it evaluates (cli/early_start.ts),
 * so that the worker loads its modules and QuickJS while this thread evaluates the
 * command's modules, reads the bundle and parses it. The first thread worker a pool then
 * starts for the same entry and the same init takes it over (sandbox/worker_handle.ts)
 * instead of starting one: what it said meanwhile (its "ready", or a failure) is delivered
 * to the pool as if it came then.
 *
 * It is the worker the pool would have started: `deno: { permissions: "none" }`, the same
 * entry, the same init message (a pool whose init differs, e.g. another memory cap, gets a
 * new worker and this one is stopped). One is kept at most; one not taken goes with the
 * process.
 *
 * Permissions: none.
 */
import type { InitMessage } from "./protocol.ts";

/** The entry of checker.js thread workers (sandbox/checker_pool.ts CHECKER_WORKERS). */
export const CHECKER_THREAD_ENTRY = new URL("./checker_worker.ts", import.meta.url);

/** A started worker and what it said before a pool took it. */
export interface EarlyThread {
  worker: Worker;
  /** The init it was sent; none yet (sendEarlyInit() sends it), and a pool does not take it. */
  init?: InitMessage;
  /** Its messages so far, in order. */
  messages: unknown[];
  /** Why it failed, when it did (a module that did not load, a message not readable). */
  failure?: string;
  /** Where its events go: the buffers above until a pool takes it. */
  onMessage(message: unknown): void;
  onFailure(why: string): void;
}

let early: { entry: string; thread: EarlyThread } | undefined;

/**
 * Starts a thread worker of `entry` and sends it the init `init` makes; replaces one started
 * before. `init` is called once the worker is made: what it reads (a layout, a boot image)
 * is read while the worker starts, which it needs only once its modules have loaded. Without
 * `init`, sendEarlyInit() sends it later (cli/early_start.ts: once the modules that make it
 * have loaded, which the worker's start need not wait for).
 */
export function startEarlyThread(
  entry: URL,
  init?: InitMessage | (() => InitMessage),
): EarlyThread {
  const worker = newThreadWorker(entry);
  const thread: EarlyThread = {
    worker,
    messages: [],
    onMessage: (message) => thread.messages.push(message),
    onFailure: (why) => thread.failure ??= why,
  };
  worker.onmessage = (e: MessageEvent) => thread.onMessage(e.data);
  worker.onerror = (e: ErrorEvent) => {
    // Handled here: an unhandled worker error would be rethrown in the host.
    e.preventDefault();
    thread.onFailure(e.message || "the worker failed");
  };
  worker.onmessageerror = () => thread.onFailure("a message from the worker could not be read");
  if (init !== undefined) sendEarlyInit(thread, typeof init === "function" ? init() : init);
  early?.thread.worker.terminate();
  early = { entry: entry.href, thread };
  return thread;
}

/** Sends the worker `thread` its init (once). */
export function sendEarlyInit(thread: EarlyThread, init: InitMessage): void {
  if (thread.init !== undefined) return;
  thread.init = init;
  thread.worker.postMessage(init);
}

/** A thread worker of `entry` as every sandbox thread worker is: no permission at all. */
export function newThreadWorker(entry: URL): Worker {
  return new Worker(entry, { type: "module", deno: { permissions: "none" } });
}

/** The worker of `entry` started early and not yet taken, taken (the caller owns it now). */
export function takeEarlyThread(entry: URL): EarlyThread | undefined {
  if (early?.entry !== entry.href) return undefined;
  const { thread } = early;
  early = undefined;
  // Never sent its init (what makes it failed): of no use to a pool.
  if (thread.init === undefined) {
    thread.worker.terminate();
    return undefined;
  }
  return thread;
}

/**
 * Whether a pool's init `init` is the one the early worker `thread` was sent (sameInitMessage).
 */
export function sameInit(thread: EarlyThread, init: InitMessage): boolean {
  return thread.init !== undefined && sameInitMessage(thread.init, init);
}

/**
 * Whether a pool's init `init` is the init `sent` to a worker started early (a thread, or a
 * process given it as arguments): the same limits and the same boot image (the bytes one
 * process read once: sandbox/quickjs_image_cache.ts).
 */
export function sameInitMessage(sent: InitMessage, init: InitMessage): boolean {
  return init.type === "init" && init.memoryBytes === sent.memoryBytes &&
    init.stackBytes === sent.stackBytes && init.image === sent.image &&
    init.keepImage === sent.keepImage;
}
