import assert from "node:assert/strict";
import { memoryBlobStore } from "../../../core/io/blob_store.ts";
import { openKvStateStore, trustOf } from "../../../core/io/state_store.ts";
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import { attemptRecord } from "../../helpers/records.ts";

function record(over: Partial<AttemptRecord> = {}): AttemptRecord {
  return attemptRecord({
    experimentId: "e1",
    candidate: "builtin:reference",
    caseId: "c1",
    startedAt: "2025-01-01T00:00:00.000Z",
    elapsedMs: 10,
    ...over,
  });
}

Deno.test("putAttempt() keeps the latest try per cell and every try in the history", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const fault = record({
    verdict: null,
    passed: false,
    status: "fault",
    fault: { source: "checker", kind: "threw", message: "x" },
  });
  assert.equal(await state.putAttempt(fault), true);
  assert.equal(await state.putAttempt(record({ tryNo: 2 })), true);
  assert.equal(await state.putAttempt(record({ caseId: null })), true);
  const cells = await state.cellRecords("e1");
  assert.equal(cells.length, 2);
  assert.deepEqual(cells.map((c) => [c.caseId, c.tryNo]), [["c1", 2], [null, 1]]);
  assert.equal((await state.attemptHistory("e1")).length, 3);
  assert.equal((await state.cellRecords("other")).length, 0);
  state.close();
});

Deno.test("putAttempt() claims each try number of a cell once: no cell is doubled", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const results = await Promise.all([1, 2, 3].map(() => state.putAttempt(record())));
  assert.deepEqual(results.filter((r) => r).length, 1);
  assert.equal(await state.putAttempt(record({ tryNo: 1 })), false);
  assert.equal((await state.attemptHistory("e1")).length, 1);
  state.close();
});

Deno.test("openKvStateStore() spills a value over the KV limit into a blob and reads it back", async () => {
  const blobs = memoryBlobStore();
  const state = await openKvStateStore(":memory:", blobs);
  const checks: Record<string, boolean> = {};
  for (let i = 0; i < 5000; i++) checks[`check-number-${i}`] = i % 2 === 0;
  const big = record({ verdict: { checks, reward: 0.5 } });
  assert.equal(await state.putAttempt(big), true);
  assert.equal(blobs.size(), 1);
  const [back] = await state.cellRecords("e1");
  assert.deepEqual(back.verdict, big.verdict);
  state.close();
});

Deno.test("putExperiment() keeps the first createdAt and listExperiments() filters by room", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const meta = {
    id: "e1",
    room: "r",
    bundleName: "b",
    bundleId: "x",
    createdAt: "2025-01-01T00:00:00Z",
    cells: 2,
    definition: {},
  };
  await state.putExperiment(meta);
  const again = await state.putExperiment({ ...meta, createdAt: "2026-01-01T00:00:00Z" });
  assert.equal(again.createdAt, "2025-01-01T00:00:00Z");
  await state.putExperiment({ ...meta, id: "e2", room: "s" });
  assert.deepEqual((await state.listExperiments("r")).map((m) => m.id), ["e1"]);
  assert.equal((await state.listExperiments()).length, 2);
  state.close();
});

Deno.test("trustOf() is room for a promoted bundle id and ad-hoc otherwise", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  assert.equal(await trustOf(state, "b1"), "ad-hoc");
  await state.putPromotion("b1", { room: "r", name: "n", at: "2025-01-01T00:00:00Z" });
  assert.equal(await trustOf(state, "b1"), "room");
  assert.equal(await trustOf(state, "b2"), "ad-hoc");
  state.close();
});

