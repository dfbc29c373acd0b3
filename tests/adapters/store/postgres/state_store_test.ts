import assert from "node:assert/strict";
import { startPostgres } from "../../../helpers/postgres.ts";
import { openPostgresStateStore } from "../../../../adapters/store/postgres/state_store.ts";
import {
  collect,
  streamAttemptHistory,
  streamCellRecords,
} from "../../../../adapters/store/postgres/records.ts";
import { connectPostgres } from "../../../../adapters/store/postgres/connect.ts";
import {
  closeExperiment,
  enqueueExperiment,
  markWorker,
  openExperiments,
  progressByWorker,
  queueState,
} from "../../../../adapters/store/postgres/queue.ts";
import { type AttemptRecord, cellKey } from "../../../../core/bench/records.ts";
import type { StateStore } from "../../../../core/ports/state_store.ts";

const cluster = await startPostgres();
const ignore = cluster === null;
Deno.test.afterAll(async () => await cluster?.stop());

function record(candidate: string, caseId: string, rep: number, tryNo: number): AttemptRecord {
  return {
    experimentId: "e1",
    candidate,
    caseId,
    repetition: rep,
    inputHash: "h",
    tryNo,
    startedAt: `2026-12-01T00:00:0${tryNo}Z`,
    elapsedMs: 5,
    status: "completed",
    verdict: { checks: { "z-last": true, "a-first": false }, reward: 0.5 },
    fault: null,
    passed: false,
    usage: { inputTokens: 0, outputTokens: 0 },
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    trust: "ad-hoc",
    evidenceRef: null,
  } as unknown as AttemptRecord;
}

async function withStore(f: (s: StateStore, url: string) => Promise<void>) {
  const url = await cluster!.database();
  const s = await openPostgresStateStore(url, { max: 4 });
  try {
    await f(s, url);
  } finally {
    s.close();
  }
}

const meta = {
  id: "e1",
  room: "r1",
  bundleName: "b",
  bundleId: "B",
  createdAt: "2026-12-01T00:00:00Z",
  cells: 4,
  definition: { z: 1, a: 2 },
};

Deno.test({
  name: "postgresStateStore() keeps an experiment's first createdAt and records a try once",
  ignore,
  async fn() {
    await withStore(async (s) => {
      const v0 = await s.roomVersion("r1");
      await s.putExperiment(meta);
      const again = await s.putExperiment({ ...meta, createdAt: "2027-01-01T00:00:00Z", cells: 5 });
      assert.equal(again.createdAt, meta.createdAt);
      assert.equal((await s.getExperiment("e1"))!.cells, 5);
      assert.deepEqual(Object.keys((await s.getExperiment("e1"))!.definition), ["z", "a"]);
      assert.deepEqual((await s.listExperiments("r1")).map((m) => m.id), ["e1"]);
      assert.deepEqual(await s.listExperiments("other"), []);
      assert.notEqual(await s.roomVersion("r1"), v0);
      assert.equal(await s.putAttempt(record("a", "c1", 0, 1)), true);
      assert.equal(await s.putAttempt(record("a", "c1", 0, 1)), false);
      assert.equal(await s.putAttempt(record("a", "c1", 0, 2)), true);
      const latest = await s.cellRecord("e1", cellKey("a", "c1", 0));
      assert.equal(latest!.tryNo, 2);
      // Read back as written: the checks keep their order.
      assert.deepEqual(Object.keys(latest!.verdict!.checks), ["z-last", "a-first"]);
      assert.deepEqual(
        (await s.cellRecordsOf("e1", [cellKey("b", "c1", 0), cellKey("a", "c1", 0)]))
          .map((r) => r?.tryNo ?? null),
        [null, 2],
      );
    });
  },
});

