/**
 * The state store on PostgreSQL (`--store postgres://…`): the same records, leases, jobs and
 * promotions as the home's Deno KV store, shared by any number of processes on any number
 * of machines. Values are JSON as text (read back as written); large evidence and bundle
 * files are blobs in the same database (blob_store.ts), or in an S3-compatible object store
 * when one is given (adapters/store/s3/). Opening the store migrates its
 * schema (migrations.ts). Permissions: --allow-net to the server.
 */
import type { JobRecord } from "../../../core/jobs.ts";

import type { ExperimentMeta, Promotion, StateStore } from "../../../core/ports/state_store.ts";
import type { BlobStore } from "../../../core/ports/blob_store.ts";
import { type ConnectOptions, connectPostgres, type Sql } from "./connect.ts";
import { migrate } from "./migrations.ts";
import { postgresBlobStore } from "./blob_store.ts";
import * as leases from "./leases.ts";
import { serverClock } from "./server_clock.ts";
import { one, postgresDeployRecords } from "./deploy_records.ts";
import * as records from "./records.ts";

/** Marks a change of the rooms' records: their version moves (what subscriptions poll). */
async function touchRooms(sql: Sql, rooms: string[]): Promise<void> {
  if (rooms.length === 0) return;
  await sql`insert into dvergr_room_versions (room, version)
    select r, 1 from unnest(${rooms}::text[]) as r
    on conflict (room) do update set version = dvergr_room_versions.version + 1`;
}

/** Touches the rooms of `experiments` (an experiment's room never changes). */
async function touchExperiments(sql: Sql, experiments: string[]): Promise<void> {
  await sql`insert into dvergr_room_versions (room, version)
    select distinct room, 1 from dvergr_experiments where id = any(${experiments}::text[])
    on conflict (room) do update set version = dvergr_room_versions.version + 1`;
}

async function putExperiment(sql: Sql, meta: ExperimentMeta): Promise<ExperimentMeta> {
  return await sql.begin(async (tx) => {
    const rows = await tx`select meta from dvergr_experiments where id = ${meta.id} for update`;
    const old = rows.length > 0 ? JSON.parse(rows[0].meta) as ExperimentMeta : null;
    const next = old ? { ...meta, createdAt: old.createdAt } : meta;
    await tx`insert into dvergr_experiments (id, room, created_at, meta)
      values (${next.id}, ${next.room}, ${next.createdAt}, ${JSON.stringify(next)})
      on conflict (id) do update set room = excluded.room, meta = excluded.meta`;
    await touchRooms(tx as unknown as Sql, [next.room]);
    return next;
  }) as ExperimentMeta;
}

async function listExperiments(sql: Sql, room?: string): Promise<ExperimentMeta[]> {
  const rows = room === undefined
    ? await sql`select meta from dvergr_experiments order by created_at, id`
    : await sql`select meta from dvergr_experiments where room = ${room} order by created_at, id`;
  return rows.map((r) => JSON.parse(r.meta) as ExperimentMeta);
}

async function putPromotion(sql: Sql, bundle: string, p: Promotion): Promise<Promotion> {
  await sql`insert into dvergr_promotions (bundle, promotion) values (${bundle}, ${
    JSON.stringify(p)
  })
    on conflict (bundle) do nothing`;
  const rows = await sql`select promotion from dvergr_promotions where bundle = ${bundle}`;
  return JSON.parse(rows[0].promotion) as Promotion;
}

async function putJob(sql: Sql, job: JobRecord): Promise<void> {
  await sql`insert into dvergr_jobs (id, room, started_at, job)
    values (${job.id}, ${job.room}, ${job.startedAt}, ${JSON.stringify(job)})
    on conflict (id) do update set room = excluded.room, started_at = excluded.started_at,
      job = excluded.job`;
  if (job.room !== null) await touchRooms(sql, [job.room]);
}

async function listJobs(sql: Sql, room?: string): Promise<JobRecord[]> {
  const rows = room === undefined
    ? await sql`select job from dvergr_jobs order by started_at desc, id`
    : await sql`select job from dvergr_jobs where room = ${room}
        order by started_at desc, id`;
  return rows.map((r) => JSON.parse(r.job) as JobRecord);
}

/**
 * Blobs written to `objects`, read from it and else from the database's table: a store that
 * kept its blobs in the database before it was given a bucket still shows them.
 */
function readThrough(objects: BlobStore, table: BlobStore): BlobStore {
  return {
    put: (content) => objects.put(content),
    async get(id) {
      return await objects.get(id) ?? await table.get(id);
    },
    async has(id) {
      return await objects.has(id) || await table.has(id);
    },
  };
}

