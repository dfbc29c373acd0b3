/**
 * Group commit of attempt records: a finished attempt's record waits in a queue, and one
 * committer commits everything queued in one atomic operation (the records with their small
 * blobs, the run's leases on their cells released, the room's version moved) as soon as the previous commit has
 * landed; no timer, no delay. A record counts only once its commit has landed, so a process
 * killed at any moment loses at most the cells whose records had not landed (in flight).
 */
import type { AttemptRecord } from "../bench/records.ts";
import type { StateStore } from "../ports/state_store.ts";
import { gcHint } from "../gc_hint.ts";

/** Records committed between two garbage-collection hints (see core/gc_hint.ts). */
const GC_EVERY = 10_000;

export interface GroupCommitter {
  /**
   * Resolves once the record's commit has landed: true when written, false when another
   * process had recorded that try of the cell first (the other records of its group are
   * written all the same).
   */
  commit(record: AttemptRecord, blobs?: ReadonlyMap<string, Uint8Array>): Promise<boolean>;
}

/** A committer of records whose cells `leaseOwner` holds the leases of. */
export function groupCommitter(state: StateStore, leaseOwner: string): GroupCommitter {
  let queue: {
    record: AttemptRecord;
    blobs?: ReadonlyMap<string, Uint8Array>;
    resolve: (ok: boolean) => void;
    reject: (e: unknown) => void;
  }[] = [];
  let busy = false;
  const committed = gcHint(GC_EVERY);
  const pump = () => {
    if (busy || queue.length === 0) return;
    busy = true;
    const group = queue;
    queue = [];
    state.putAttempts(group.map(({ record, blobs }) => ({ record, blobs })), leaseOwner).then(
      (oks) => group.forEach((g, i) => g.resolve(oks[i])),
      (e) => group.forEach((g) => g.reject(e)),
    ).finally(() => {
      busy = false;
      committed(group.length);
      pump();
    });
  };
  return {
    commit(record, blobs) {
      return new Promise((resolve, reject) => {
        queue.push({ record, blobs, resolve, reject });
        pump();
      });
    },
  };
}