Deno.test({
  name:
    "postgresStateStore() leases: one holder at a time, taken over when expired, fenced commits",
  ignore,
  async fn() {
    await withStore(async (s) => {
      await s.putExperiment(meta);
      const cell = cellKey("a", "c1", 0);
      const w1 = { pid: 1, host: "m1", owner: "w1" };
      const w2 = { pid: 2, host: "m2", owner: "w2" };
      const t = 1_000_000;
      const [a, b] = await Promise.all([
        s.takeLease("e1", cell, w1, 1000, t),
        s.takeLease("e1", cell, w2, 1000, t),
      ]);
      assert.equal([a, b].filter((x) => x.ok).length, 1);
      const first = a.ok ? w1 : w2;
      const second = a.ok ? w2 : w1;
      const refused = a.ok ? b : a;
      assert(
        !refused.ok && refused.holder.owner === first.owner && refused.holder.until === t + 1000,
      );
      assert.equal(await s.renewLease("e1", cell, second.owner, 1000, t + 10), false);
      assert.equal(await s.renewLease("e1", cell, first.owner, 1000, t + 500), true);
      // The first holder dies; its lease runs out and the second takes the cell over.
      assert.equal((await s.takeLease("e1", cell, second, 1000, t + 1400)).ok, false);
      assert.equal((await s.takeLease("e1", cell, second, 1000, t + 1501)).ok, true);
      // The first one's late record is refused: the cell is the second's now.
      const late = await s.putAttempts([{ record: record("a", "c1", 0, 1) }], first.owner);
      assert.deepEqual(late, [false]);
      const done = await s.putAttempts([{
        record: record("a", "c1", 0, 1),
        blobs: new Map([["ab".repeat(32), new Uint8Array([1, 2, 3])]]),
      }], second.owner);
      assert.deepEqual(done, [true]);
      assert.equal(await s.leaseOf("e1", cell), null, "the commit released the lease");
      assert.deepEqual(await s.blobs.get("ab".repeat(32)), new Uint8Array([1, 2, 3]));
      // Batches: taken, renewed, released in their order.
      const cells = [cellKey("b", "c1", 0), cellKey("b", "c2", 0)];
      assert.deepEqual((await s.takeLeases("e1", cells, w1, 1000, t)).map((x) => x.ok), [
        true,
        true,
      ]);
      assert.deepEqual(await s.renewLeases("e1", [cells[1], "nope"], "w1", 1000, t), [true, false]);
      await s.releaseLeases("e1", cells, "w2");
      assert.equal((await s.leaseOf("e1", cells[0]))!.owner, "w1");
      assert.equal(await s.breakLease("e1", cells[0], "w1"), true);
      assert.equal(await s.breakLease("e1", cells[0], "w1"), false);
    });
  },
});

Deno.test({
  name:
    "postgresStateStore() leases run out on the server's clock, whatever the workers' clocks say",
  ignore,
  async fn() {
    const url = await cluster!.database();
    const MIN = 60_000;
    // Two workers whose clocks are ten minutes behind and ahead of the server's (and this one's).
    const behind = () => Date.now() - 10 * MIN;
    const ahead = () => Date.now() + 10 * MIN;
    const slow = await openPostgresStateStore(url, { max: 2, clock: behind });
    const fast = await openPostgresStateStore(url, { max: 2, clock: ahead });
    const right = await openPostgresStateStore(url, { max: 2 });
    try {
      await right.putExperiment(meta);
      const [c1, c2] = [cellKey("a", "c1", 0), cellKey("a", "c2", 0)];
      const w = (owner: string) => ({ pid: 1, host: owner, owner });
      // A worker whose clock is behind holds its lease for the time it asked, not less.
      const held = await slow.takeLease("e1", c1, w("slow"), 30_000, behind());
      assert(held.ok);
      assert(Math.abs(held.lease.until - (behind() + 30_000)) < 5_000, "until on its own clock");
      const taken = await right.takeLease("e1", c1, w("right"), 30_000, Date.now());
      assert(!taken.ok && taken.holder.owner === "slow", "a live lease is not taken over");
      const seen = (await right.leaseOf("e1", c1))!;
      assert(Math.abs(seen.until - (Date.now() + 30_000)) < 5_000, "until on the reader's clock");
      // A worker whose clock is ahead does not keep its lease long past the time it asked.
      assert((await fast.takeLease("e1", c2, w("fast"), 200, ahead())).ok);
      let over = false;
      for (let i = 0; i < 100 && !over; i++) {
        await new Promise((r) => setTimeout(r, 50));
        over = (await right.takeLease("e1", c2, w("right"), 30_000, Date.now())).ok;
      }
      assert(over, "the lease ran out 0.2 s after it was taken, on the server's clock");
      assert.equal(await fast.renewLease("e1", c2, "fast", 30_000, ahead()), false);
    } finally {
      for (const s of [slow, fast, right]) s.close();
    }
  },
});

