/** Cell leases as the state store keeps them (`["lease", experiment, cell]`). */

/** Who runs a cell now: a process on a host, until a time (ms since the epoch). */
export interface CellLease {
  pid: number;
  host: string;
  /** The run holding it (several runs may share one process). */
  owner: string;
  until: number;
}

/** The outcome of asking for a cell's lease: taken, or held by `holder` (alive until `until`). */
export type LeaseTake = { ok: true; lease: CellLease } | { ok: false; holder: CellLease };

/** One cell's lease operations (the state store's; batches fall back to them). */
export interface CellLeaseOps {
  /**
   * Takes a cell's lease for `ms` (check-and-set): refused while another owner's lease has
   * not reached its `until`; an expired one (its holder died) is taken over. Taking a lease
   * `holder.owner` already has renews it.
   */
  takeLease(
    experimentId: string,
    cell: string,
    holder: { pid: number; host: string; owner: string },
    ms: number,
    /** The caller's time (ms since the epoch); default the system's. */
    now?: number,
  ): Promise<LeaseTake>;
  /** Extends `owner`'s lease by `ms` from `now` (default the system's time); false when it no longer holds it. */
  renewLease(
    experimentId: string,
    cell: string,
    owner: string,
    ms: number,
    now?: number,
  ): Promise<boolean>;
  /** Gives up `owner`'s lease on a cell (nothing when another holds it). */
  releaseLease(experimentId: string, cell: string, owner: string): Promise<void>;
}
