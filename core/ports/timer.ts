/**
 * Time as a port: what waits, leases and deadlines read instead of the system clock, so
 * that tests advance a fake timer (tests/helpers/fake_timer.ts) instead of sleeping. The
 * system's is adapters/system/timer.ts.
 */
export interface Timer {
  /** Milliseconds since the epoch, on this timer. */
  now(): number;
  /** Resolves once `ms` have passed on this timer, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
