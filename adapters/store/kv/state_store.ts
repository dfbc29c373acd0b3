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
 * Permissions: --allow-read and --allow-write on the KV file; `"unstable": ["kv"]`.
 */
import type { JobRecord } from "../../../core/jobs.ts";
import type { AttemptRecord } from "../../../core/bench/records.ts";
import { cellKey } from "../../../core/bench/records.ts";
import { type BlobStore, getJson, putJson } from "../../../core/ports/blob_store.ts";
import type { CellLease } from "../../../core/ports/cell_lease.ts";
import type {
  ExperimentMeta,
  Promotion,
  StateBatches,
  StateStore,
} from "../../../core/ports/state_store.ts";
import { storageProblem } from "../../files/os_error.ts";
import { batchMethods } from "./state_batches.ts";
import { streamMethods } from "./state_streams.ts";
import { kvDeployRecords } from "./deploy_records.ts";
/** Stored form of a value: inline, or the id of a blob holding its JSON. */
type Stored = { v: unknown } | { blob: string };

/** JSON longer than this (UTF-16 units) goes to a blob; V8 may spend 2 bytes per unit. */
const INLINE_LIMIT = 30_000;

function isLocked(e: unknown): boolean {
  return e instanceof Error && /database is locked|busy/i.test(e.message);
}

/**
 * Runs a KV operation again while another process holds the database's lock. A commit holds
 * it for a fraction of a millisecond, but a run of fast cells commits every few: waits that
 * double up to seconds let one process starve the other, so this looks again soon (2 ms,
 * growing to at most 100 ms, jittered) and gives up after about 10 s.
 */
async function retryLockedAt<T>(path: string, f: () => Promise<T>): Promise<T> {
  let delay = 2;
  let waited = 0;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      // A full or read-only file system: SQLite's words do not name the file, so say it here.
      if (!isLocked(e)) throw storageProblem(e, `the home's records "${path}"`);
      if (waited > 10_000) throw e;
      const ms = delay * (0.5 + Math.random());
      await new Promise((r) => setTimeout(r, ms));
      waited += ms;
      delay = Math.min(delay * 1.5, 100);
    }
  }
}

/**
 * Opens the state store on a Deno KV database: a file path, or ":memory:" for a store that
 * lives as long as the process (tests). Large values spill into `blobs`.
 */
