/**
 * The StateStore contract (core/ports/state_store.ts): what every implementation must do,
 * as one suite run against each of them by tests/ports/state_store_test.ts.
 *
 * A new implementation plugs in with one line there:
 *
 * ```ts
 * stateStoreContract("myStore", async () => ({ store: await openMyStore(), close: async () => {} }));
 * ```
 *
 * The factory gives a fresh, empty store per test (a new database, directory or handle) and
 * a `close` that removes what it made; pass `{ ignore: true }` when the store cannot run on
 * this host (no server), as the PostgreSQL store does without one.
 *
 * Covered: experiments (first createdAt kept, listing order and room filter), records (a try
 * accepted once, the latest per cell, history in key order, large values), cell leases (two
 * holders, expiry on a fake timer's clock, renewal, release and break by the holder only),
 * the batch operations (leases of many cells, records committed with their small blobs and
 * the committer's leases released, a claimed try refused alone), streams over several pages,
 * scorecards, promotions (the first stays), jobs and their cancel requests, and room
 * versions. Records are accepted whoever holds a cell's lease (the embedded store's
 * semantics); an implementation may refuse more (PostgreSQL refuses a record whose lease
 * another owner took over), which its own tests say.
 */
import assert from "node:assert/strict";
import { type AttemptRecord, cellKey } from "../../core/bench/records.ts";
import type { JobRecord } from "../../core/jobs.ts";
import { blobId } from "../../core/ports/blob_store.ts";
import type { ExperimentMeta, StateStore } from "../../core/ports/state_store.ts";
import { attemptRecord } from "../helpers/records.ts";
import { fakeTimer } from "../helpers/fake_timer.ts";

export interface StateStoreSubject {
  store: StateStore;
  /** Closes the store and removes what the factory made for it. */
  close(): Promise<void>;
}

export type StateStoreFactory = () => Promise<StateStoreSubject>;

const A = { pid: 101, host: "h1", owner: "run-a" };
const B = { pid: 202, host: "h2", owner: "run-b" };

function meta(over: Partial<ExperimentMeta> = {}): ExperimentMeta {
  return {
    id: "exp-1",
    room: "r1",
    bundleName: "b",
    bundleId: "bundle-id",
    createdAt: "2026-10-01T08:00:00.000Z",
    cells: 4,
    definition: { cases: ["c1", "c2"], nested: { z: 1, a: [1, 2] } },
    ...over,
  };
}

function rec(candidate: string, caseId: string, tryNo = 1, over: Partial<AttemptRecord> = {}) {
  return attemptRecord({ experimentId: "exp-1", candidate, caseId, tryNo, ...over });
}

