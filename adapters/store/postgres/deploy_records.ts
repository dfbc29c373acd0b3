/**
 * The deploy records (core/ports/deploy_records.ts) in the PostgreSQL store: production runs,
 * reviews, people's decisions and schedules, shared by every machine on the store (so
 * `dvergr serve` or `tick` on several machines start each schedule's slot once). Values are
 * JSON as text. Reviews, decisions and new schedules are inserted once (`on conflict do
 * nothing`); a schedule changes under its row lock, so of two processes claiming one slot at
 * once exactly one gets it.
 *
 * Permissions: --allow-net to the server.
 */
import type { DeployRecords } from "../../../core/ports/deploy_records.ts";
import type { PersonDecision, ReviewRecord, RunRecord } from "../../../core/review/records.ts";
import {
  type ScheduleRecord,
  withCancel,
  withSlotClaimed,
} from "../../../core/schedule/records.ts";
import type { Sql } from "./connect.ts";

/** Changes a schedule under its row lock; `f` returns null to leave it as it is. */
async function updateSchedule(
  sql: Sql,
  id: string,
  f: (s: ScheduleRecord) => ScheduleRecord | null,
): Promise<boolean> {
  return await sql.begin(async (tx) => {
    const rows = await tx`select schedule from dvergr_schedules where id = ${id} for update`;
    if (rows.length === 0) return false;
    const next = f(JSON.parse(String(rows[0].schedule)) as ScheduleRecord);
    if (next === null) return false;
    await tx`update dvergr_schedules set schedule = ${JSON.stringify(next)} where id = ${id}`;
    return true;
  }) as boolean;
}

async function inserted(rows: PromiseLike<readonly unknown[]>): Promise<boolean> {
  return (await rows).length > 0;
}

/** The JSON text of `column` in each row, parsed. */
function parsed<T>(column: string) {
  return (rows: Record<string, unknown>[]): T[] => rows.map((r) => JSON.parse(String(r[column])));
}

/** The first row's `column` parsed as JSON, or null when there is no row (the store's reads). */
export async function one<T>(
  rows: Promise<Record<string, unknown>[]>,
  column: string,
): Promise<T | null> {
  return parsed<T>(column)(await rows)[0] ?? null;
}

/** The deploy records on `sql`; `touch` marks a change of a room's records (subscriptions). */
export function postgresDeployRecords(
  sql: Sql,
  touch: (rooms: string[]) => Promise<void>,
): DeployRecords {
  return {
    async putRun(run: RunRecord) {
      await sql`insert into dvergr_runs (id, room, started_at, run)
        values (${run.id}, ${run.room}, ${run.startedAt}, ${JSON.stringify(run)})
        on conflict (id) do update set room = excluded.room, started_at = excluded.started_at,
          run = excluded.run`;
      await touch([run.room]);
    },
    getRun: (id) => one(sql`select run from dvergr_runs where id = ${id}`, "run"),
    async listRuns(room) {
      const rows = room === undefined
        ? await sql`select run from dvergr_runs order by started_at, id`
        : await sql`select run from dvergr_runs where room = ${room} order by started_at, id`;
      return parsed<RunRecord>("run")(rows);
    },
    async putReview(review: ReviewRecord) {
      const ok = await inserted(sql`insert into dvergr_reviews (id, at, review)
        values (${review.id}, ${review.at}, ${JSON.stringify(review)})
        on conflict (id) do nothing returning id`);
      if (ok) await touch([review.room]);
      return ok;
    },
    getReview: (id) => one(sql`select review from dvergr_reviews where id = ${id}`, "review"),
    async listReviews() {
      return parsed<ReviewRecord>("review")(
        await sql`select review from dvergr_reviews order by at, id`,
      );
    },
    putDecision: (d: PersonDecision) =>
      inserted(sql`insert into dvergr_decisions (review, decision)
        values (${d.review}, ${JSON.stringify(d)})
        on conflict (review) do nothing returning review`),
    getDecision: (review) =>
      one(sql`select decision from dvergr_decisions where review = ${review}`, "decision"),
    createSchedule: (s: ScheduleRecord) =>
      inserted(
        sql`insert into dvergr_schedules (id, schedule) values (${s.id}, ${
          JSON.stringify(s)
        }) on conflict (id) do nothing returning id`,
      ),
    getSchedule: (id) =>
      one(sql`select schedule from dvergr_schedules where id = ${id}`, "schedule"),
    async listSchedules() {
      return parsed<ScheduleRecord>("schedule")(
        await sql`select schedule from dvergr_schedules order by id`,
      );
    },
    claimSlot: (id, slot, run) => updateSchedule(sql, id, (s) => withSlotClaimed(s, slot, run)),
    cancelSchedule: (id, at) => updateSchedule(sql, id, (s) => withCancel(s, at)),
  };
}
