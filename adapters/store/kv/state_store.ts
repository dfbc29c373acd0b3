/**
 * The home's records in Deno KV (`state.kv`): experiments, attempt records (one per try,
 * plus the latest per cell), scorecards and promotions. Every attempt is committed in one
 * atomic operation, so a process killed at any moment leaves each cell either at its old
 * record or at its new one, never half-written and never doubled.
 *
 * KV values are limited to 64 KiB: a value whose JSON is larger is stored as a blob and the
 * KV entry holds its id. Commits that meet `database is locked` (several processes on one
 * home) are retried with backoff.
 *
 * Cell leases (`["lease", experiment, cell]`) let several processes share one experiment's
 * cells: a lease is taken and renewed by check-and-set and expires by itself (`expireIn`,
 * and its `until` time, which is what counts), so a killed holder's cells are freed.
 *
 * The parts: kv_values.ts (the open database, stored values, the lock retry), kv_records.ts,
 * kv_leases.ts, state_batches.ts (many cells at once), state_streams.ts and deploy_records.ts.
 *
 * Permissions: --allow-read and --allow-write on the KV file; `"unstable": ["kv"]`.
 */
import type { JobRecord } from "../../../core/jobs.ts";
import type { AttemptRecord } from "../../../core/bench/records.ts";
import type { BlobStore } from "../../../core/ports/blob_store.ts";
import type {
  ExperimentMeta,
  Promotion,
  StateBatches,
  StateStore,
} from "../../../core/ports/state_store.ts";
import { batchMethods } from "./state_batches.ts";
import { streamMethods } from "./state_streams.ts";
import { kvDeployRecords } from "./deploy_records.ts";
import { leaseMethods } from "./kv_leases.ts";
import {
  listExperiments,
  listJobs,
  putAttempt,
  putExperiment,
  putPromotion,
} from "./kv_records.ts";
import {
  decode,
  encodeSized,
  experimentRoom,
  get,
  type KvValues,
  list,
  openKvValues,
  retryLocked,
  set,
  type Stored,
  touch,
} from "./kv_values.ts";

/**
 * Opens the state store on a Deno KV database: a file path, or ":memory:" for a store that
 * lives as long as the process (tests). Large values spill into `blobs`.
 */
export async function openKvStateStore(path: string, blobs: BlobStore): Promise<StateStore> {
  const s = await openKvValues(path, blobs);
  const retry = <T>(f: () => Promise<T>) => retryLocked(s, f);
  const decodeAny = <T>(v: unknown) => decode<T>(s, v as Stored | null);
  const one: Omit<StateStore, keyof StateBatches> = {
    ...recordMethods(s),
    ...leaseMethods(s),
    close: () => s.kv.close(),
    ...streamMethods({ kv: s.kv, decode: decodeAny, retryLocked: retry }),
  };
  const batches = batchMethods({
    kv: s.kv,
    files: blobs,
    encodeSized: (value) => encodeSized(s, value),
    decode: decodeAny,
    retryLocked: retry,
    experimentRoom: (id) => experimentRoom(s, id),
    one,
  });
  const deploy = kvDeployRecords({ kv: s.kv, retryLocked: retry, touch: (r) => touch(s, r) });
  return { ...one, ...batches, deploy };
}

/** The store's one-at-a-time record methods (kv_records.ts, and plain gets and sets). */
function recordMethods(s: KvValues) {
  return {
    putExperiment: (meta: ExperimentMeta) => putExperiment(s, meta),
    getExperiment: (id: string) => get<ExperimentMeta>(s, ["experiment", id]),
    listExperiments: (room?: string) => listExperiments(s, room),
    putAttempt: (record: AttemptRecord) => putAttempt(s, record),
    cellRecord: (id: string, cell: string) => get<AttemptRecord>(s, ["cell", id, cell]),
    cellRecords: (id: string) => list<AttemptRecord>(s, ["cell", id]),
    attemptHistory: (id: string) => list<AttemptRecord>(s, ["try", id]),
    putScorecard: async (id: string, scorecard: unknown) => {
      await set(s, ["scorecard", id], scorecard);
      await touch(s, await experimentRoom(s, id));
    },
    getScorecard: (id: string) => get<unknown>(s, ["scorecard", id]),
    promotion: (bundleId: string) => get<Promotion>(s, ["promotion", bundleId]),
    putPromotion: (bundleId: string, p: Promotion) => putPromotion(s, bundleId, p),
    putJob: async (job: JobRecord) => {
      await set(s, ["job", job.id], job);
      await touch(s, job.room);
    },
    getJob: (id: string) => get<JobRecord>(s, ["job", id]),
    listJobs: (room?: string) => listJobs(s, room),
    requestJobCancel: (id: string) => set(s, ["job-cancel", id], true),
    jobCancelRequested: async (id: string) => (await get<boolean>(s, ["job-cancel", id])) === true,
    roomVersion: async (room: string) =>
      (await retryLocked(s, () => s.kv.get(["room-version", room]))).versionstamp ?? "none",
  };
}