Deno.test("putPromotion() keeps the first record when two handles promote at once", async () => {
  const dir = await Deno.makeTempDir();
  const a = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
  const b = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
  const [x, y] = await Promise.all([
    a.putPromotion("b1", { room: "r1", name: "one", at: "2025-01-01T00:00:00Z" }),
    b.putPromotion("b1", { room: "r2", name: "two", at: "2025-01-01T00:00:01Z" }),
  ]);
  // Both are told the same record: the one that landed first.
  assert.deepEqual(x, y);
  assert.deepEqual(await a.promotion("b1"), x);
  const again = await a.putPromotion("b1", {
    room: "r3",
    name: "three",
    at: "2026-01-01T00:00:00Z",
  });
  assert.deepEqual(again, x);
  a.close();
  b.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("openKvStateStore() on a file sees what another handle committed", async () => {
  const dir = await Deno.makeTempDir();
  const a = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
  const b = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
  await Promise.all([
    ...Array.from({ length: 20 }, (_, i) => a.putAttempt(record({ repetition: i }))),
    ...Array.from({ length: 20 }, (_, i) => b.putAttempt(record({ repetition: i }))),
  ]);
  assert.equal((await a.cellRecords("e1")).length, 20);
  assert.equal((await b.attemptHistory("e1")).length, 20);
  a.close();
  b.close();
  await Deno.remove(dir, { recursive: true });
});

const A = { pid: 101, host: "h", owner: "run-a" };
const B = { pid: 202, host: "h", owner: "run-b" };

Deno.test("takeLease() refuses a live lease of another owner, renews its own, and takes over an expired one", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  // Times are given, as the runner gives its timer's: nothing sleeps.
  const t = 1_700_000_000_000;
  const a = await state.takeLease("e1", "cell-1", A, 200, t);
  assert.equal(a.ok, true);
  const b = await state.takeLease("e1", "cell-1", B, 200, t + 10);
  assert.equal(b.ok, false);
  assert.deepEqual(!b.ok && { ...b.holder, until: 0 }, { ...A, until: 0 });
  // Another cell, or another experiment, is free.
  assert.equal((await state.takeLease("e1", "cell-2", B, 200, t)).ok, true);
  assert.equal((await state.takeLease("e2", "cell-1", B, 200, t)).ok, true);
  // The holder may take its own lease again (a renewal); another owner cannot renew it.
  assert.equal((await state.takeLease("e1", "cell-1", A, 200, t + 20)).ok, true);
  assert.equal(await state.renewLease("e1", "cell-1", B.owner, 200, t + 20), false);
  assert.equal(await state.renewLease("e1", "cell-1", A.owner, 200, t + 30), true);
  // A's holder stops renewing (killed): once `until` passes, B takes over.
  assert.equal((await state.takeLease("e1", "cell-1", B, 5000, t + 229)).ok, false);
  const taken = await state.takeLease("e1", "cell-1", B, 5000, t + 231);
  assert.equal(taken.ok, true);
  assert.equal((await state.leaseOf("e1", "cell-1"))?.owner, "run-b");
  assert.equal(await state.renewLease("e1", "cell-1", A.owner, 200, t + 240), false);
  state.close();
});

Deno.test("releaseLease() frees only the owner's lease", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  await state.takeLease("e1", "c", A, 10_000);
  await state.releaseLease("e1", "c", B.owner);
  assert.equal((await state.leaseOf("e1", "c"))?.owner, "run-a");
  await state.releaseLease("e1", "c", A.owner);
  assert.equal(await state.leaseOf("e1", "c"), null);
  assert.equal((await state.takeLease("e1", "c", B, 10_000)).ok, true);
  state.close();
});

Deno.test("takeLease() from two handles on one file lets exactly one owner win each cell", async () => {
  const dir = await Deno.makeTempDir();
  const a = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
  const b = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
  const cells = Array.from({ length: 15 }, (_, i) => `cell-${i}`);
  const takes = await Promise.all(
    cells.flatMap((c) => [
      a.takeLease("e1", c, A, 10_000).then((t) => [c, t.ok && "a"] as const),
      b.takeLease("e1", c, B, 10_000).then((t) => [c, t.ok && "b"] as const),
    ]),
  );
  for (const c of cells) {
    const winners = takes.filter(([cell, who]) => cell === c && who).map(([, who]) => who);
    assert.equal(winners.length, 1, `${c}: ${winners}`);
    const owner = (await a.leaseOf("e1", c))?.owner;
    assert.equal(owner, winners[0] === "a" ? "run-a" : "run-b");
  }
  a.close();
  b.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("cellRecord() reads one cell's latest record", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  assert.equal(await state.cellRecord("e1", cellKey("builtin:reference", "c1", 0)), null);
  await state.putAttempt(record());
  await state.putAttempt(record({ tryNo: 2, elapsedMs: 20 }));
  const [cell] = await state.cellRecords("e1");
  const one = await state.cellRecord("e1", cellKey("builtin:reference", "c1", 0));
  assert.deepEqual(one, cell);
  assert.equal(one?.tryNo, 2);
  state.close();
});
