/**
 * The state store's batch operations (state_store.ts spreads them into its StateStore): the
 * leases of many cells taken, renewed or released, many cells' latest records read, and many
 * finished attempts committed, each in as few KV operations as KV's limits allow. A run of
 * fast cells does one commit per group of cells instead of four per cell; the semantics of
 * the one-cell methods are kept, cell by cell:
 *
 * - a group of records is one atomic commit (every record or none); when it fails because
 *   another process recorded one of its tries first, each record is committed alone, so the
 *   others are kept and only that one reports false;
 * - a lease is taken, renewed and released by check-and-set, as one at a time.
 *
 * Leases are batch_leases.ts, records batch_records.ts, over the state and KV's limits of
 * batch_state.ts.
 */
import type { AttemptRecord } from "../../../core/bench/records.ts";
import type { StateBatches } from "../../../core/ports/state_store.ts";
import { type Batcher, type BatchParts, blobKey, getMany } from "./batch_state.ts";
import { releaseLeases, renewLeases, takeLeases } from "./batch_leases.ts";
import { putAttempts } from "./batch_records.ts";

export type { BatchParts } from "./batch_state.ts";

/** The batch operations over one KV handle. */
export function batchMethods(p: BatchParts): StateBatches {
  const b: Batcher = { p, stamps: new Map() };
  return {
    blobs: {
      put: (content) => p.files.put(content),
      async get(id) {
        const entry = await p.retryLocked(() => p.kv.get<Uint8Array>(blobKey(id)));
        return entry.value ?? await p.files.get(id);
      },
      async has(id) {
        const entry = await p.retryLocked(() => p.kv.get<Uint8Array>(blobKey(id)));
        return entry.versionstamp !== null || await p.files.has(id);
      },
    },
    putAttempts: (commits, owner) => putAttempts(b, commits, owner),
    takeLeases: (id, cells, holder, ms, at) => takeLeases(b, id, cells, holder, ms, at),
    renewLeases: (id, cells, owner, ms, at) => renewLeases(b, id, cells, owner, ms, at),
    releaseLeases: (id, cells, owner) => releaseLeases(b, id, cells, owner),
    async cellRecordsOf(id, cells) {
      const entries = await getMany<unknown>(b, cells.map((c) => ["cell", id, c]));
      const out: (AttemptRecord | null)[] = [];
      for (const e of entries) out.push(await p.decode<AttemptRecord>(e.value));
      return out;
    },
  };
}
