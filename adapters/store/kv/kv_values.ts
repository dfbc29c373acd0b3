/**
 * The state store's values in Deno KV: one open database with its blob store, values stored
 * inline or (past KV's 64 KiB limit) as a blob whose id the entry holds, and every operation
 * retried while another process holds the database's lock. The state store's parts
 * (state_store.ts, kv_leases.ts, kv_records.ts, state_batches.ts) work over one KvValues.
 *
 * Permissions: --allow-read and --allow-write on the KV file; `"unstable": ["kv"]`.
 */
import { type BlobStore, getJson, putJson } from "../../../core/ports/blob_store.ts";
import type { ExperimentMeta } from "../../../core/ports/state_store.ts";
import { storageProblem } from "../../files/os_error.ts";

/**
 * Stored form of a value: its JSON text inline (`j`), or the id of a blob holding its JSON;
 * homes written before the JSON text held the value itself (`v`), read as ever. JSON text
 * rather than the value: KV then serializes one string instead of every field of an object,
 * and the value needs no JSON round trip to drop what JSON drops (a 1,000-record write of a
 * benchmark's records: 37-45 ms instead of 49-60, reading them back the same).
 */
export type Stored = { j: string } | { v: unknown } | { blob: string };

/** JSON longer than this (UTF-16 units) goes to a blob; V8 may spend 2 bytes per unit. */
const INLINE_LIMIT = 30_000;

/** One open KV state store. */
export interface KvValues {
  readonly kv: Deno.Kv;
  /** The KV file (or ":memory:"), for messages. */
  readonly path: string;
  /** Where values too large for KV go. */
  readonly blobs: BlobStore;
  /** Rooms of experiments, as records name the experiment only (an experiment's room is fixed). */
  readonly roomOfExperiment: Map<string, string>;
}

/** Opens the KV database at `path`, waiting while another process holds its lock. */
export async function openKvValues(path: string, blobs: BlobStore): Promise<KvValues> {
  const kv = await retryLockedAt(path, () => Deno.openKv(path));
  return { kv, path, blobs, roomOfExperiment: new Map() };
}

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

/** `f` run again while another process holds the store's lock (see retryLockedAt). */
export function retryLocked<T>(s: KvValues, f: () => Promise<T>): Promise<T> {
  return retryLockedAt(s.path, f);
}

/** The stored form of a value, and the length of the JSON it stands for (its KV size). */
export async function encodeSized(
  s: KvValues,
  value: unknown,
): Promise<{ stored: Stored; chars: number }> {
  const json = JSON.stringify(value);
  if (json.length <= INLINE_LIMIT) return { stored: { j: json }, chars: json.length };
  return { stored: { blob: await putJson(s.blobs, value) }, chars: 100 };
}

/** The stored form of a value. */
export async function encode(s: KvValues, value: unknown): Promise<Stored> {
  return (await encodeSized(s, value)).stored;
}

/** A stored value back (inline or from its blob); null when absent. */
export async function decode<T>(s: KvValues, stored: Stored | null | undefined): Promise<T | null> {
  if (!stored) return null;
  if ("j" in stored) return JSON.parse(stored.j) as T;
  if ("v" in stored) return stored.v as T;
  const value = await getJson<T>(s.blobs, stored.blob);
  if (value === null) throw new Error(`State value refers to a missing blob ${stored.blob}`);
  return value;
}

/** The value under `key`, or null. */
export async function get<T>(s: KvValues, key: Deno.KvKey): Promise<T | null> {
  const entry = await retryLocked(s, () => s.kv.get<Stored>(key));
  return decode<T>(s, entry.value);
}

/** Stores `value` under `key`. */
export async function set(s: KvValues, key: Deno.KvKey, value: unknown): Promise<void> {
  const stored = await encode(s, value);
  await retryLocked(s, () => s.kv.set(key, stored));
}

/** Every value under `prefix`, in key order. */
export async function list<T>(s: KvValues, prefix: Deno.KvKey): Promise<T[]> {
  const entries = await retryLocked(s, async () => {
    const out: Deno.KvEntry<Stored>[] = [];
    for await (const e of s.kv.list<Stored>({ prefix }, { batchSize: 500 })) out.push(e);
    return out;
  });
  const values: T[] = [];
  for (const e of entries) {
    const v = await decode<T>(s, e.value);
    if (v !== null) values.push(v);
  }
  return values;
}

/** The room of an experiment (whose version its records move), or null when unknown. */
export async function experimentRoom(s: KvValues, id: string): Promise<string | null> {
  const known = s.roomOfExperiment.get(id);
  if (known !== undefined) return known;
  const meta = await get<ExperimentMeta>(s, ["experiment", id]);
  if (meta) s.roomOfExperiment.set(id, meta.room);
  return meta?.room ?? null;
}

/** Marks a change of the room's records (the value is irrelevant: its versionstamp moves). */
export async function touch(s: KvValues, room: string | null): Promise<void> {
  if (room === null) return;
  await retryLocked(s, () => s.kv.set(["room-version", room], Date.now()));
}
