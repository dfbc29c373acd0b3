/**
 * The PostgreSQL store's schema, as versioned migrations that dvergr applies itself: every
 * command that opens the store brings an older schema up to date (`dvergr store migrate`
 * does only that), and a schema newer than this dvergr knows is refused rather than
 * written with rules it does not know. Migrations run in one transaction under an advisory
 * lock, so workers starting together migrate once.
 */
import { DvergrError } from "../../../core/errors.ts";
import type { Sql } from "./connect.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, in order. Never edit one that has shipped: add the next. */
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "experiments, queue, leases, records, blobs, jobs, workers",
    sql: `
      -- Values are JSON as text: read back byte for byte as written (jsonb would reorder
      -- keys, and reports list checks in their order).
      create table dvergr_experiments (
        id text primary key,
        room text not null,
        created_at text not null,
        meta text not null
      );
      -- Experiments open to workers (benchmark --enqueue): what a worker needs to run them.
      create table dvergr_queue (
        experiment text primary key references dvergr_experiments (id),
        request text not null,
        state text not null default 'open',
        enqueued_at timestamptz not null default now()
      );
      -- A cell's lease: who runs it, until when (ms since the epoch, the holder's clock).
      create table dvergr_leases (
        experiment text not null,
        cell text collate "C" not null,
        owner text not null,
        pid integer not null,
        host text not null,
        until_ms bigint not null,
        primary key (experiment, cell)
      );
      -- Every try of every cell; a cell's latest record is its highest try.
      create table dvergr_records (
        experiment text not null,
        cell text collate "C" not null,
        try integer not null,
        record text not null,
        -- The run that committed it (a worker's owner id), for progress by worker.
        owner text,
        primary key (experiment, cell, try)
      );
      -- Content-addressed (SHA-256, hex): evidence and bundle files.
      create table dvergr_blobs (
        id text primary key,
        bytes bytea not null
      );
      create table dvergr_scorecards (
        experiment text primary key,
        scorecard text not null
      );
      create table dvergr_promotions (
        bundle text primary key,
        promotion text not null
      );
      create table dvergr_jobs (
        id text primary key,
        room text,
        started_at text not null,
        job text not null
      );
      create table dvergr_job_cancels (
        id text primary key
      );
      -- Moves whenever a record of the room changes (what MCP subscriptions poll).
      create table dvergr_room_versions (
        room text primary key,
        version bigint not null default 0
      );
      create table dvergr_workers (
        id text primary key,
        host text not null,
        pid integer not null,
        started_at timestamptz not null default now(),
        seen_at timestamptz not null default now(),
        state text not null default 'running'
      );
    `,
  },
  {
    version: 2,
    name: "runs, reviews, decisions, schedules",
    sql: `
      -- The deploy records (core/ports/deploy_records.ts), JSON as text as above. Since this
      -- version dvergr keeps dvergr_leases.until_ms on the server's clock (server_clock.ts).
      create table dvergr_runs (
        id text primary key,
        room text not null,
        started_at text not null,
        run text not null
      );
      create index dvergr_runs_by_room on dvergr_runs (room, started_at, id);
      -- Reviews and decisions are written once; a review's run is its id.
      create table dvergr_reviews (
        id text primary key,
        at text not null,
        review text not null
      );
      create table dvergr_decisions (
        review text primary key,
        decision text not null
      );
      -- A schedule's record changes only as a whole, under a row lock (its slot, its cancel).
      create table dvergr_schedules (
        id text primary key,
        schedule text not null
      );
    `,
  },
  {
    version: 3,
    name: "settings (where the blobs are)",
    sql: `
      -- The store's own settings by name: "blobs" is the s3://BUCKET/PREFIX its blobs are
      -- kept in (home.ts), so a command without it is refused instead of missing them.
      create table dvergr_settings (
        name text primary key,
        value text not null
      );
    `,
  },
];

/** The newest schema this dvergr knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Any constant will do, as long as it is dvergr's alone (it reads "dvergr" in ASCII). */
const MIGRATION_LOCK = 0x6476657267;

export interface MigrationResult {
  /** The schema's version before. 0: the database held no dvergr schema. */
  from: number;
  to: number;
  applied: { version: number; name: string }[];
}

/** The schema's version in the store: 0 when it has none. */
export async function schemaVersion(sql: Sql): Promise<number> {
  const [{ exists }] = await sql`select to_regclass('dvergr_schema') is not null as exists`;
  if (!exists) return 0;
  const [{ v }] = await sql`select coalesce(max(version), 0)::int as v from dvergr_schema`;
  return v as number;
}

function tooNew(found: number): DvergrError {
  return new DvergrError(
    "CONFLICT",
    `Cannot use the store: its schema is at version ${found}, newer than this dvergr knows (${SCHEMA_VERSION})`,
    { hint: "Upgrade dvergr on this machine to the version that migrated the store" },
  );
}

/**
 * Brings the store's schema to SCHEMA_VERSION (nothing when it is there already); refuses a
 * newer one. Safe to call from many processes at once.
 */
export async function migrate(sql: Sql): Promise<MigrationResult> {
  return await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx.unsafe(`create table if not exists dvergr_schema (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`);
    const [{ v }] = await tx`select coalesce(max(version), 0)::int as v from dvergr_schema`;
    const from = v as number;
    if (from > SCHEMA_VERSION) throw tooNew(from);
    const applied: { version: number; name: string }[] = [];
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
      await tx.unsafe(m.sql);
      await tx`insert into dvergr_schema (version, name) values (${m.version}, ${m.name})`;
      applied.push({ version: m.version, name: m.name });
    }
    return { from, to: Math.max(from, SCHEMA_VERSION), applied };
  }) as MigrationResult;
}
