/**
 * Group commit of attempt records: a finished attempt's record waits in a queue, and one
 * committer commits everything queued in one atomic operation (the records with their small
 * blobs, the run's leases on their cells released, the room's version moved). While records
 * stream in (the last came less than GATHER_MS ago) and fewer than GROUP_FULL are queued, the
 * committer waits up to GATHER_MS for more to join before it commits (at once when the run
 * asks for a flush): quick cells then share a commit, where each record going as soon as the
 * previous commit had landed made a 1,000-cell run of an instant candidate commit ~270 times
 * (3.7 records a commit, each its own KV transaction and sync; at 32 records a commit the KV
 * store spends about half the CPU per record). A record that comes alone (slow attempts) is
 * committed at once, as before. A record counts only once its commit has landed, so a
 * process killed at any moment loses at most the cells whose records had not landed (in
 * flight).
 */
import type { AttemptRecord } from "../bench/records.ts";
import type { StateStore } from "../ports/state_store.ts";
import { gcHint } from "../gc_hint.ts";

/** Records committed between two garbage-collection hints (see core/gc_hint.ts). */
const GC_EVERY = 10_000;

/** Queued records that go at once, without waiting for others to join them. */
export const GROUP_FULL = 32;

/**
 * Records that came less than this apart are a stream, whose commit waits at most this long
 * for more records to join it. 20 rather than 5: a 1,000-cell run of an instant candidate
 * made ~58 commits of ~17 records instead of ~100 of ~10 (each commit is a SQLite
 * transaction whose pages are written again and synced: 105 fsyncs instead of ~158, a
 * quarter fewer page writes).
 */
export const GATHER_MS = 20;

export interface GroupCommitter {
  /**
   * Resolves once the record's commit has landed: true when written, false when another
   * process had recorded that try of the cell first (the other records of its group are
   * written all the same).
   */
  commit(record: AttemptRecord, blobs?: ReadonlyMap<string, Uint8Array>): Promise<boolean>;
  /** Commits what is queued without waiting for more (the run waits for its commits). */
  flush(): void;
}

/**
 * A committer of records whose cells `leaseOwner` holds the leases of. With `after`, nothing
 * is committed before it settles; when it rejects, every record is refused with its error.
 */
export function groupCommitter(
  state: StateStore,
  leaseOwner: string,
  opts: { gatherMs?: number; full?: number; after?: Promise<unknown> } = {},
): GroupCommitter {
  const gatherMs = opts.gatherMs ?? GATHER_MS;
  const full = opts.full ?? GROUP_FULL;
  let queue: {
    record: AttemptRecord;
    blobs?: ReadonlyMap<string, Uint8Array>;
    resolve: (ok: boolean) => void;
    reject: (e: unknown) => void;
  }[] = [];
  let busy = opts.after !== undefined;
  let refused: { error: unknown } | null = null;
  let gathering: ReturnType<typeof setTimeout> | undefined;
  /** When the last record was queued (performance.now()). */
  let lastAt = -Infinity;
  /** The run asked for a flush: what is queued goes as soon as it can. */
  let urgent = false;
  const committed = gcHint(GC_EVERY);
  const land = () => {
    clearTimeout(gathering);
    gathering = undefined;
    if (busy || queue.length === 0) return;
    if (refused) {
      const { error } = refused;
      queue.splice(0).forEach((g) => g.reject(error));
      return;
    }
    busy = true;
    urgent = false;
    const group = queue;
    queue = [];
    state.putAttempts(group.map(({ record, blobs }) => ({ record, blobs })), leaseOwner).then(
      (oks) => group.forEach((g, i) => g.resolve(oks[i])),
      (e) => group.forEach((g) => g.reject(e)),
    ).finally(() => {
      busy = false;
      committed(group.length);
      next();
    });
  };
  /** Commits what is queued now, or, while records stream in, once more have joined. */
  const next = () => {
    if (busy || queue.length === 0 || gathering !== undefined) return;
    const streaming = performance.now() - lastAt < gatherMs;
    if (urgent || !streaming || queue.length >= full) land();
    else gathering = setTimeout(land, gatherMs);
  };
  opts.after?.then(
    () => {
      busy = false;
      next();
    },
    (error) => {
      refused = { error };
      busy = false;
      land();
    },
  );
  return {
    commit(record, blobs) {
      return new Promise((resolve, reject) => {
        queue.push({ record, blobs, resolve, reject });
        const now = performance.now();
        const streaming = now - lastAt < gatherMs;
        lastAt = now;
        if (busy) return;
        if (!streaming || queue.length >= full) land();
        else next();
      });
    },
    flush() {
      urgent = true;
      land();
    },
  };
}
