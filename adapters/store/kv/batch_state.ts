/**
 * What the state store's batch operations work with (state_batches.ts): the store's parts
 * they borrow, the versionstamps of the leases this handle wrote last, and KV's limits.
 *
 * KV's limits (local SQLite, Deno 2.9): at most 10 keys per getMany, 100 checks and 1,000
 * mutations per atomic operation, 819,200 bytes of mutations in all.
 */
import type { AttemptRecord } from "../../../core/bench/records.ts";
import type { CellLease, CellLeaseOps } from "../../../core/ports/cell_lease.ts";
import type { BlobStore } from "../../../core/ports/blob_store.ts";

/** The one-cell operations a batch falls back to (the state store's, same semantics). */
interface OneCell extends CellLeaseOps {
  putAttempt(record: AttemptRecord): Promise<boolean>;
}

/** What the batch operations need of the store that holds them. */
export interface BatchParts {
  kv: Deno.Kv;
  /** The blob store the state store was opened on. */
  files: BlobStore;
  /** The stored form of a value and its JSON length (what its KV bytes are bounded by). */
  encodeSized(value: unknown): Promise<{ stored: unknown; chars: number }>;
  decode<T>(stored: unknown): Promise<T | null>;
  retryLocked<T>(f: () => Promise<T>): Promise<T>;
  /** The room of an experiment (whose version a record moves), or null when unknown. */
  experimentRoom(id: string): Promise<string | null>;
  /** The one-cell operations, the fallback when a batch cannot be committed as one. */
  one: OneCell;
}

/** A lease this handle wrote, with the versionstamp of that write. */
export interface Stamped {
  lease: CellLease;
  versionstamp: string;
}

/** The batch operations' state over one KV handle. */
export interface Batcher {
  readonly p: BatchParts;
  /** Versionstamps of the leases this handle wrote last, by stampKey(). */
  readonly stamps: Map<string, Stamped>;
}

/** Keys per getMany call. */
const READ_KEYS = 10;
/** Cells per lease commit (one check each; KV allows 100). */
export const LEASES_PER_COMMIT = 90;

/** `items` in runs of at most `size`. */
export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export const leaseKey = (id: string, cell: string): Deno.KvKey => ["lease", id, cell];
export const stampKey = (id: string, cell: string): string => JSON.stringify([id, cell]);
export const blobKey = (id: string): Deno.KvKey => ["blob", id];

/** getMany calls made at once (a lease take of LEASES_PER_COMMIT cells is 9). */
const READS_AT_ONCE = 16;

/**
 * The entries of `keys`, READ_KEYS per KV call, up to READS_AT_ONCE calls made at once: KV's
 * one SQLite thread then reads them one after another, not each behind whatever commit came
 * in while this thread waited for the one before. A lease take of 64 cells is 7 calls: with
 * records committed meanwhile it took 47-70 ms made one at a time, 8-14 ms at once (median
 * of 15 takes, 4 alternating rounds). Each call is its own snapshot, as before.
 */
export async function getMany<T>(
  b: Batcher,
  keys: Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const parts = chunks(keys, READ_KEYS);
  const out: Deno.KvEntryMaybe<T>[] = [];
  for (let i = 0; i < parts.length; i += READS_AT_ONCE) {
    const read = await Promise.all(
      parts.slice(i, i + READS_AT_ONCE).map((part) =>
        b.p.retryLocked(() => b.p.kv.getMany<T[]>(part))
      ),
    );
    for (const entries of read) out.push(...entries);
  }
  return out;
}