/**
 * The state store on an open pool whose schema is current. `clock` is this process's (the
 * one callers' lease times are on; tests give a skewed one); `objectStore` holds the blobs
 * instead of the database (every blob, the small ones committed with records too; those the
 * database held before are still read from it).
 */
export function postgresStateStore(
  sql: Sql,
  clock: () => number = Date.now,
  objectStore: BlobStore | null = null,
): StateStore {
  const blobs = objectStore === null
    ? postgresBlobStore(sql)
    : readThrough(objectStore, postgresBlobStore(sql));
  const server = serverClock(sql, clock);
  const commit = (commits: Parameters<StateStore["putAttempts"]>[0], owner?: string) =>
    records.putAttempts(sql, commits, owner, touchExperiments, objectStore);
  return {
    blobs,
    deploy: postgresDeployRecords(sql, (rooms) => touchRooms(sql, rooms)),
    putExperiment: (meta) => putExperiment(sql, meta),
    getExperiment: (id) => one(sql`select meta from dvergr_experiments where id = ${id}`, "meta"),
    listExperiments: (room) => listExperiments(sql, room),
    async putAttempt(record) {
      return (await commit([{ record }]))[0];
    },
    putAttempts: (commits, owner) => commit(commits, owner),
    cellRecord: (id, cell) => records.cellRecord(sql, id, cell),
    cellRecordsOf: (id, cells) => records.cellRecordsOf(sql, id, cells),
    cellRecords: (id) => records.collect(records.streamCellRecords(sql, id)),
    attemptHistory: (id) => records.collect(records.streamAttemptHistory(sql, id)),
    streamCellRecords: (id) => records.streamCellRecords(sql, id),
    streamAttemptHistory: (id) => records.streamAttemptHistory(sql, id),
    async takeLease(id, cell, holder, ms, now) {
      return (await leases.takeLeases(sql, server, id, [cell], holder, ms, now))[0];
    },
    takeLeases: (id, cells, holder, ms, now) =>
      leases.takeLeases(sql, server, id, cells, holder, ms, now),
    async renewLease(id, cell, owner, ms, now) {
      return (await leases.renewLeases(sql, server, id, [cell], owner, ms, now))[0];
    },
    renewLeases: (id, cells, owner, ms, now) =>
      leases.renewLeases(sql, server, id, cells, owner, ms, now),
    async releaseLease(id, cell, owner) {
      await leases.releaseLeases(sql, id, [cell], owner);
    },
    async releaseLeases(id, cells, owner) {
      await leases.releaseLeases(sql, id, cells, owner);
    },
    async breakLease(id, cell, owner) {
      return (await leases.releaseLeases(sql, id, [cell], owner)).has(cell);
    },
    leaseOf: (id, cell) => leases.leaseOf(sql, server, id, cell),
    async putScorecard(id, scorecard) {
      await sql`insert into dvergr_scorecards (experiment, scorecard)
        values (${id}, ${JSON.stringify(scorecard)})
        on conflict (experiment) do update set scorecard = excluded.scorecard`;
      await touchExperiments(sql, [id]);
    },
    getScorecard: (id) =>
      one(sql`select scorecard from dvergr_scorecards where experiment = ${id}`, "scorecard"),
    promotion: (bundle) =>
      one(sql`select promotion from dvergr_promotions where bundle = ${bundle}`, "promotion"),
    putPromotion: (bundle, p) => putPromotion(sql, bundle, p),
    putJob: (job) => putJob(sql, job),
    getJob: (id) => one(sql`select job from dvergr_jobs where id = ${id}`, "job"),
    listJobs: (room) => listJobs(sql, room),
    async requestJobCancel(id) {
      await sql`insert into dvergr_job_cancels (id) values (${id}) on conflict (id) do nothing`;
    },
    async jobCancelRequested(id) {
      return (await sql`select 1 from dvergr_job_cancels where id = ${id}`).length > 0;
    },
    async roomVersion(room) {
      const rows = await sql`select version from dvergr_room_versions where room = ${room}`;
      return rows.length === 0 ? "none" : String(rows[0].version);
    },
    close() {
      void sql.end({ timeout: 5 });
    },
  };
}

/** Connects to the store at `url`, migrates its schema, and opens the state store on it. */
export async function openPostgresStateStore(
  url: string,
  opts: ConnectOptions & { clock?: () => number; objectStore?: BlobStore } = {},
): Promise<StateStore> {
  const sql = await connectPostgres(url, opts);
  try {
    await migrate(sql);
  } catch (e) {
    await sql.end({ timeout: 1 });
    throw e;
  }
  return postgresStateStore(sql, opts.clock, opts.objectStore ?? null);
}
