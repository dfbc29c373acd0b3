/**
 * The process table port: who this process is, and whether another process of this host
 * still runs. Tells a crashed holder (kill -9) of cell leases, worlds or jobs from a live
 * one. Implemented by adapters/system/process_alive.ts.
 */

/** A process of a host. */
export interface ProcessId {
  pid: number;
  host: string;
}

export interface ProcessTable {
  /** This process. */
  self(): ProcessId;
  /**
   * True when process `pid` of this host runs (also as another user), false when it ended
   * or is a zombie. When it cannot tell it says true: nothing of a live process is taken.
   */
  alive(pid: number): Promise<boolean>;
}
