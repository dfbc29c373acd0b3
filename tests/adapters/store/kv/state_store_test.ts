import assert from "node:assert/strict";
import { memoryBlobStore } from "../../../../adapters/store/memory/blob_store.ts";
import { blobId, getJson } from "../../../../core/ports/blob_store.ts";
import { openKvStateStore } from "../../../../adapters/store/kv/state_store.ts";
import { trustOf } from "../../../../core/ports/state_store.ts";
import { type AttemptRecord, cellKey } from "../../../../core/bench/records.ts";
import { attemptRecord } from "../../../helpers/records.ts";

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

/** Runs `fn` with a new temporary directory, removed after it however `fn` ends. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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

Deno.test("putPromotion() keeps the first record when two handles promote at once", () =>
  inTempDir(async (dir) => {
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
  }));

Deno.test("openKvStateStore() on a file sees what another handle committed", () =>
  inTempDir(async (dir) => {
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
  }));

Deno.test("openKvStateStore() stores a record as its JSON text and reads the older inline form", () =>
  inTempDir(async (dir) => {
    const path = `${dir}/state.kv`;
    const state = await openKvStateStore(path, memoryBlobStore());
    const r = record({ verdict: { checks: { right: true }, reward: 1 }, listMicros: null });
    assert.equal(await state.putAttempt(r), true);
    state.close();
    const kv = await Deno.openKv(path);
    const key = ["cell", "e1", cellKey(r.candidate, r.caseId, r.repetition)];
    const stored = (await kv.get<{ j: string }>(key)).value;
    assert.deepEqual(stored, { j: JSON.stringify(r) });
    // A home written before: the record itself inline, what JSON keeps of it.
    const older = { ...r, caseId: "c2", elapsedMs: 7 };
    const olderKey = ["cell", "e1", cellKey(older.candidate, older.caseId, older.repetition)];
    await kv.set(olderKey, { v: JSON.parse(JSON.stringify(older)) });
    kv.close();
    const again = await openKvStateStore(path, memoryBlobStore());
    assert.deepEqual(await again.cellRecords("e1"), [r, older]);
    again.close();
  }));

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

Deno.test("takeLease() from two handles on one file lets exactly one owner win each cell", () =>
  inTempDir(async (dir) => {
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
  }));

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

Deno.test("putAttempts() commits a group, and keeps the others when one record's try was recorded first", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const group = Array.from({ length: 5 }, (_, i) => record({ repetition: i }));
  // Another process recorded try 1 of repetition 2 first, with another result.
  const theirs = record({ repetition: 2, elapsedMs: 99 });
  assert.equal(await state.putAttempt(theirs), true);
  assert.deepEqual(await state.putAttempts(group.map((record) => ({ record }))), [
    true,
    true,
    false,
    true,
    true,
  ]);
  const cells = await state.cellRecords("e1");
  assert.deepEqual(cells.map((c) => [c.repetition, c.elapsedMs]), [
    [0, 10],
    [1, 10],
    [2, 99],
    [3, 10],
    [4, 10],
  ]);
  assert.equal((await state.attemptHistory("e1")).length, 5);
  // A group without a conflict is written whole; a second time, nothing of it.
  const next = Array.from({ length: 3 }, (_, i) => record({ repetition: i, tryNo: 2 }));
  assert.deepEqual(await state.putAttempts(next.map((record) => ({ record }))), [true, true, true]);
  assert.deepEqual(await state.putAttempts(next.map((record) => ({ record }))), [
    false,
    false,
    false,
  ]);
  assert.equal((await state.attemptHistory("e1")).length, 8);
  state.close();
});

Deno.test("putAttempts() splits a group over KV's limits into several commits", async () => {
  const blobs = memoryBlobStore();
  const state = await openKvStateStore(":memory:", blobs);
  // 120 records (over 100 checks in one commit), each ~25,000 characters (over 819,200 bytes
  // together), none large enough for a blob.
  const checks: Record<string, boolean> = {};
  for (let i = 0; i < 1300; i++) checks[`check-${i}`] = i % 3 === 0;
  const group = Array.from(
    { length: 120 },
    (_, i) => record({ repetition: i, verdict: { checks, reward: 0.25 } }),
  );
  assert.ok(JSON.stringify(group[0]).length > 20_000);
  const oks = await state.putAttempts(group.map((record) => ({ record })));
  assert.equal(oks.filter((ok) => ok).length, 120);
  assert.equal(blobs.size(), 0);
  assert.equal((await state.cellRecords("e1")).length, 120);
  state.close();
});

Deno.test("putAttempts() releases the owner's leases of its cells with the records, no other's", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const recs = [0, 1, 2].map((i) => record({ repetition: i }));
  const cells = recs.map((r) => cellKey(r.candidate, r.caseId, r.repetition));
  const takes = await state.takeLeases("e1", cells.slice(0, 2), A, 10_000);
  assert.deepEqual(takes.map((t) => t.ok), [true, true]);
  assert.equal((await state.takeLease("e1", cells[2], B, 10_000)).ok, true);
  assert.deepEqual(await state.putAttempts(recs.map((record) => ({ record })), A.owner), [
    true,
    true,
    true,
  ]);
  assert.equal(await state.leaseOf("e1", cells[0]), null);
  assert.equal(await state.leaseOf("e1", cells[1]), null);
  assert.equal((await state.leaseOf("e1", cells[2]))?.owner, B.owner);
  state.close();
});

Deno.test("takeLeases() takes free, own and expired leases in one go and refuses live ones of others", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const t = 1_700_000_000_000;
  assert.equal((await state.takeLease("e1", "live", B, 1000, t)).ok, true);
  assert.equal((await state.takeLease("e1", "expired", B, 100, t)).ok, true);
  assert.equal((await state.takeLease("e1", "own", A, 100, t)).ok, true);
  const cells = [
    "free",
    "live",
    "expired",
    "own",
    ...Array.from({ length: 100 }, (_, i) => `c${i}`),
  ];
  const takes = await state.takeLeases("e1", cells, A, 1000, t + 500);
  assert.deepEqual(takes.slice(0, 4).map((x) => x.ok), [true, false, true, true]);
  assert.equal(takes.filter((x) => x.ok).length, cells.length - 1);
  const refused = takes[1];
  assert.equal(!refused.ok && refused.holder.owner, B.owner);
  for (const c of ["free", "expired", "own", "c99"]) {
    assert.deepEqual(await state.leaseOf("e1", c), { ...A, until: t + 1500 });
  }
  // Renewed by their owner only; released by their owner only.
  assert.deepEqual(await state.renewLeases("e1", ["free", "live"], A.owner, 1000, t + 900), [
    true,
    false,
  ]);
  assert.equal((await state.leaseOf("e1", "free"))?.until, t + 1900);
  assert.equal((await state.leaseOf("e1", "live"))?.until, t + 1000);
  await state.releaseLeases("e1", ["free", "live"], A.owner);
  assert.equal(await state.leaseOf("e1", "free"), null);
  assert.equal((await state.leaseOf("e1", "live"))?.owner, B.owner);
  state.close();
});

Deno.test("renewLeases() fails for a lease another holder took over after it ran out", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const t = 1_700_000_000_000;
  await state.takeLeases("e1", ["a", "b"], A, 100, t);
  // A stops renewing; B takes "b" over once A's lease ran out.
  assert.equal((await state.takeLease("e1", "b", B, 1000, t + 200)).ok, true);
  assert.deepEqual(await state.renewLeases("e1", ["a", "b"], A.owner, 100, t + 210), [true, false]);
  assert.equal((await state.leaseOf("e1", "b"))?.owner, B.owner);
  assert.equal((await state.leaseOf("e1", "a"))?.until, t + 310);
  state.close();
});

Deno.test("takeLeases() from two handles on one file lets exactly one owner win each cell", () =>
  inTempDir(async (dir) => {
    const a = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
    const b = await openKvStateStore(`${dir}/state.kv`, memoryBlobStore());
    const cells = Array.from({ length: 60 }, (_, i) => `cell-${i}`);
    const groups = [cells.slice(0, 30), cells.slice(20, 50), cells.slice(10, 60)];
    const takes = await Promise.all(
      groups.flatMap((g) => [
        a.takeLeases("e1", g, A, 10_000).then((t) => t.map((x, i) => [g[i], x.ok && "a"] as const)),
        b.takeLeases("e1", g, B, 10_000).then((t) => t.map((x, i) => [g[i], x.ok && "b"] as const)),
      ]),
    );
    for (const c of cells) {
      const winners = new Set(
        takes.flat().filter(([cell, who]) => cell === c && who).map(([, w]) => w),
      );
      assert.equal(winners.size, 1, `${c}: ${[...winners]}`);
      const owner = (await a.leaseOf("e1", c))?.owner;
      assert.equal(owner, winners.has("a") ? "run-a" : "run-b");
    }
    a.close();
    b.close();
  }));

Deno.test("cellRecordsOf() reads several cells' latest records in their order", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  await state.putAttempts([{ record: record({ repetition: 0 }) }, {
    record: record({ repetition: 3, tryNo: 2 }),
  }]);
  const cells = Array.from({ length: 12 }, (_, i) => cellKey("builtin:reference", "c1", i));
  const got = await state.cellRecordsOf("e1", cells);
  assert.equal(got.length, 12);
  assert.deepEqual(got.map((r) => r?.tryNo ?? null), [1, null, null, 2, ...Array(8).fill(null)]);
  state.close();
});

Deno.test("cellRecordsOf() keeps the cells' order over many KV reads made at once", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  // 175 cells: 18 reads of 10 keys, more than are made at once; every 7th cell recorded.
  const reps = Array.from({ length: 175 }, (_, i) => (i * 37) % 175);
  await state.putAttempts(
    reps.filter((r) => r % 7 === 0).map((r) => ({
      record: record({ repetition: r, elapsedMs: r }),
    })),
  );
  const got = await state.cellRecordsOf(
    "e1",
    reps.map((r) => cellKey("builtin:reference", "c1", r)),
  );
  assert.deepEqual(got.map((r) => r?.elapsedMs ?? null), reps.map((r) => r % 7 === 0 ? r : null));
  state.close();
});

Deno.test("putAttempts() stores a record's small blobs with it, read back through the store's blobs", async () => {
  const files = memoryBlobStore();
  const state = await openKvStateStore(":memory:", files);
  const evidence = new TextEncoder().encode('{"captured":{"/out/answer.txt":"w1"}}');
  const id = blobId(evidence);
  const mine = record({ evidenceRef: id });
  // Another process recorded repetition 1 first: its group falls back, one record at a time.
  assert.equal(await state.putAttempt(record({ repetition: 1 })), true);
  const oks = await state.putAttempts([
    { record: mine, blobs: new Map([[id, evidence]]) },
    { record: record({ repetition: 1 }) },
  ]);
  assert.deepEqual(oks, [true, false]);
  assert.deepEqual(await getJson(state.blobs, id), { captured: { "/out/answer.txt": "w1" } });
  assert.equal(await state.blobs.has(id), true);
  assert.equal(files.size(), 0, "no file was written for it");
  // Blobs put through the view go to the blob store, and are read from it.
  const big = await state.blobs.put("x".repeat(100));
  assert.equal(files.size(), 1);
  assert.equal(new TextDecoder().decode((await state.blobs.get(big))!), "x".repeat(100));
  assert.equal(await state.blobs.get("0".repeat(64)), null);
  state.close();
});

Deno.test("putAttempts() and renewLeases() go on when a lease changed under its remembered versionstamp", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const recs = [0, 1, 2].map((i) => record({ repetition: i }));
  const cells = recs.map((r) => cellKey(r.candidate, r.caseId, r.repetition));
  const t = 1_700_000_000_000;
  await state.takeLeases("e1", cells, A, 1000, t);
  // Renewed one at a time (as a renewal that landed while a batch was on its way).
  assert.equal(await state.renewLease("e1", cells[1], A.owner, 1000, t + 100), true);
  assert.deepEqual(await state.renewLeases("e1", cells, A.owner, 1000, t + 200), [
    true,
    true,
    true,
  ]);
  assert.equal(await state.renewLease("e1", cells[2], A.owner, 1000, t + 300), true);
  assert.deepEqual(await state.putAttempts(recs.map((record) => ({ record })), A.owner), [
    true,
    true,
    true,
  ]);
  for (const c of cells) assert.equal(await state.leaseOf("e1", c), null);
  assert.equal((await state.attemptHistory("e1")).length, 3);
  state.close();
});

Deno.test("putAttempts() with one try recorded first by another keeps the others and releases every lease", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const recs = [0, 1, 2, 3].map((i) => record({ repetition: i }));
  const cells = recs.map((r) => cellKey(r.candidate, r.caseId, r.repetition));
  await state.takeLeases("e1", cells, A, 10_000);
  assert.equal(await state.putAttempt(record({ repetition: 2, elapsedMs: 77 })), true);
  const evidence = new TextEncoder().encode("{}");
  const oks = await state.putAttempts(
    recs.map((record) => ({ record, blobs: new Map([[blobId(evidence), evidence]]) })),
    A.owner,
  );
  assert.deepEqual(oks, [true, true, false, true]);
  for (const c of cells) assert.equal(await state.leaseOf("e1", c), null);
  const kept = await state.cellRecordsOf("e1", cells);
  assert.deepEqual(kept.map((r) => r?.elapsedMs), [10, 10, 77, 10]);
  state.close();
});
