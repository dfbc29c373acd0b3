import assert from "node:assert/strict";
import { memoryBlobStore } from "../../../core/io/blob_store.ts";
import { openKvStateStore, trustOf } from "../../../core/io/state_store.ts";
import type { AttemptRecord } from "../../../core/bench/records.ts";

function record(over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    experimentId: "e1",
    candidate: "builtin:reference",
    caseId: "c1",
    repetition: 0,
    inputHash: "h",
    tryNo: 1,
    startedAt: "2025-01-01T00:00:00.000Z",
    elapsedMs: 10,
    status: "completed",
    verdict: { checks: { ok: true }, reward: 1 },
    fault: null,
    passed: true,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    trust: "ad-hoc",
    evidenceRef: null,
    ...over,
  };
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
