/**
 * A timer whose time moves only when told: `advance(ms)` wakes every sleeper due by then, in
 * order. With `auto`, time jumps to the next sleeper's wake as soon as the event loop has
 * nothing else to do for a moment, so code that waits for a long lease runs in milliseconds.
 */
import type { Timer } from "../../core/ports/timer.ts";

export interface FakeTimer extends Timer {
  advance(ms: number): Promise<void>;
  /** Sleepers not yet woken. */
  readonly pending: number;
  /** Stops the automatic advance. */
  stop(): void;
}

export function fakeTimer(opts: { start?: number; auto?: boolean } = {}): FakeTimer {
  let now = opts.start ?? 1_700_000_000_000;
  let sleepers: { at: number; wake: () => void }[] = [];
  let pump: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const settle = () => new Promise<void>((r) => setTimeout(r, 0));
  const schedule = () => {
    if (!opts.auto || stopped || pump !== undefined || sleepers.length === 0) return;
    // A real macrotask (a few ms) first, so real work in flight gets to run.
    pump = setTimeout(() => {
      pump = undefined;
      if (sleepers.length === 0) return;
      const next = Math.min(...sleepers.map((s) => s.at));
      wakeUntil(Math.max(now, next));
      schedule();
    }, 2);
  };
  const wakeUntil = (t: number) => {
    now = t;
    const due = sleepers.filter((s) => s.at <= now).sort((a, b) => a.at - b.at);
    sleepers = sleepers.filter((s) => s.at > now);
    for (const s of due) s.wake();
  };
  return {
    now: () => now,
    sleep(ms, signal) {
      return new Promise((resolve) => {
        if (signal?.aborted) return resolve();
        const s = {
          at: now + Math.max(0, ms),
          wake: () => {
            signal?.removeEventListener("abort", abort);
            resolve();
          },
        };
        const abort = () => {
          sleepers = sleepers.filter((x) => x !== s);
          resolve();
        };
        signal?.addEventListener("abort", abort, { once: true });
        sleepers.push(s);
        schedule();
      });
    },
    async advance(ms) {
      wakeUntil(now + ms);
      await settle();
    },
    get pending() {
      return sleepers.length;
    },
    stop() {
      stopped = true;
      if (pump !== undefined) clearTimeout(pump);
    },
  };
}
