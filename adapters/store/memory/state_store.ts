/**
 * A state store in memory, written against the StateStore port (not Deno KV on
 * ":memory:"): the memory home's records, and the second implementation the port's
 * contract suite (tests/ports/state_store_contract.ts) holds to the KV store's semantics.
 *
 * Values are kept as their JSON (what KV and PostgreSQL keep), so a caller's later change
 * to an object it stored does not reach the store, and what comes back is what JSON gives
 * (no `undefined` fields). Keys are ordered as KV orders them: cells by the UTF-8 bytes of
 * their key, tries by number. Lease times default to the system's clock.
 *
 * Needs no permission.
 */
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import type { JobRecord } from "../../../core/jobs.ts";
import type { BlobStore } from "../../../core/ports/blob_store.ts";
import type { CellLease, LeaseTake } from "../../../core/ports/cell_lease.ts";
import type {
  AttemptCommit,
  ExperimentMeta,
  Promotion,
  StateStore,
} from "../../../core/ports/state_store.ts";
import { memoryBlobStore } from "./blob_store.ts";
import { memoryDeployRecords } from "./deploy_records.ts";

/** A value as stored: its JSON text, read back into a fresh object every time. */
type Stored = string;
const store = (v: unknown): Stored => JSON.stringify(v);
const load = <T>(s: Stored | undefined): T | null => s === undefined ? null : JSON.parse(s) as T;