export async function openKvStateStore(path: string, blobs: BlobStore): Promise<StateStore> {
  const retryLocked = <T>(f: () => Promise<T>) => retryLockedAt(path, f);
  const kv = await retryLocked(() => Deno.openKv(path));

  /** The stored form of a value, and the length of the JSON it stands for (its KV size). */
  async function encodeSized(value: unknown): Promise<{ stored: Stored; chars: number }> {
    const json = JSON.stringify(value);
    if (json.length <= INLINE_LIMIT) return { stored: { v: JSON.parse(json) }, chars: json.length };
    return { stored: { blob: await putJson(blobs, value) }, chars: 100 };
  }
  const encode = async (value: unknown): Promise<Stored> => (await encodeSized(value)).stored;

  async function decode<T>(stored: Stored | null | undefined): Promise<T | null> {
    if (!stored) return null;
    if ("v" in stored) return stored.v as T;
    const value = await getJson<T>(blobs, stored.blob);
    if (value === null) throw new Error(`State value refers to a missing blob ${stored.blob}`);
    return value;
  }

  async function get<T>(key: Deno.KvKey): Promise<T | null> {
    const entry = await retryLocked(() => kv.get<Stored>(key));
    return decode<T>(entry.value);
  }

  async function set(key: Deno.KvKey, value: unknown): Promise<void> {
    const stored = await encode(value);
    await retryLocked(() => kv.set(key, stored));
  }

  /** Rooms of experiments, as records name the experiment only (an experiment's room is fixed). */
  const roomOfExperiment = new Map<string, string>();
  async function experimentRoom(id: string): Promise<string | null> {
    const known = roomOfExperiment.get(id);
    if (known !== undefined) return known;
    const meta = await get<ExperimentMeta>(["experiment", id]);
    if (meta) roomOfExperiment.set(id, meta.room);
    return meta?.room ?? null;
  }
  /** Marks a change of the room's records (the value is irrelevant: its versionstamp moves). */
  async function touch(room: string | null): Promise<void> {
    if (room === null) return;
    await retryLocked(() => kv.set(["room-version", room], Date.now()));
  }

  async function list<T>(prefix: Deno.KvKey): Promise<T[]> {
    const entries = await retryLocked(async () => {
      const out: Deno.KvEntry<Stored>[] = [];
      for await (const e of kv.list<Stored>({ prefix }, { batchSize: 500 })) out.push(e);
      return out;
    });
    const values: T[] = [];
    for (const e of entries) {
      const v = await decode<T>(e.value);
      if (v !== null) values.push(v);
    }
    return values;
  }

  const one: Omit<StateStore, keyof StateBatches> = {
    async putExperiment(meta) {
      for (;;) {
        const key = ["experiment", meta.id];
        const existing = await retryLocked(() => kv.get<Stored>(key));
        const old = await decode<ExperimentMeta>(existing.value);
        const next = old ? { ...meta, createdAt: old.createdAt } : meta;
        const stored = await encode(next);
        const res = await retryLocked(() => kv.atomic().check(existing).set(key, stored).commit());
        if (res.ok) {
          await touch(next.room);
          return next;
        }
      }
    },
    getExperiment: (id) => get<ExperimentMeta>(["experiment", id]),
    async listExperiments(room) {
      const all = await list<ExperimentMeta>(["experiment"]);
      return all
        .filter((m) => room === undefined || m.room === room)
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
    },
    async putAttempt(record) {
      const cell = cellKey(record.candidate, record.caseId, record.repetition);
      const latestKey = ["cell", record.experimentId, cell];
      const tryKey = ["try", record.experimentId, cell, record.tryNo];
      const stored = await encode(record);
      // A try number is claimed once: a writer derives it from the latest record it read,
      // so a later try of the cell can only exist once this one does.
      const res = await retryLocked(() =>
        kv.atomic().check({ key: tryKey, versionstamp: null }).set(latestKey, stored)
          .set(tryKey, stored).commit()
      );
      if (res.ok) await touch(await experimentRoom(record.experimentId));
      return res.ok;
    },
    cellRecord: (id, cell) => get<AttemptRecord>(["cell", id, cell]),
    async takeLease(id, cell, holder, ms, at) {
      const key = ["lease", id, cell];
      for (;;) {
        const entry = await retryLocked(() => kv.get<CellLease>(key));
        const now = at ?? Date.now();
        const held = entry.value;
        if (held && held.owner !== holder.owner && held.until > now) {
          return { ok: false, holder: held };
        }
        const lease: CellLease = { ...holder, until: now + ms };
        const res = await retryLocked(() =>
          kv.atomic().check(entry).set(key, lease, { expireIn: ms }).commit()
        );
        if (res.ok) return { ok: true, lease };
        // Another process changed the lease between the read and the commit: look again.
      }
    },
    async renewLease(id, cell, owner, ms, at) {
      const key = ["lease", id, cell];
      const entry = await retryLocked(() => kv.get<CellLease>(key));
      if (entry.value?.owner !== owner) return false;
      const lease: CellLease = { ...entry.value, until: (at ?? Date.now()) + ms };
      const res = await retryLocked(() =>
        kv.atomic().check(entry).set(key, lease, { expireIn: ms }).commit()
      );
      return res.ok;
    },
    async releaseLease(id, cell, owner) {
      const key = ["lease", id, cell];
      for (;;) {
        const entry = await retryLocked(() => kv.get<CellLease>(key));
        if (entry.value?.owner !== owner) return;
        const res = await retryLocked(() => kv.atomic().check(entry).delete(key).commit());
        if (res.ok) return;
      }
    },
    async breakLease(id, cell, owner) {
      const key = ["lease", id, cell];
      const entry = await retryLocked(() => kv.get<CellLease>(key));
      if (entry.value?.owner !== owner) return false;
      const res = await retryLocked(() => kv.atomic().check(entry).delete(key).commit());
      return res.ok;
    },
    async leaseOf(id, cell) {
      return (await retryLocked(() => kv.get<CellLease>(["lease", id, cell]))).value;
    },
    cellRecords: (id) => list<AttemptRecord>(["cell", id]),
    attemptHistory: (id) => list<AttemptRecord>(["try", id]),
    async putScorecard(id, scorecard) {
      await set(["scorecard", id], scorecard);
      await touch(await experimentRoom(id));
    },
    getScorecard: (id) => get<unknown>(["scorecard", id]),
    promotion: (bundleId) => get<Promotion>(["promotion", bundleId]),
    async putPromotion(bundleId, p) {
      const key = ["promotion", bundleId];
      const res = await retryLocked(async () =>
        kv.atomic().check({ key, versionstamp: null }).set(key, await encode(p)).commit()
      );
      return res.ok ? p : (await get<Promotion>(key))!;
    },
    async putJob(job) {
      await set(["job", job.id], job);
      await touch(job.room);
    },
    getJob: (id) => get<JobRecord>(["job", id]),
    async listJobs(room) {
      const all = await list<JobRecord>(["job"]);
      return all
        .filter((j) => room === undefined || j.room === room)
        .sort((a, b) => (a.startedAt > b.startedAt ? -1 : a.startedAt < b.startedAt ? 1 : 0));
    },
    requestJobCancel: (id) => set(["job-cancel", id], true),
    async jobCancelRequested(id) {
      return (await get<boolean>(["job-cancel", id])) === true;
    },
    async roomVersion(room) {
      return (await retryLocked(() => kv.get(["room-version", room]))).versionstamp ?? "none";
    },
    close: () => kv.close(),
    ...streamMethods({ kv, decode: (v) => decode(v as Stored | null), retryLocked }),
  };
  const batches = batchMethods({
    kv,
    files: blobs,
    encodeSized,
    decode: (stored) => decode(stored as Stored | null),
    retryLocked,
    experimentRoom,
    one,
  });
  const deploy = kvDeployRecords({ kv, retryLocked, touch });
  return { ...one, ...batches, deploy };
}
