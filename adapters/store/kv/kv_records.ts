/**
 * The state store's records in KV, one at a time: experiments, attempt records (each try,
 * and the latest per cell, in one atomic commit), scorecards, promotions and jobs. A write
 * moves its room's version, which resource subscriptions watch.
 */
import type { JobRecord } from "../../../core/jobs.ts";
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import type { ExperimentMeta, Promotion } from "../../../core/ports/state_store.ts";
import {
  decode,
  encode,
  experimentRoom,
  get,
  type KvValues,
  list,
  retryLocked,
  type Stored,
  touch,
} from "./kv_values.ts";

/** Stores an experiment's meta; a meta stored before keeps its createdAt. */
export async function putExperiment(s: KvValues, meta: ExperimentMeta): Promise<ExperimentMeta> {
  const key = ["experiment", meta.id];
  for (;;) {
    const existing = await retryLocked(s, () => s.kv.get<Stored>(key));
    const old = await decode<ExperimentMeta>(s, existing.value);
    const next = old ? { ...meta, createdAt: old.createdAt } : meta;
    const stored = await encode(s, next);
    const res = await retryLocked(s, () => s.kv.atomic().check(existing).set(key, stored).commit());
    if (res.ok) {
      await touch(s, next.room);
      return next;
    }
  }
}

/** The experiments (of one room), oldest first. */
export async function listExperiments(s: KvValues, room?: string): Promise<ExperimentMeta[]> {
  const all = await list<ExperimentMeta>(s, ["experiment"]);
  return all
    .filter((m) => room === undefined || m.room === room)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}

/** Commits one try of a cell and makes it the cell's latest; false when that try exists. */
export async function putAttempt(s: KvValues, record: AttemptRecord): Promise<boolean> {
  const cell = cellKey(record.candidate, record.caseId, record.repetition);
  const latestKey = ["cell", record.experimentId, cell];
  const tryKey = ["try", record.experimentId, cell, record.tryNo];
  const stored = await encode(s, record);
  // A try number is claimed once: a writer derives it from the latest record it read,
  // so a later try of the cell can only exist once this one does.
  const res = await retryLocked(
    s,
    () =>
      s.kv.atomic().check({ key: tryKey, versionstamp: null }).set(latestKey, stored)
        .set(tryKey, stored).commit(),
  );
  if (res.ok) await touch(s, await experimentRoom(s, record.experimentId));
  return res.ok;
}

/** The promotion of a bundle, written once: the first promotion stored wins. */
export async function putPromotion(
  s: KvValues,
  bundleId: string,
  p: Promotion,
): Promise<Promotion> {
  const key = ["promotion", bundleId];
  const res = await retryLocked(
    s,
    async () =>
      s.kv.atomic().check({ key, versionstamp: null }).set(key, await encode(s, p)).commit(),
  );
  return res.ok ? p : (await get<Promotion>(s, key))!;
}

/** The jobs (of one room), newest first. */
export async function listJobs(s: KvValues, room?: string): Promise<JobRecord[]> {
  const all = await list<JobRecord>(s, ["job"]);
  return all
    .filter((j) => room === undefined || j.room === room)
    .sort((a, b) => (a.startedAt > b.startedAt ? -1 : a.startedAt < b.startedAt ? 1 : 0));
}
