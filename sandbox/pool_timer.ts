/**
 * The worker pool's timers (sandbox/worker_pool.ts: a worker's start limit, the watchdog of
 * the calls in flight, the growth check) on `AbortSignal.timeout` rather than `setTimeout`.
 * In Deno 2.9 the global setTimeout and clearTimeout are Node's, loaded on first use (Deno's
 * Node timers, async hooks and errors: ~5 ms of the thread, 15-50 under load), which a
 * one-shot `dvergr check` paid on its main thread, its critical path; AbortSignal.timeout
 * runs on Deno's web timers.
 *
 * Such a timer cannot be cleared: cancel() only makes its firing do nothing (and lets go of
 * what it would have called). Like an unref'd timer it does not keep the process alive:
 * a pool's workers do while calls run.
 *
 * Permissions: none.
 */

/** A timer set with after(). */
export interface PoolTimer {
  /** It will not call its function (a no-op once it has). */
  cancel(): void;
}

/** Calls `fn` once, after `ms` milliseconds (at least 0), unless cancelled first. */
export function after(ms: number, fn: () => void): PoolTimer {
  let pending: (() => void) | undefined = fn;
  AbortSignal.timeout(Math.max(0, Math.ceil(ms))).addEventListener("abort", () => {
    const f = pending;
    pending = undefined;
    f?.();
  }, { once: true });
  return { cancel: () => void (pending = undefined) };
}
