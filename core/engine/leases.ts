/**
 * Cell leases for runs that share an experiment (two `dvergr benchmark`, an MCP job and a
 * CLI run on one home): a cell runs only under its lease; the lease of a holder known dead
 * (a process of this host that no longer runs) is broken at once, any other runs out by
 * itself. Leases are taken for groups of cells in one commit, and one renewal loop renews
 * every lease the run holds, in batches, every third of the lease time, from the moment it
 * is taken until the cell's record is committed (which releases it) or it is released.
 * Times are read from the run's timer.
 */
import type { Timer } from "../ports/timer.ts";
import type { CellLease, StateStore } from "../ports/state_store.ts";
import type { ProcessTable } from "../ports/process_table.ts";

/** How long a cell's lease lasts unless renewed; a third of it between renewals. */
export const LEASE_MS = 30_000;

/** Who takes leases: this process on this host, one owner id per run. */
export interface LeaseHolder {
  pid: number;
  host: string;
  owner: string;
}

/** A new holder for one run of this process. */
export function newLeaseHolder(processes: ProcessTable): LeaseHolder {
  return { ...processes.self(), owner: crypto.randomUUID() };
}

/** The lease's holder is a process of this host that no longer runs (kill -9). */
export async function holderDead(
  lease: CellLease,
  self: LeaseHolder,
  processes: ProcessTable,
): Promise<boolean> {
  return lease.host === self.host && lease.pid !== self.pid &&
    !(await processes.alive(lease.pid));
}

/** One run's leases on one experiment's cells. */
export interface CellLeases {
  /** The run's holder (whose owner id the record commits release leases of). */
  readonly holder: LeaseHolder;
  /**
   * Takes the leases of `cells` it can (breaking dead holders'), in few commits, and keeps
   * renewing those it took; for each cell, whether it was taken.
   */
  take(cells: string[]): Promise<boolean[]>;
  /** Whether another live holder's lease holds the cell now. */
  heldByOther(cell: string): Promise<boolean>;
  /** Renewing the cell's lease failed: it ran out and may be another's now. */
  lost(cell: string): boolean;
  /** Stops renewing the cell's lease: its record's commit releases it. */
  handOver(cell: string): void;
  /** Gives up the leases of cells (nothing for those another holds now). */
  release(cells: string[]): Promise<void>;
  /** Leases held and being renewed (taken, not yet handed over or released). */
  readonly held: number;
  /** Stops the renewals (the run has ended). */
  close(): void;
}

export function cellLeases(
  state: StateStore,
  experimentId: string,
  opts: { holder: LeaseHolder; processes: ProcessTable; leaseMs: number; timer: Timer },
): CellLeases {
  const { holder, processes, leaseMs, timer } = opts;
  const held = new Set<string>();
  const lost = new Set<string>();
  const closed = new AbortController();
  let renewing = false;

  /** One loop for every held lease: sleeps a third of the lease time, renews them all. */
  const renewLoop = async () => {
    renewing = true;
    try {
      while (held.size > 0 && !closed.signal.aborted) {
        await timer.sleep(Math.floor(leaseMs / 3), closed.signal);
        if (closed.signal.aborted || held.size === 0) return;
        const cells = [...held];
        const ok = await state.renewLeases(experimentId, cells, holder.owner, leaseMs, timer.now())
          .catch(() => cells.map(() => true));
        cells.forEach((c, i) => {
          if (!ok[i] && held.delete(c)) lost.add(c);
        });
      }
    } finally {
      renewing = false;
    }
  };
  const hold = (cell: string) => {
    held.add(cell);
    lost.delete(cell);
    if (!renewing) void renewLoop();
  };

  return {
    holder,
    async take(cells) {
      const takes = await state.takeLeases(experimentId, cells, holder, leaseMs, timer.now());
      const out: boolean[] = [];
      for (const [i, t] of takes.entries()) {
        let ok = t.ok;
        if (!t.ok && await holderDead(t.holder, holder, processes)) {
          await state.breakLease(experimentId, cells[i], t.holder.owner);
          [{ ok }] = await state.takeLeases(experimentId, [cells[i]], holder, leaseMs, timer.now());
        }
        if (ok) hold(cells[i]);
        out.push(ok);
      }
      return out;
    },
    async heldByOther(cell) {
      const lease = await state.leaseOf(experimentId, cell);
      return !!lease && lease.owner !== holder.owner && lease.until > timer.now() &&
        !(await holderDead(lease, holder, processes));
    },
    lost: (cell) => lost.has(cell),
    handOver(cell) {
      held.delete(cell);
    },
    async release(cells) {
      for (const c of cells) {
        held.delete(c);
        lost.delete(c);
      }
      if (cells.length === 0) return;
      await state.releaseLeases(experimentId, cells, holder.owner).catch(() => {});
    },
    get held() {
      return held.size;
    },
    close() {
      closed.abort();
    },
  };
}
