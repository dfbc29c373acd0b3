/**
 * The group committer (core/engine/group_commit.ts): a record that comes alone is committed
 * at once, records queued while a commit lands go together right after it, records that
 * stream in wait a little for each other, and flush() commits at once.
 */
import assert from "node:assert/strict";
import { groupCommitter } from "../../../core/engine/group_commit.ts";
import { memoryStateStore } from "../../../adapters/store/memory/state_store.ts";
import type { StateStore } from "../../../core/ports/state_store.ts";
import { attemptRecord } from "../../helpers/records.ts";
import { cellKey } from "../../../core/bench/records.ts";

/** A memory state store that notes the size of every putAttempts() commit. */
function countingStore(): { state: StateStore; commits: number[] } {
  const inner = memoryStateStore();
  const commits: number[] = [];
  const state: StateStore = {
    ...inner,
    putAttempts(records, owner) {
      commits.push(records.length);
      return inner.putAttempts(records, owner);
    },
  };
  return { state, commits };
}

const rec = (i: number) => attemptRecord({ experimentId: "e", candidate: "c", caseId: `k${i}` });

Deno.test("group commit: a record that comes alone is committed at once, however long a stream would wait", async () => {
  const { state, commits } = countingStore();
  const committer = groupCommitter(state, "owner", { gatherMs: 3_600_000 });
  assert.equal(await committer.commit(rec(1)), true);
  assert.deepEqual(commits, [1]);
});

Deno.test("group commit: records queued while a commit lands go in the next one, and every one is written", async () => {
  const { state, commits } = countingStore();
  const committer = groupCommitter(state, "owner", { gatherMs: 3_600_000, full: 8 });
  const oks = await Promise.all(Array.from({ length: 20 }, (_, i) => committer.commit(rec(i))));
  assert.deepEqual(oks, Array(20).fill(true));
  // The first at once; the 19 queued while it landed are more than a full group: at once too.
  assert.deepEqual(commits, [1, 19]);
  const stored = await state.cellRecordsOf("e", [cellKey("c", "k0", 0), cellKey("c", "k19", 0)]);
  assert.deepEqual(stored.map((r) => r?.caseId), ["k0", "k19"]);
});

Deno.test("group commit: records that stream in share a commit after the gathering time", async () => {
  const { state, commits } = countingStore();
  const committer = groupCommitter(state, "owner", { gatherMs: 50, full: 32 });
  await committer.commit(rec(0));
  // Within 50 ms of the last: a stream, which waits for company (but not for a full group).
  const five = await Promise.all([1, 2, 3, 4, 5].map((i) => committer.commit(rec(i))));
  assert.deepEqual(five, Array(5).fill(true));
  assert.deepEqual(commits, [1, 5]);
});

Deno.test("group commit: flush() commits what is queued without waiting for company", async () => {
  const { state, commits } = countingStore();
  const committer = groupCommitter(state, "owner", { gatherMs: 3_600_000, full: 32 });
  await committer.commit(rec(0));
  // A stream that would wait an hour.
  const both = Promise.all([committer.commit(rec(1)), committer.commit(rec(2))]);
  committer.flush();
  assert.deepEqual(await both, [true, true]);
  assert.deepEqual(commits, [1, 2]);
});

Deno.test("group commit: with `after`, nothing is committed before it settles, and all is refused when it rejects", async () => {
  const { state, commits } = countingStore();
  let release!: () => void;
  const after = new Promise<void>((r) => (release = r));
  const committer = groupCommitter(state, "owner", { gatherMs: 0, after });
  const first = committer.commit(rec(0));
  committer.flush();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(commits, []);
  release();
  assert.equal(await first, true);
  assert.deepEqual(commits, [1]);

  const failed = new Error("the room is full");
  const refusing = groupCommitter(state, "owner", { gatherMs: 0, after: Promise.reject(failed) });
  await assert.rejects(() => refusing.commit(rec(1)), (e) => e === failed);
  await assert.rejects(() => refusing.commit(rec(2)), (e) => e === failed);
  assert.deepEqual(commits, [1]);
});
