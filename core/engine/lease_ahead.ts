/**
 * How many cells a run leases beyond those its idle workers start now: as many as would
 * start within about a second at the pace its cells have been finishing, capped. Fast cells
 * (a built-in candidate: milliseconds) are leased in groups, one commit for many cells; slow
 * cells (an agent CLI: minutes each) lease only the cells about to start, so a run never
 * holds cells another process on the home could be running.
 */
/** The window: cells that would start within this long. */
export const LEASE_AHEAD_MS = 1000;
/**
 * At most this many cells leased ahead: instant cells are then leased ~60 at a time (one
 * commit each, 17 for 1,000 cells instead of 31), still a small fraction of a second's work.
 */
export const LEASE_AHEAD_MAX = 128;
/** Cell times the pace is read from (the latest ones). */
const SAMPLES = 16;

export interface LeaseAheadWindow {
  /** Cells to hold leased beyond the idle workers' (0 until a cell has finished). */
  ahead(): number;
  /** A cell finished after `ms` (leased to committed), on the run's timer. */
  finished(ms: number): void;
}

/** The lease-ahead window of a run of `parallel` workers. */
export function leaseAheadWindow(parallel: number): LeaseAheadWindow {
  const times: number[] = [];
  let sum = 0;
  return {
    ahead() {
      if (times.length === 0) return 0;
      // Cells start at `parallel` per mean cell time.
      const mean = Math.max(sum / times.length, 0.01);
      return Math.min(LEASE_AHEAD_MAX, Math.floor((parallel * LEASE_AHEAD_MS) / mean));
    },
    finished(ms) {
      times.push(ms);
      sum += ms;
      if (times.length > SAMPLES) sum -= times.shift()!;
    },
  };
}
