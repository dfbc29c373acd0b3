/**
 * The state store port: what the engine and the ops keep about experiments (their
 * definitions, attempt records one per try plus the latest per cell, scorecards), cell
 * leases, promotions and jobs. Implemented by the embedded home's Deno KV store
 * (adapters/store/kv/) and by a memory store (adapters/store/memory/); both pass the
 * contract suite of tests/ports/state_store_contract.ts, which says what every
 * implementation must do.
 *
 * Records are not tied to leases: a record is accepted once per try number of its cell
 * (`putAttempt` says false to a second writer of the same try), whoever holds the lease.
 */
import type { JobRecord } from "../jobs.ts";
export type { JobRecord } from "../jobs.ts";
import type { AttemptRecord, TrustTier } from "../bench/records.ts";
import type { BlobStore } from "./blob_store.ts";
import type { CellLease, CellLeaseOps, LeaseTake } from "./cell_lease.ts";
import type { DeployRecords } from "./deploy_records.ts";
export type { DeployRecords } from "./deploy_records.ts";
export type { CellLease, CellLeaseOps, LeaseTake } from "./cell_lease.ts";

/** What the home keeps about one experiment (its definition and where it ran). */
export interface ExperimentMeta {
  id: string;
  /** Slug of the room the experiment ran in. */
  room: string;
  bundleName: string;
  bundleId: string;
  /** ISO time the experiment was first recorded. */
  createdAt: string;
  /** Number of cells (candidate × case × repetition). */
  cells: number;
  /** The experiment's definition (plain JSON), whose content id is `id`. */
  definition: Record<string, unknown>;
  /**
   * The blob id of the bundle's file manifest (JSON: path → blob id), kept where machines
   * without the room read the experiment (a shared store); absent on the embedded home.
   */
  bundleFiles?: string;
}

/** A bundle content id promoted on this host (trust tier `room`). */
export interface Promotion {
  room: string;
  name: string;
  at: string;
}

/** The home's records, one cell at a time and (StateBatches) many at once. */
export interface StateStore extends StateBatches, CellLeaseOps {
  /** Records an experiment; keeps the first `createdAt` when it is already known. */
  putExperiment(meta: ExperimentMeta): Promise<ExperimentMeta>;
  getExperiment(id: string): Promise<ExperimentMeta | null>;
  /** Every experiment, oldest first; only those of `room` when given. */
  listExperiments(room?: string): Promise<ExperimentMeta[]>;
  /**
   * Commits one attempt record atomically, as the cell's latest record and in its history.
   * Returns false (and writes nothing) when the cell already holds a try numbered
   * `record.tryNo`: another process got there first.
   */
  putAttempt(record: AttemptRecord): Promise<boolean>;
  /** The latest record of one cell (`cellKey(candidate, caseId, repetition)`), or null. */
  cellRecord(experimentId: string, cell: string): Promise<AttemptRecord | null>;
  /** The cell's lease, or null when none (an expired one is still returned until removed). */
  /**
   * Removes the lease of `owner` on a cell whatever its time left (its holder is known to
   * be dead); false when the cell's lease is not that owner's any more.
   */
  breakLease(experimentId: string, cell: string, owner: string): Promise<boolean>;
  leaseOf(experimentId: string, cell: string): Promise<CellLease | null>;
  /** The latest record of every cell of an experiment that has one, in key order. */
  cellRecords(experimentId: string): Promise<AttemptRecord[]>;
  /** Every try of every cell of an experiment, in key order. */
  attemptHistory(experimentId: string): Promise<AttemptRecord[]>;
  /** cellRecords() a page at a time, without holding them (in key order, as cellRecords). */
  streamCellRecords(experimentId: string): AsyncIterable<AttemptRecord>;
  /** attemptHistory() a page at a time: the tries of one cell come one after another. */
  streamAttemptHistory(experimentId: string): AsyncIterable<AttemptRecord>;
  putScorecard(experimentId: string, scorecard: unknown): Promise<void>;
  getScorecard(experimentId: string): Promise<unknown | null>;
  /** The promotion of a bundle content id on this host, or null. */
  promotion(bundleId: string): Promise<Promotion | null>;
  /**
   * Records a promotion unless the content id is promoted already (atomically: of two
   * processes promoting at once, the first record stays). Returns the record that holds.
   */
  putPromotion(bundleId: string, promotion: Promotion): Promise<Promotion>;
  putJob(job: JobRecord): Promise<void>;
  getJob(id: string): Promise<JobRecord | null>;
  /** Every job, newest first; only those of `room` when given. */
  listJobs(room?: string): Promise<JobRecord[]>;
  /** Asks the process running a job to stop it (kept apart from the record it writes). */
  requestJobCancel(id: string): Promise<void>;
  jobCancelRequested(id: string): Promise<boolean>;
  /**
   * A token that changes whenever a record of the room changes (an experiment, an attempt,
   * a scorecard, a job and its progress), in any process on the home: what a resource
   * subscription polls. Room commits are not in it (the room's head says those).
   */
  roomVersion(room: string): Promise<string>;
  /** Runs, reviews and schedules; absent on a store that keeps none yet (PostgreSQL). */
  readonly deploy?: DeployRecords;
  close(): void;
}

/** The trust tier of a room bundle's verifier: `room` when promoted here, else `ad-hoc`. */
export async function trustOf(state: StateStore, bundleId: string): Promise<TrustTier> {
  return (await state.promotion(bundleId)) ? "room" : "ad-hoc";
}

/** A finished attempt to commit: its record, and the small blobs it refers to. */
export interface AttemptCommit {
  record: AttemptRecord;
  /**
   * Blobs by id (the evidence), each at most SMALL_BLOB_BYTES, stored in KV with the record
   * (in the same commit, so the record never refers to a blob that is not there); the
   * store's `blobs` reads them.
   */
  blobs?: ReadonlyMap<string, Uint8Array>;
}

/** The largest blob stored in KV with its record (a KV value holds at most 64 KiB). */
export const SMALL_BLOB_BYTES = 32 * 1024;

/** The state store's operations on many cells at once. */
export interface StateBatches {
  /**
   * Commits finished attempts (of one experiment or several), in groups of one atomic
   * commit each, with the leases `leaseOwner` holds on their cells released in the same
   * commit. Each record as putAttempt: false (that one not written) when its try number is
   * already claimed; the others are written all the same.
   */
  putAttempts(commits: AttemptCommit[], leaseOwner?: string): Promise<boolean[]>;
  /** The latest records of several cells (null for a cell without one), in their order. */
  cellRecordsOf(experimentId: string, cells: string[]): Promise<(AttemptRecord | null)[]>;
  /** takeLease for several cells at once (few commits), in their order. */
  takeLeases(
    experimentId: string,
    cells: string[],
    holder: { pid: number; host: string; owner: string },
    ms: number,
    now?: number,
  ): Promise<LeaseTake[]>;
  /** renewLease for several cells at once, in their order. */
  renewLeases(
    experimentId: string,
    cells: string[],
    owner: string,
    ms: number,
    now?: number,
  ): Promise<boolean[]>;
  /** releaseLease for several cells at once. */
  releaseLeases(experimentId: string, cells: string[], owner: string): Promise<void>;
  /**
   * The home's blobs as readers see them: the small ones stored in KV with their records
   * (putAttempts), then those of the blob store the state store was opened on (where
   * `put` writes).
   */
  readonly blobs: BlobStore;
}
