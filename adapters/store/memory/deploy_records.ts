/**
 * The deploy records (core/ports/deploy_records.ts) in memory, kept as JSON as the memory
 * state store keeps its records. Needs no permission.
 */
import type { DeployRecords } from "../../../core/ports/deploy_records.ts";
import type { PersonDecision, ReviewRecord, RunRecord } from "../../../core/review/records.ts";
import {
  type ScheduleRecord,
  withCancel,
  withSlotClaimed,
} from "../../../core/schedule/records.ts";

const load = <T>(s: string | undefined): T | null => s === undefined ? null : JSON.parse(s) as T;

/** A fresh, empty set of deploy records; `touch` marks a change of a room's records. */
export function memoryDeployRecords(touch: (room: string) => void = () => {}): DeployRecords {
  const runs = new Map<string, string>();
  const reviews = new Map<string, string>();
  const decisions = new Map<string, string>();
  const schedules = new Map<string, string>();
  const once = (m: Map<string, string>, id: string, v: unknown) => {
    if (m.has(id)) return Promise.resolve(false);
    m.set(id, JSON.stringify(v));
    return Promise.resolve(true);
  };
  const values = <T>(m: Map<string, string>) =>
    [...m.keys()].sort().map((k) => JSON.parse(m.get(k)!) as T);
  const update = (id: string, f: (s: ScheduleRecord) => ScheduleRecord | null) => {
    const s = load<ScheduleRecord>(schedules.get(id));
    const next = s && f(s);
    if (next) schedules.set(id, JSON.stringify(next));
    return Promise.resolve(Boolean(next));
  };
  return {
    putRun(run) {
      runs.set(run.id, JSON.stringify(run));
      touch(run.room);
      return Promise.resolve();
    },
    getRun: (id) => Promise.resolve(load<RunRecord>(runs.get(id))),
    listRuns: (room) =>
      Promise.resolve(
        values<RunRecord>(runs)
          .filter((r) => room === undefined || r.room === room)
          .sort((a, b) => a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0),
      ),
    putReview: async (r) => {
      const ok = await once(reviews, r.id, r);
      if (ok) touch(r.room);
      return ok;
    },
    getReview: (id) => Promise.resolve(load<ReviewRecord>(reviews.get(id))),
    listReviews: () =>
      Promise.resolve(
        values<ReviewRecord>(reviews).sort((a, b) => a.at < b.at ? -1 : a.at > b.at ? 1 : 0),
      ),
    putDecision: (d) => once(decisions, d.review, d),
    getDecision: (id) => Promise.resolve(load<PersonDecision>(decisions.get(id))),
    createSchedule: (s) => once(schedules, s.id, s),
    getSchedule: (id) => Promise.resolve(load<ScheduleRecord>(schedules.get(id))),
    listSchedules: () => Promise.resolve(values<ScheduleRecord>(schedules)),
    claimSlot: (id, slot, run) => update(id, (s) => withSlotClaimed(s, slot, run)),
    cancelSchedule: (id, at) => update(id, (s) => withCancel(s, at)),
  };
}
