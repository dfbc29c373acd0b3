/**
 * The deploy records (core/ports/deploy_records.ts) in the home's Deno KV: `["run", id]`,
 * `["review", id]`, `["decision", review]`, `["schedule", id]`. Reviews, decisions and new
 * schedules are written once (`check` of an absent key); a schedule's slot is claimed by a
 * check-and-set of its record, so of two processes ticking at once one starts the run.
 *
 * Permissions: those of the KV store it shares (state_store.ts).
 */
import type { DeployRecords } from "../../../core/ports/deploy_records.ts";
import type { PersonDecision, ReviewRecord, RunRecord } from "../../../core/review/records.ts";
import {
  type ScheduleRecord,
  withCancel,
  withSlotClaimed,
} from "../../../core/schedule/records.ts";

/** What the KV state store lends its deploy records. */
export interface DeployDeps {
  kv: Deno.Kv;
  retryLocked<T>(f: () => Promise<T>): Promise<T>;
  /** Marks a change of a room's records (a resource subscription sees it). */
  touch(room: string): Promise<void>;
}

async function listValues<T>(deps: DeployDeps, prefix: Deno.KvKey): Promise<T[]> {
  return await deps.retryLocked(async () => {
    const out: T[] = [];
    for await (const e of deps.kv.list<T>({ prefix }, { batchSize: 500 })) out.push(e.value);
    return out;
  });
}

async function createOnce(deps: DeployDeps, key: Deno.KvKey, value: unknown): Promise<boolean> {
  const res = await deps.retryLocked(() =>
    deps.kv.atomic().check({ key, versionstamp: null }).set(key, value).commit()
  );
  return res.ok;
}

/** Changes a schedule by check-and-set; `f` returns null to leave it as it is. */
async function updateSchedule(
  deps: DeployDeps,
  id: string,
  f: (s: ScheduleRecord) => ScheduleRecord | null,
): Promise<boolean> {
  const key = ["schedule", id];
  for (;;) {
    const entry = await deps.retryLocked(() => deps.kv.get<ScheduleRecord>(key));
    if (!entry.value) return false;
    const next = f(entry.value);
    if (!next) return false;
    const res = await deps.retryLocked(() => deps.kv.atomic().check(entry).set(key, next).commit());
    if (res.ok) return true;
  }
}

const byStart = (a: RunRecord, b: RunRecord) =>
  a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.id < b.id ? -1 : 1;

/** The deploy records on a KV database (records are small: stored inline). */
export function kvDeployRecords(deps: DeployDeps): DeployRecords {
  const { kv, retryLocked } = deps;
  const get = async <T>(key: Deno.KvKey) => (await retryLocked(() => kv.get<T>(key))).value;
  return {
    async putRun(run) {
      await retryLocked(() => kv.set(["run", run.id], run));
      await deps.touch(run.room);
    },
    getRun: (id) => get<RunRecord>(["run", id]),
    async listRuns(room) {
      const all = await listValues<RunRecord>(deps, ["run"]);
      return all.filter((r) => room === undefined || r.room === room).sort(byStart);
    },
    async putReview(review) {
      const ok = await createOnce(deps, ["review", review.id], review);
      if (ok) await deps.touch(review.room);
      return ok;
    },
    getReview: (id) => get<ReviewRecord>(["review", id]),
    async listReviews() {
      const all = await listValues<ReviewRecord>(deps, ["review"]);
      return all.sort((a, b) => a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : 1);
    },
    putDecision: (d) => createOnce(deps, ["decision", d.review], d),
    getDecision: (review) => get<PersonDecision>(["decision", review]),
    createSchedule: (s) => createOnce(deps, ["schedule", s.id], s),
    getSchedule: (id) => get<ScheduleRecord>(["schedule", id]),
    listSchedules: () => listValues<ScheduleRecord>(deps, ["schedule"]),
    claimSlot: (id, slot, run) => updateSchedule(deps, id, (s) => withSlotClaimed(s, slot, run)),
    cancelSchedule: (id, at) => updateSchedule(deps, id, (s) => withCancel(s, at)),
  };
}