function job(id: string, room: string | null, startedAt: string): JobRecord {
  return {
    id,
    kind: "benchmark",
    room,
    status: "running",
    startedAt,
    finishedAt: null,
    progress: { done: 0, total: 4, faults: 0, phase: "running" },
    result: null,
    error: null,
    reason: null,
    pid: 1,
    owner: "o",
  };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const shape = (r: AttemptRecord | null) => r && [r.candidate, r.caseId, r.repetition, r.tryNo];

/** Registers the contract's tests for one implementation. */
export function stateStoreContract(
  name: string,
  open: StateStoreFactory,
  opts: { ignore?: boolean } = {},
): void {
  const test = (what: string, fn: (s: StateStore) => Promise<void>) =>
    Deno.test({
      name: `StateStore contract [${name}]: ${what}`,
      ignore: opts.ignore,
      async fn() {
        const subject = await open();
        try {
          await fn(subject.store);
        } finally {
          await subject.close();
        }
      },
    });

  test("putExperiment() keeps the first createdAt; listExperiments() is oldest first, by room", async (s) => {
    assert.equal(await s.getExperiment("exp-1"), null);
    assert.deepEqual(await s.putExperiment(meta()), meta());
    const again = await s.putExperiment(meta({ createdAt: "2027-01-01T00:00:00.000Z", cells: 9 }));
    assert.equal(again.createdAt, meta().createdAt);
    assert.equal(again.cells, 9);
    assert.deepEqual(await s.getExperiment("exp-1"), again);
    await s.putExperiment(meta({ id: "exp-0", createdAt: "2026-09-01T00:00:00.000Z" }));
    await s.putExperiment(meta({ id: "exp-2", room: "r2", createdAt: "2026-11-01T00:00:00.000Z" }));
    assert.deepEqual((await s.listExperiments()).map((m) => m.id), ["exp-0", "exp-1", "exp-2"]);
    assert.deepEqual((await s.listExperiments("r2")).map((m) => m.id), ["exp-2"]);
    assert.deepEqual(await s.listExperiments("nowhere"), []);
  });

  test("putAttempt() accepts a try once; the cell's latest is its newest try", async (s) => {
    await s.putExperiment(meta());
    const cell = cellKey("a", "c1", 0);
    assert.equal(await s.cellRecord("exp-1", cell), null);
    assert.equal(await s.putAttempt(rec("a", "c1", 1, { passed: false })), true);
    assert.equal(await s.putAttempt(rec("a", "c1", 1, { elapsedMs: 7 })), false);
    assert.equal(
      (await s.cellRecord("exp-1", cell))!.elapsedMs,
      1000,
      "the second writer wrote nothing",
    );
    assert.equal(await s.putAttempt(rec("a", "c1", 2)), true);
    assert.deepEqual(shape(await s.cellRecord("exp-1", cell)), ["a", "c1", 0, 2]);
    assert.deepEqual(await s.cellRecord("exp-1", cell), rec("a", "c1", 2));
  });

  test("cellRecords() and attemptHistory() are in key order, a cell's tries together by number", async (s) => {
    await s.putExperiment(meta());
    // Cells written out of key order (["b","c2",0] first), each cell's tries in order (as
    // the engine writes them: a try's number follows the latest it read; the KV store's
    // latest is the one written last, PostgreSQL's the highest try).
    const writes = [
      ["b", "c2", 1],
      ["a", "c10", 1],
      ["a", "c1", 1],
      ["b", "c2", 2],
      ["a", "c1", 2],
      ["a", "c1", 3],
    ] as const;
    for (const [c, k, n] of writes) assert.equal(await s.putAttempt(rec(c, k, n)), true);
    assert.equal(await s.putAttempt(rec("z", "c9", 1, { experimentId: "exp-other" })), true);
    const latest = (await s.cellRecords("exp-1")).map((r) =>
      `${r.candidate}:${r.caseId}:${r.tryNo}`
    );
    assert.deepEqual(latest, ["a:c1:3", "a:c10:1", "b:c2:2"]);
    const history = (await s.attemptHistory("exp-1")).map((r) =>
      `${r.candidate}:${r.caseId}:${r.tryNo}`
    );
    assert.deepEqual(history, ["a:c1:1", "a:c1:2", "a:c1:3", "a:c10:1", "b:c2:1", "b:c2:2"]);
    assert.deepEqual(await s.cellRecords("exp-none"), []);
  });

  test("a record larger than a KV value round-trips whole", async (s) => {
    await s.putExperiment(meta());
    const big = rec("a", "c1", 1, {
      verdict: { checks: { long: true }, reward: 1 },
      startedAt: "2026-10-01T08:00:00.000Z",
    });
    const record = { ...big, fault: null, evidenceRef: "x".repeat(200_000) };
    assert.equal(await s.putAttempt(record), true);
    assert.deepEqual(await s.cellRecord("exp-1", cellKey("a", "c1", 0)), record);
    assert.deepEqual((await s.attemptHistory("exp-1"))[0], record);
  });

  test("takeLease() gives a cell to one holder until its time runs out on the caller's clock", async (s) => {
    const timer = fakeTimer();
    const t0 = timer.now();
    const took = await s.takeLease("exp-1", "cell", A, 1000, t0);
    assert.deepEqual(took, { ok: true, lease: { ...A, until: t0 + 1000 } });
    const refused = await s.takeLease("exp-1", "cell", B, 1000, t0 + 10);
    assert.deepEqual(refused, { ok: false, holder: { ...A, until: t0 + 1000 } });
    assert.deepEqual(await s.leaseOf("exp-1", "cell"), { ...A, until: t0 + 1000 });
    // Renewal moves the holder's time on; another owner cannot renew it.
    await timer.advance(900);
    assert.equal(await s.renewLease("exp-1", "cell", A.owner, 1000, timer.now()), true);
    assert.equal(await s.renewLease("exp-1", "cell", B.owner, 1000, timer.now()), false);
    await timer.advance(900);
    assert.equal(
      (await s.takeLease("exp-1", "cell", B, 1000, timer.now())).ok,
      false,
      "renewed: still A's",
    );
    // A stops renewing: once its time has passed, B takes the cell over, and A cannot renew.
    await timer.advance(200);
    const over = await s.takeLease("exp-1", "cell", B, 1000, timer.now());
    assert.deepEqual(over, { ok: true, lease: { ...B, until: timer.now() + 1000 } });
    assert.equal(await s.renewLease("exp-1", "cell", A.owner, 1000, timer.now()), false);
    // Taking a lease its owner holds renews it.
    const again = await s.takeLease("exp-1", "cell", B, 5000, timer.now());
    assert.deepEqual(again, { ok: true, lease: { ...B, until: timer.now() + 5000 } });
    timer.stop();
  });

  test("releaseLease() and breakLease() act only for the lease's owner", async (s) => {
    const now = 1_700_000_000_000;
    await s.takeLease("exp-1", "cell", A, 60_000, now);
    await s.releaseLease("exp-1", "cell", B.owner);
    assert.equal((await s.leaseOf("exp-1", "cell"))?.owner, A.owner);
    assert.equal(await s.breakLease("exp-1", "cell", B.owner), false);
    assert.equal(await s.breakLease("exp-1", "cell", A.owner), true);
    assert.equal(await s.leaseOf("exp-1", "cell"), null);
    assert.equal((await s.takeLease("exp-1", "cell", B, 60_000, now)).ok, true);
    await s.releaseLease("exp-1", "cell", B.owner);
    assert.equal(await s.leaseOf("exp-1", "cell"), null);
    assert.equal(await s.breakLease("exp-1", "cell", B.owner), false);
    // Leases are per experiment.
    assert.equal((await s.takeLease("exp-1", "x", A, 60_000, now)).ok, true);
    assert.equal((await s.takeLease("exp-2", "x", B, 60_000, now)).ok, true);
  });

  test("takeLeases(), renewLeases() and releaseLeases() act cell by cell, in order", async (s) => {
    const now = 1_700_000_000_000;
    const cells = Array.from({ length: 130 }, (_, i) => `cell-${String(i).padStart(3, "0")}`);
    await s.takeLease("exp-1", cells[5], B, 60_000, now);
    const taken = await s.takeLeases("exp-1", cells, A, 1000, now);
    assert.deepEqual(taken.map((t) => t.ok), cells.map((_, i) => i !== 5));
    assert.deepEqual(taken[5], { ok: false, holder: { ...B, until: now + 60_000 } });
    const renewed = await s.renewLeases("exp-1", cells, A.owner, 1000, now + 500);
    assert.deepEqual(renewed, cells.map((_, i) => i !== 5));
    assert.equal((await s.leaseOf("exp-1", cells[0]))?.until, now + 1500);
    await s.releaseLeases("exp-1", cells, A.owner);
    assert.equal(await s.leaseOf("exp-1", cells[0]), null);
    assert.equal(await s.leaseOf("exp-1", cells[129]), null);
    assert.equal((await s.leaseOf("exp-1", cells[5]))?.owner, B.owner, "another's lease stays");
  });

  test("putAttempts() commits records with their small blobs and releases the committer's leases", async (s) => {
    await s.putExperiment(meta());
    const records = Array.from(
      { length: 45 },
      (_, i) => rec("a", `c${String(i).padStart(2, "0")}`),
    );
    const cells = records.map((r) => cellKey(r.candidate, r.caseId, r.repetition));
    const now = Date.now();
    await s.takeLeases("exp-1", cells, A, 60_000, now);
    const evidence = new TextEncoder().encode("small evidence");
    const id = blobId(evidence);
    const ok = await s.putAttempts(
      records.map((record, i) => ({
        record,
        blobs: i === 0 ? new Map([[id, evidence]]) : undefined,
      })),
      A.owner,
    );
    assert.deepEqual(ok, records.map(() => true));
    assert.deepEqual(await s.cellRecordsOf("exp-1", [cells[3], "no-such-cell", cells[0]]), [
      records[3],
      null,
      records[0],
    ]);
    for (const c of [cells[0], cells[44]]) assert.equal(await s.leaseOf("exp-1", c), null);
    assert.deepEqual(await s.blobs.get(id), evidence);
    assert.equal(await s.blobs.has(id), true);
  });

  test("putAttempts() refuses only a try another writer claimed first", async (s) => {
    await s.putExperiment(meta());
    assert.equal(await s.putAttempt(rec("a", "c2", 1, { elapsedMs: 5 })), true);
    const ok = await s.putAttempts(
      [rec("a", "c1"), rec("a", "c2"), rec("a", "c3")].map((record) => ({ record })),
    );
    assert.deepEqual(ok, [true, false, true]);
    assert.equal((await s.cellRecord("exp-1", cellKey("a", "c2", 0)))!.elapsedMs, 5);
    assert.equal((await s.attemptHistory("exp-1")).length, 3);
    // Records of several experiments in one call.
    const mixed = await s.putAttempts([{ record: rec("a", "c1", 2) }, {
      record: rec("a", "c1", 1, { experimentId: "exp-2" }),
    }]);
    assert.deepEqual(mixed, [true, true]);
    assert.equal((await s.cellRecords("exp-2")).length, 1);
  });

  test("streamCellRecords() and streamAttemptHistory() give what the lists give, over several pages", async (s) => {
    await s.putExperiment(meta());
    const records: AttemptRecord[] = [];
    for (let i = 0; i < 700; i++) {
      const caseId = `c${String(i).padStart(4, "0")}`;
      records.push(rec("a", caseId, 1), ...(i % 3 === 0 ? [rec("a", caseId, 2)] : []));
    }
    for (let i = 0; i < records.length; i += 40) {
      assert.ok(
        (await s.putAttempts(records.slice(i, i + 40).map((record) => ({ record })))).every(
          Boolean,
        ),
      );
    }
    const latest = await collect(s.streamCellRecords("exp-1"));
    assert.equal(latest.length, 700);
    assert.deepEqual(latest, await s.cellRecords("exp-1"));
    const history = await collect(s.streamAttemptHistory("exp-1"));
    assert.equal(history.length, records.length);
    assert.deepEqual(history, await s.attemptHistory("exp-1"));
    assert.deepEqual(await collect(s.streamCellRecords("exp-none")), []);
  });

  test("scorecards and promotions: the first promotion of a content id stays", async (s) => {
    assert.equal(await s.getScorecard("exp-1"), null);
    await s.putScorecard("exp-1", { rows: [{ name: "a", mean: 0.5 }] });
    await s.putScorecard("exp-1", { rows: [{ name: "a", mean: 0.75 }] });
    assert.deepEqual(await s.getScorecard("exp-1"), { rows: [{ name: "a", mean: 0.75 }] });
    assert.equal(await s.promotion("B1"), null);
    const first = { room: "r1", name: "b", at: "2026-10-01T08:00:00.000Z" };
    assert.deepEqual(await s.putPromotion("B1", first), first);
    assert.deepEqual(await s.putPromotion("B1", { ...first, room: "r2" }), first);
    assert.deepEqual(await s.promotion("B1"), first);
  });

  test("jobs: listed newest first and by room, with cancel requests kept apart", async (s) => {
    await s.putJob(job("j1", "r1", "2026-10-01T08:00:00.000Z"));
    await s.putJob(job("j2", null, "2026-10-01T09:00:00.000Z"));
    await s.putJob(job("j3", "r1", "2026-10-01T10:00:00.000Z"));
    await s.putJob({ ...job("j1", "r1", "2026-10-01T08:00:00.000Z"), status: "succeeded" });
    assert.deepEqual((await s.listJobs()).map((j) => j.id), ["j3", "j2", "j1"]);
    assert.deepEqual((await s.listJobs("r1")).map((j) => j.id), ["j3", "j1"]);
    assert.equal((await s.getJob("j1"))?.status, "succeeded");
    assert.equal(await s.getJob("nope"), null);
    assert.equal(await s.jobCancelRequested("j3"), false);
    await s.requestJobCancel("j3");
    assert.equal(await s.jobCancelRequested("j3"), true);
    assert.equal((await s.getJob("j3"))?.status, "running");
  });

  test("roomVersion() moves with the room's records, not with another room's", async (s) => {
    const v0 = await s.roomVersion("r1");
    await s.putExperiment(meta());
    const v1 = await s.roomVersion("r1");
    assert.notEqual(v1, v0);
    await s.putAttempt(rec("a", "c1"));
    const v2 = await s.roomVersion("r1");
    assert.notEqual(v2, v1);
    await s.putAttempts([{ record: rec("a", "c2") }]);
    const v3 = await s.roomVersion("r1");
    assert.notEqual(v3, v2);
    await s.putScorecard("exp-1", { rows: [] });
    const v4 = await s.roomVersion("r1");
    assert.notEqual(v4, v3);
    await s.putJob(job("j1", "r1", "2026-10-01T08:00:00.000Z"));
    assert.notEqual(await s.roomVersion("r1"), v4);
    const other = await s.roomVersion("r2");
    await s.putAttempt(rec("a", "c3"));
    assert.equal(await s.roomVersion("r2"), other);
  });

  test("blobs: put by content id, read back whole, absent ids are null", async (s) => {
    const id = await s.blobs.put("evidence text");
    assert.equal(id, blobId("evidence text"));
    assert.deepEqual(new TextDecoder().decode((await s.blobs.get(id))!), "evidence text");
    assert.equal(await s.blobs.has(id), true);
    assert.equal(await s.blobs.get(blobId("never written")), null);
    assert.equal(await s.blobs.has(blobId("never written")), false);
  });
}
