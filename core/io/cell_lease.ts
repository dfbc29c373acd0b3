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
