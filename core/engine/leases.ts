/**
 * Cell leases for runs that share an experiment (two `dvergr benchmark`, an MCP job and a
 * CLI run on one home): a cell runs only under its lease, renewed while the attempt runs;
 * the lease of a holder known dead (a process of this host that no longer runs) is broken
 * at once, any other runs out by itself. Times are read from the run's timer.
 */
import type { Timer } from "../timer.ts";
import type { CellLease, StateStore } from "../io/state_store.ts";
import { processAlive } from "../io/process_alive.ts";

/** How long a cell's lease lasts unless renewed; a third of it between renewals. */
export const LEASE_MS = 30_000;

/** Who takes leases: this process on this host, one owner id per run. */
export interface LeaseHolder {
  pid: number;
  host: string;
  owner: string;
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

/** A new holder for one run of this process. */
export function newLeaseHolder(): LeaseHolder {
  return { pid: Deno.pid, host: hostName(), owner: crypto.randomUUID() };
}

/** The lease's holder is a process of this host that no longer runs (kill -9). */
export async function holderDead(lease: CellLease, self: LeaseHolder): Promise<boolean> {
  return lease.host === self.host && lease.pid !== self.pid && !(await processAlive(lease.pid));
}

/** One run's leases on one experiment's cells. */
export interface CellLeases {
  /** Takes the cell's lease (breaking a dead holder's); false when another holds it. */
  take(cell: string): Promise<boolean>;
  /** Whether another live holder's lease holds the cell now. */
  heldByOther(cell: string): Promise<boolean>;
  /** Renews the cell's lease every third of its time until the returned function is called. */
  keep(cell: string): () => void;
  release(cell: string): Promise<void>;
}

export function cellLeases(
  state: StateStore,
  experimentId: string,
  opts: { holder: LeaseHolder; leaseMs: number; timer: Timer },
): CellLeases {
  const { holder, leaseMs, timer } = opts;
  return {
    async take(cell) {
      let take = await state.takeLease(experimentId, cell, holder, leaseMs, timer.now());
      if (!take.ok && await holderDead(take.holder, holder)) {
        await state.breakLease(experimentId, cell, take.holder.owner);
        take = await state.takeLease(experimentId, cell, holder, leaseMs, timer.now());
      }
      return take.ok;
    },
    async heldByOther(cell) {
      const lease = await state.leaseOf(experimentId, cell);
      return !!lease && lease.owner !== holder.owner && lease.until > timer.now() &&
        !(await holderDead(lease, holder));
    },
    keep(cell) {
      const stop = new AbortController();
      void (async () => {
        while (!stop.signal.aborted) {
          await timer.sleep(Math.floor(leaseMs / 3), stop.signal);
          if (stop.signal.aborted) return;
          await state.renewLease(experimentId, cell, holder.owner, leaseMs, timer.now())
            .catch(() => {});
        }
      })();
      return () => stop.abort();
    },
    async release(cell) {
      await state.releaseLease(experimentId, cell, holder.owner).catch(() => {});
    },
  };
}