Deno.test({
  name: "postgresStateStore() streams latest records and every try in key order, a page at a time",
  ignore,
  async fn() {
    await withStore(async (s, url) => {
      await s.putExperiment(meta);
      const commits = [];
      for (const cand of ["b", "a", "é"]) {
        for (let rep = 0; rep < 3; rep++) {
          for (let n = 1; n <= 2; n++) commits.push({ record: record(cand, "c1", rep, n) });
        }
      }
      assert((await s.putAttempts(commits)).every((x) => x));
      const keys = (rs: AttemptRecord[]) =>
        rs.map((r) => `${cellKey(r.candidate, r.caseId, r.repetition)}#${r.tryNo}`);
      const latest = await s.cellRecords("e1");
      assert.equal(latest.length, 9);
      assert(latest.every((r) => r.tryNo === 2));
      const sorted = [...keys(latest)].sort((x, y) => (Buffer.from(x) < Buffer.from(y) ? -1 : 1));
      assert.deepEqual(keys(latest), sorted);
      const sql = await connectPostgres(url, { max: 1 });
      try {
        // Pages of 2 and 4 give the same as one page.
        assert.deepEqual(keys(await collect(streamCellRecords(sql, "e1", 2))), keys(latest));
        const history = await s.attemptHistory("e1");
        assert.equal(history.length, 18);
        assert.deepEqual(keys(await collect(streamAttemptHistory(sql, "e1", 4))), keys(history));
      } finally {
        await sql.end();
      }
    });
  },
});

Deno.test({
  name: "postgresStateStore() jobs, cancels, scorecards and promotions",
  ignore,
  async fn() {
    await withStore(async (s) => {
      const job = (id: string, at: string, room: string | null) =>
        ({ id, room, startedAt: at, status: "running" }) as never;
      await s.putJob(job("j1", "2026-12-01T00:00:01Z", "r1"));
      await s.putJob(job("j2", "2026-12-01T00:00:02Z", null));
      assert.deepEqual((await s.listJobs()).map((j) => j.id), ["j2", "j1"]);
      assert.deepEqual((await s.listJobs("r1")).map((j) => j.id), ["j1"]);
      assert.equal(await s.jobCancelRequested("j1"), false);
      await s.requestJobCancel("j1");
      assert.equal(await s.jobCancelRequested("j1"), true);
      await s.putScorecard("e1", { x: [1, 2] });
      assert.deepEqual(await s.getScorecard("e1"), { x: [1, 2] });
      assert.equal(await s.promotion("B"), null);
      const p1 = { room: "r1", name: "b", at: "t1" };
      assert.deepEqual(await s.putPromotion("B", p1), p1);
      assert.deepEqual(await s.putPromotion("B", { ...p1, at: "t2" }), p1);
    });
  },
});

Deno.test({
  name: "the queue opens and closes experiments; progress is told by the run that committed",
  ignore,
  async fn() {
    await withStore(async (s, url) => {
      await s.putExperiment(meta);
      const sql = await connectPostgres(url, { max: 1 });
      try {
        assert.deepEqual(await openExperiments(sql), []);
        const request = {
          bundle: { name: "b", files: "f".repeat(64) },
          room: "b",
          specs: [{ kind: "builtin", name: "builtin:noop" }],
          plan: { repetitions: 2 },
        };
        await enqueueExperiment(sql, "e1", request);
        const open = await openExperiments(sql);
        assert.deepEqual(open.map((q) => [q.experiment, q.request]), [["e1", request]]);
        assert.equal(await queueState(sql, "e1"), "open");
        await markWorker(sql, { id: "w1", host: "m1", pid: 7 });
        await s.takeLeases(
          "e1",
          [cellKey("a", "c2", 0)],
          { pid: 7, host: "m1", owner: "w1" },
          60_000,
        );
        await s.putAttempts([{ record: record("a", "c1", 0, 1) }], "w1");
        await s.putAttempts([{ record: record("b", "c1", 0, 1) }], "w2");
        const progress = await progressByWorker(sql, "e1");
        assert.deepEqual(
          progress.map((p) => [p.owner, p.host, p.records, p.inFlight]),
          [["w1", "m1", 1, 1], ["w2", null, 1, 0]],
        );
        await closeExperiment(sql, "e1");
        assert.deepEqual(await openExperiments(sql), []);
        assert.equal(await queueState(sql, "e1"), "closed");
      } finally {
        await sql.end();
      }
    });
  },
});