const utf8 = new TextEncoder();
/** KV's order of string keys: by their UTF-8 bytes. */
function byBytes(a: string, b: string): number {
  if (a === b) return 0;
  const x = utf8.encode(a), y = utf8.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** One experiment's records: every cell's tries by number, and its latest. */
interface Cells {
  latest: Map<string, Stored>;
  tries: Map<string, Map<number, Stored>>;
}

/** The records, leases and versions of the store, kept apart from its methods. */
interface Tables {
  experiments: Map<string, Stored>;
  cells: Map<string, Cells>;
  leases: Map<string, CellLease>;
  scorecards: Map<string, Stored>;
  promotions: Map<string, Stored>;
  jobs: Map<string, Stored>;
  cancels: Set<string>;
  roomVersions: Map<string, number>;
  /** Small blobs committed with their records (putAttempts). */
  smallBlobs: Map<string, Uint8Array>;
}

const leaseKey = (id: string, cell: string) => JSON.stringify([id, cell]);

function cellsOf(t: Tables, id: string): Cells {
  let c = t.cells.get(id);
  if (!c) t.cells.set(id, c = { latest: new Map(), tries: new Map() });
  return c;
}

function touch(t: Tables, room: string | null | undefined): void {
  if (room === null || room === undefined) return;
  t.roomVersions.set(room, (t.roomVersions.get(room) ?? 0) + 1);
}

function roomOf(t: Tables, experimentId: string): string | null {
  return load<ExperimentMeta>(t.experiments.get(experimentId))?.room ?? null;
}

/** Writes a record unless its cell already holds that try; whether it was written. */
function putRecord(t: Tables, record: AttemptRecord): boolean {
  const cell = cellKey(record.candidate, record.caseId, record.repetition);
  const cells = cellsOf(t, record.experimentId);
  let tries = cells.tries.get(cell);
  if (!tries) cells.tries.set(cell, tries = new Map());
  if (tries.has(record.tryNo)) return false;
  const stored = store(record);
  tries.set(record.tryNo, stored);
  cells.latest.set(cell, stored);
  return true;
}

function takeLease(
  t: Tables,
  id: string,
  cell: string,
  holder: { pid: number; host: string; owner: string },
  ms: number,
  now: number,
): LeaseTake {
  const held = t.leases.get(leaseKey(id, cell));
  if (held && held.owner !== holder.owner && held.until > now) {
    return { ok: false, holder: { ...held } };
  }
  const lease: CellLease = { ...holder, until: now + ms };
  t.leases.set(leaseKey(id, cell), lease);
  return { ok: true, lease: { ...lease } };
}

function renewLease(
  t: Tables,
  id: string,
  cell: string,
  owner: string,
  ms: number,
  now: number,
): boolean {
  const held = t.leases.get(leaseKey(id, cell));
  if (held?.owner !== owner) return false;
  t.leases.set(leaseKey(id, cell), { ...held, until: now + ms });
  return true;
}

/** Removes `owner`'s lease of a cell; whether there was one. */
function dropLease(t: Tables, id: string, cell: string, owner: string): boolean {
  const key = leaseKey(id, cell);
  if (t.leases.get(key)?.owner !== owner) return false;
  t.leases.delete(key);
  return true;
}

/** The values of a map in the order of their keys, a snapshot. */
function inOrder(map: Map<string, Stored>): Stored[] {
  return [...map.keys()].sort(byBytes).map((k) => map.get(k)!);
}

/** Every try of an experiment: cells in key order, each cell's tries by number. */
function historyOf(t: Tables, id: string): Stored[] {
  const tries = t.cells.get(id)?.tries ?? new Map<string, Map<number, Stored>>();
  return [...tries.keys()].sort(byBytes).flatMap((cell) =>
    [...tries.get(cell)!.entries()].sort(([a], [b]) => a - b).map(([, s]) => s)
  );
}

async function* parsed<T>(items: Stored[]): AsyncGenerator<T> {
  for (const s of items) yield JSON.parse(s) as T;
}

/** The home's blobs as readers see them: the small ones kept with records, then `files`. */
function blobView(t: Tables, files: BlobStore): BlobStore {
  return {
    put: (content) => files.put(content),
    async get(id) {
      const small = t.smallBlobs.get(id);
      return small ? small.slice() : await files.get(id);
    },
    async has(id) {
      return t.smallBlobs.has(id) || await files.has(id);
    },
  };
}

/** Commits finished attempts as putAttempt would, releasing `owner`'s leases of their cells. */
function putAttempts(t: Tables, commits: AttemptCommit[], owner?: string): boolean[] {
  return commits.map(({ record, blobs }) => {
    const written = putRecord(t, record);
    if (written) {
      for (const [id, bytes] of blobs ?? []) t.smallBlobs.set(id, bytes.slice());
      touch(t, roomOf(t, record.experimentId));
    }
    if (owner !== undefined) {
      const cell = cellKey(record.candidate, record.caseId, record.repetition);
      dropLease(t, record.experimentId, cell, owner);
    }
    return written;
  });
}

/** Experiments, scorecards, promotions and jobs. */
function catalogMethods(t: Tables) {
  return {
    putExperiment(meta: ExperimentMeta): Promise<ExperimentMeta> {
      const old = load<ExperimentMeta>(t.experiments.get(meta.id));
      const next = old ? { ...meta, createdAt: old.createdAt } : meta;
      t.experiments.set(meta.id, store(next));
      touch(t, next.room);
      return Promise.resolve(load<ExperimentMeta>(store(next))!);
    },
    getExperiment: (id: string) => Promise.resolve(load<ExperimentMeta>(t.experiments.get(id))),
    listExperiments(room?: string): Promise<ExperimentMeta[]> {
      const all = inOrder(t.experiments).map((s) => JSON.parse(s) as ExperimentMeta);
      return Promise.resolve(
        all.filter((m) => room === undefined || m.room === room)
          .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0)),
      );
    },
    putScorecard(id: string, scorecard: unknown): Promise<void> {
      t.scorecards.set(id, store(scorecard));
      touch(t, roomOf(t, id));
      return Promise.resolve();
    },
    getScorecard: (id: string) => Promise.resolve(load<unknown>(t.scorecards.get(id))),
    promotion: (bundleId: string) => Promise.resolve(load<Promotion>(t.promotions.get(bundleId))),
    putPromotion(bundleId: string, p: Promotion): Promise<Promotion> {
      if (!t.promotions.has(bundleId)) t.promotions.set(bundleId, store(p));
      return Promise.resolve(load<Promotion>(t.promotions.get(bundleId))!);
    },
    putJob(job: JobRecord): Promise<void> {
      t.jobs.set(job.id, store(job));
      touch(t, job.room);
      return Promise.resolve();
    },
    getJob: (id: string) => Promise.resolve(load<JobRecord>(t.jobs.get(id))),
    listJobs(room?: string): Promise<JobRecord[]> {
      const all = inOrder(t.jobs).map((s) => JSON.parse(s) as JobRecord);
      return Promise.resolve(
        all.filter((j) => room === undefined || j.room === room)
          .sort((a, b) => (a.startedAt > b.startedAt ? -1 : a.startedAt < b.startedAt ? 1 : 0)),
      );
    },
    requestJobCancel(id: string): Promise<void> {
      t.cancels.add(id);
      return Promise.resolve();
    },
    jobCancelRequested: (id: string) => Promise.resolve(t.cancels.has(id)),
    roomVersion(room: string): Promise<string> {
      const v = t.roomVersions.get(room);
      return Promise.resolve(v === undefined ? "none" : String(v).padStart(20, "0"));
    },
  };
}

