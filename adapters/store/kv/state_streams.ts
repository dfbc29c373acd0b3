/**
 * Streams of an experiment's records out of the state store's Deno KV, a page at a time, so
 * a caller folds 100,000 records without holding them: the latest record of every cell, or
 * every try of every cell (the tries of one cell one after another, in try order).
 *
 * A page is read in one KV list call (retried when the database is locked), then its values
 * are decoded and handed out one by one; the next page starts after the last key read, so
 * records written meanwhile may or may not be seen, and none is seen twice.
 *
 * Permissions: --allow-read on the KV file (and the blob store, for spilled records).
 */
import type { AttemptRecord } from "../../../core/bench/records.ts";
import { gcHint } from "../../../core/gc_hint.ts";

/** Records per KV list call. */
export const STREAM_PAGE = 500;
/** Records read between two garbage-collection hints (see gc_hint.ts). */
const GC_EVERY = 10_000;

export interface StreamDeps {
  kv: Deno.Kv;
  /** A stored value back (inline or from its blob); null when absent. */
  decode: (stored: unknown) => Promise<unknown | null>;
  retryLocked: <T>(f: () => Promise<T>) => Promise<T>;
}

/** The values under `prefix`, in key order, a page at a time. */
export async function* streamValues<T>(
  deps: StreamDeps,
  prefix: Deno.KvKey,
  page = STREAM_PAGE,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  const read = gcHint(GC_EVERY);
  for (;;) {
    const { entries, next } = await deps.retryLocked(async () => {
      const entries: Deno.KvEntry<unknown>[] = [];
      const it = deps.kv.list({ prefix }, { limit: page, batchSize: page, cursor });
      for await (const e of it) entries.push(e);
      return { entries, next: it.cursor };
    });
    for (const e of entries) {
      const v = await deps.decode(e.value);
      if (v !== null) yield v as T;
    }
    if (entries.length < page || next === "") return;
    cursor = next;
    read(entries.length);
  }
}

/** The streaming reads of a state store, over its KV. */
export function streamMethods(deps: StreamDeps) {
  return {
    /** The latest record of every cell of an experiment that has one, in key order. */
    streamCellRecords: (experimentId: string): AsyncIterable<AttemptRecord> =>
      streamValues<AttemptRecord>(deps, ["cell", experimentId]),
    /**
     * Every try of every cell of an experiment, in key order: the tries of one cell come one
     * after another (foldGroupedHistory's input).
     */
    streamAttemptHistory: (experimentId: string): AsyncIterable<AttemptRecord> =>
      streamValues<AttemptRecord>(deps, ["try", experimentId]),
  };
}