/** Attempt records, one cell or many, and their streams. */
function recordMethods(t: Tables) {
  return {
    putAttempt(record: AttemptRecord): Promise<boolean> {
      const written = putRecord(t, record);
      if (written) touch(t, roomOf(t, record.experimentId));
      return Promise.resolve(written);
    },
    putAttempts: (commits: AttemptCommit[], owner?: string) =>
      Promise.resolve(putAttempts(t, commits, owner)),
    cellRecord: (id: string, cell: string) =>
      Promise.resolve(load<AttemptRecord>(t.cells.get(id)?.latest.get(cell))),
    cellRecordsOf: (id: string, cells: string[]) =>
      Promise.resolve(cells.map((c) => load<AttemptRecord>(t.cells.get(id)?.latest.get(c)))),
    cellRecords: (id: string) =>
      Promise.resolve(inOrder(t.cells.get(id)?.latest ?? new Map()).map((s) => JSON.parse(s))),
    attemptHistory: (id: string) =>
      Promise.resolve(historyOf(t, id).map((s) => JSON.parse(s) as AttemptRecord)),
    streamCellRecords: (id: string) =>
      parsed<AttemptRecord>(inOrder(t.cells.get(id)?.latest ?? new Map())),
    streamAttemptHistory: (id: string) => parsed<AttemptRecord>(historyOf(t, id)),
  };
}

/** Cell leases, one cell or many. */
function leaseMethods(t: Tables) {
  const at = (now?: number) => now ?? Date.now();
  return {
    takeLease: (
      id: string,
      cell: string,
      holder: { pid: number; host: string; owner: string },
      ms: number,
      now?: number,
    ) => Promise.resolve(takeLease(t, id, cell, holder, ms, at(now))),
    renewLease: (id: string, cell: string, owner: string, ms: number, now?: number) =>
      Promise.resolve(renewLease(t, id, cell, owner, ms, at(now))),
    releaseLease(id: string, cell: string, owner: string): Promise<void> {
      dropLease(t, id, cell, owner);
      return Promise.resolve();
    },
    breakLease: (id: string, cell: string, owner: string) =>
      Promise.resolve(dropLease(t, id, cell, owner)),
    leaseOf(id: string, cell: string): Promise<CellLease | null> {
      const held = t.leases.get(leaseKey(id, cell));
      return Promise.resolve(held ? { ...held } : null);
    },
    takeLeases: (
      id: string,
      cells: string[],
      holder: { pid: number; host: string; owner: string },
      ms: number,
      now?: number,
    ) => Promise.resolve(cells.map((c) => takeLease(t, id, c, holder, ms, at(now)))),
    renewLeases: (id: string, cells: string[], owner: string, ms: number, now?: number) =>
      Promise.resolve(cells.map((c) => renewLease(t, id, c, owner, ms, at(now)))),
    releaseLeases(id: string, cells: string[], owner: string): Promise<void> {
      for (const c of cells) dropLease(t, id, c, owner);
      return Promise.resolve();
    },
  };
}

/** A state store in memory; large values need no blobs, the given ones serve `blobs`. */
export function memoryStateStore(files: BlobStore = memoryBlobStore()): StateStore {
  const t: Tables = {
    experiments: new Map(),
    cells: new Map(),
    leases: new Map(),
    scorecards: new Map(),
    promotions: new Map(),
    jobs: new Map(),
    cancels: new Set(),
    roomVersions: new Map(),
    smallBlobs: new Map(),
  };
  return {
    ...catalogMethods(t),
    ...recordMethods(t),
    ...leaseMethods(t),
    blobs: blobView(t, files),
    deploy: memoryDeployRecords((room) => touch(t, room)),
    close() {},
  };
}
