import assert from "node:assert/strict";
import type { AttemptRecord } from "../../../core/bench/records.ts";
import { attemptRecord as record, T0 } from "../../helpers/records.ts";
import { buildScorecard, type ScorecardOptions } from "../../../core/bench/scorecard.ts";
import { DvergrError } from "../../../core/errors.ts";

const CASES = ["B0001", "B0002", "B0003", "B0004"];

/** The report_test fixture of the earlier system: luna 3 of 4, haiku 1 of 4. */
function fixture(): AttemptRecord[] {
  const starts = [0, 10_000, 20_000, 28_000];
  const luna = CASES.map((caseId, i) =>
    record({
      candidate: "luna",
      caseId,
      startedAt: new Date(T0 + starts[i]).toISOString(),
      elapsedMs: 20_000,
      passed: i < 3,
      verdict: {
        checks: { "answer-present": true, bu: i < 3, gegenkonto: true },
        reward: i < 3 ? 1 : 0.5,
      },
      usage: { input: 900, output: 100, cacheRead: 0, cacheWrite: 0 },
      billedMicros: 0,
      listMicros: 2000,
    })
  );
  const haiku = CASES.map((caseId, i) =>
    record({
      candidate: "haiku",
      caseId,
      startedAt: new Date(T0 + 40_000 * i).toISOString(),
      elapsedMs: 40_000,
      passed: i < 1,
      verdict: {
        checks: { "answer-present": true, bu: i < 1, gegenkonto: i < 2 },
        reward: i < 1 ? 1 : 0,
      },
      usage: { input: 1800, output: 200, cacheRead: 0, cacheWrite: 0 },
      billedMicros: 6000,
      listMicros: null,
    })
  );
  return [...luna, ...haiku];
}

const OPTS: ScorecardOptions = {
  candidates: ["haiku", "luna"],
  expectedCells: 8,
  trust: "ad-hoc",
  bundleId: "bundle-1",
  experimentId: "exp-1",
};

function near(actual: number | null | undefined, expected: number, eps = 5e-5): void {
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < eps,
    `expected ≈${expected}, got ${actual}`,
  );
}

Deno.test("buildScorecard() summarises pass rate, reward and checks per candidate", () => {
  const sc = buildScorecard(fixture(), OPTS);
  assert.deepEqual(sc.candidates.map((c) => c.candidate), ["haiku", "luna"]);
  const luna = sc.candidates[1];
  assert.equal(luna.attempts, 4);
  assert.equal(luna.passes, 3);
  assert.equal(luna.passRate, 0.75);
  near(luna.passInterval![0], 0.2838);
  near(luna.passInterval![1], 0.9715);
  assert.equal(luna.meanReward, 0.875);
  near(luna.rewardInterval![0], 0.4773);
  assert.equal(luna.rewardInterval![1], 1);
  assert.deepEqual(luna.checkRates, { "answer-present": 1, bu: 0.75, gegenkonto: 1 });
  assert.deepEqual(luna.failedChecks, { bu: 1 });
  assert.deepEqual(sc.candidates[0].failedChecks, { bu: 3, gegenkonto: 2 });
  assert.equal(luna.faults, 0);
});

Deno.test("buildScorecard() costs at list price, per attempt and per pass", () => {
  const sc = buildScorecard(fixture(), OPTS);
  const [haiku, luna] = sc.candidates;
  assert.equal(luna.cost.billedMicros, 0);
  assert.equal(luna.cost.listMicros, 8000);
  assert.equal(luna.cost.listPerAttempt, 2000);
  near(luna.cost.listPerPass, 8000 / 3, 1e-9);
  assert.equal(luna.cost.billedPerPass, 0);
  // haiku has no list price: its bill stands in; four attempts' cost over one pass.
  assert.equal(haiku.cost.listMicros, 24000);
  assert.equal(haiku.cost.listPerPass, 24000);
  assert.equal(haiku.cost.billedPerAttempt, 6000);
});

Deno.test("buildScorecard() costs a paid candidate without a list price at its bill", () => {
  const records = [
    record({ candidate: "paid", caseId: "a", billedMicros: 2862, listMicros: null }),
    record({ candidate: "paid", caseId: "b", billedMicros: 1138, listMicros: null }),
  ];
  const sc = buildScorecard(records, { ...OPTS, candidates: ["paid"], expectedCells: 2 });
  assert.equal(sc.candidates[0].cost.listPerAttempt, 2000);
  assert.equal(sc.candidates[0].cost.listMicros, 4000);
});

Deno.test("buildScorecard() reports tokens and times per attempt", () => {
  const sc = buildScorecard(fixture(), OPTS);
  const luna = sc.candidates[1];
  assert.equal(luna.tokens.inputPerAttempt, 900);
  assert.equal(luna.tokens.outputPerAttempt, 100);
  assert.equal(luna.tokens.perAttempt, 1000);
  assert.equal(luna.tokens.cacheShare, null, "no cache use recorded: unknown, not 0");
  assert.equal(luna.time.medianMs, 20_000);
  assert.equal(luna.time.p90Ms, 20_000);
  assert.equal(luna.time.summedMs, 80_000);
  assert.equal(luna.time.wallClockMs, 48_000);
  // The whole run: first start (T0) to haiku's last end (120 s + 40 s).
  assert.equal(sc.wallClockMs, 160_000);
  assert.equal(buildScorecard(fixture(), { ...OPTS, wallClockMs: 99 }).wallClockMs, 99);
});

Deno.test("buildScorecard() gives the cache share and integer tokens per attempt", () => {
  const records = [
    record({
      candidate: "c",
      caseId: "a",
      usage: { input: 1000, output: 7, cacheRead: 250, cacheWrite: 0 },
    }),
    record({
      candidate: "c",
      caseId: "b",
      usage: { input: 1001, output: 8, cacheRead: 0, cacheWrite: 10 },
    }),
  ];
  const sc = buildScorecard(records, { ...OPTS, candidates: ["c"], expectedCells: 2 });
  const t = sc.candidates[0].tokens;
  assert.equal(t.inputPerAttempt, 1000);
  assert.equal(t.outputPerAttempt, 7);
  assert.equal(t.perAttempt, 1008);
  assert.equal(t.cacheWritePerAttempt, 5);
  assert.equal(t.cacheShare, 250 / 2001);
});

Deno.test("buildScorecard() orders the leaderboard by reward, then cost per pass, none last", () => {
  const cheap = ["a", "b"].map((caseId) =>
    record({ candidate: "cheap", caseId, billedMicros: 100 })
  );
  const dear = ["a", "b"].map((caseId) => record({ candidate: "dear", caseId, billedMicros: 900 }));
  // Equal rewards order by list price per pass; a candidate without passes comes last.
  const zeroA = ["a", "b"].map((caseId) =>
    record({
      candidate: "zero-a",
      caseId,
      passed: false,
      verdict: { checks: { ok: false }, reward: 0.5 },
    })
  );
  const zeroB = ["a", "b"].map((caseId, i) =>
    record({
      candidate: "zero-b",
      caseId,
      passed: i === 0,
      verdict: { checks: { ok: i === 0 }, reward: 0.5 },
      billedMicros: 5000,
    })
  );
  const sc = buildScorecard([...zeroA, ...dear, ...zeroB, ...cheap], {
    ...OPTS,
    candidates: ["zero-a", "dear", "zero-b", "cheap"],
    expectedCells: 8,
  });
  assert.deepEqual(sc.leaderboard, ["cheap", "dear", "zero-b", "zero-a"]);
  assert.equal(sc.baseline, "cheap");
  assert.deepEqual(sc.comparisons.map((c) => c.candidate), ["dear", "zero-b", "zero-a"]);
});

Deno.test("buildScorecard() ranks a model without prices after priced ones of equal reward", () => {
  // The unpriced model's tokens cost nothing in the figures (0 microdollars): it must not
  // rank as if it were free, nor show a cost.
  const unpriced = ["a", "b"].map((caseId) =>
    record({ candidate: "unpriced", caseId, billedMicros: 0, listMicros: 0, unpriced: true })
  );
  const dear = ["a", "b"].map((caseId) => record({ candidate: "dear", caseId, billedMicros: 900 }));
  const worse = ["a", "b"].map((caseId) =>
    record({
      candidate: "worse",
      caseId,
      passed: false,
      verdict: { checks: { ok: false }, reward: 0.5 },
      billedMicros: 1,
    })
  );
  const sc = buildScorecard([...unpriced, ...worse, ...dear], {
    ...OPTS,
    candidates: ["unpriced", "worse", "dear"],
    expectedCells: 6,
  });
  assert.deepEqual(sc.leaderboard, ["dear", "unpriced", "worse"]);
  const u = sc.candidates[0].cost;
  assert.equal(u.known, false);
  assert.equal(u.unpricedAttempts, 2);
  assert.deepEqual(
    [u.listPerPass, u.listPerAttempt, u.billedPerPass, u.billedPerAttempt],
    [null, null, null, null],
  );
  assert.equal(sc.candidates[2].cost.known, true);
  assert.equal(sc.candidates[2].cost.listPerPass, 900);
  const vsDear = sc.comparisons.find((c) => c.candidate === "unpriced")!;
  assert.equal(vsDear.costPerPassRatio, null);
  assert.equal(vsDear.microsPerPassSaved, null);
});

Deno.test("buildScorecard() compares each candidate with the baseline on the same cells", () => {
  const sc = buildScorecard(fixture(), OPTS);
  assert.equal(sc.baseline, "luna");
  assert.equal(sc.comparisons.length, 1);
  const c = sc.comparisons[0];
  assert.equal(c.candidate, "haiku");
  assert.equal(c.baseline, "luna");
  // Per case haiku − luna: 0, −1, −1, −0.5.
  assert.equal(c.pairedCases, 4);
  assert.equal(c.rewardDifference, -0.625);
  const half = 3.182 * Math.sqrt(((0.625 ** 2) + 2 * 0.375 ** 2 + 0.125 ** 2) / 3) / 2;
  near(c.rewardDifferenceInterval![0], Math.max(-1, -0.625 - half), 1e-9);
  near(c.rewardDifferenceInterval![1], -0.625 + half, 1e-9);
  assert.deepEqual(c.mcnemar, { pairs: 4, b: 0, c: 2, p: 0.5 });
  near(c.pPassRateHigher, 1 - 0.9216, 1e-3);
  assert.ok(c.pPassRateNoWorse! > c.pPassRateHigher!);
  near(c.costPerPassRatio, 9, 1e-9);
  near(c.microsPerPassSaved, 8000 / 3 - 24000, 1e-9);
});

Deno.test("buildScorecard() uses a given baseline and refuses one that is not a candidate", () => {
  const sc = buildScorecard(fixture(), { ...OPTS, baseline: "haiku" });
  assert.equal(sc.baseline, "haiku");
  assert.equal(sc.comparisons[0].candidate, "luna");
  assert.equal(sc.comparisons[0].rewardDifference, 0.625);
  assert.deepEqual(sc.comparisons[0].mcnemar, { pairs: 4, b: 2, c: 0, p: 0.5 });
  assert.throws(() => buildScorecard(fixture(), { ...OPTS, baseline: "gpt" }), (e: unknown) => {
    assert.ok(e instanceof DvergrError);
    assert.match(e.message, /"gpt"/);
    assert.match(e.hint ?? "", /"haiku", "luna"/);
    return true;
  });
});

Deno.test("buildScorecard() pairs McNemar by case and repetition, skipping faulted cells", () => {
  const mk = (candidate: string, rep: number, passed: boolean | null) =>
    record({
      candidate,
      caseId: "x",
      repetition: rep,
      passed: passed === true,
      verdict: passed === null ? null : { checks: { ok: passed }, reward: passed ? 1 : 0 },
    });
  const records = [
    mk("a", 0, true),
    mk("b", 0, false),
    mk("a", 1, true),
    mk("b", 1, false),
    mk("a", 2, false),
    mk("b", 2, true),
    mk("a", 3, true),
    mk("b", 3, null),
  ];
  const sc = buildScorecard(records, {
    ...OPTS,
    candidates: ["a", "b"],
    baseline: "b",
    expectedCells: 8,
  });
  assert.deepEqual(sc.comparisons[0].mcnemar, { pairs: 3, b: 2, c: 1, p: 1 });
  // One world ("x"): a's mean 0.75 against b's 1/3.
  assert.equal(sc.comparisons[0].pairedCases, 1);
  near(sc.comparisons[0].rewardDifference, 0.75 - 1 / 3, 1e-12);
  assert.equal(sc.comparisons[0].rewardDifferenceInterval, null);
});

Deno.test("buildScorecard() is complete only when every expected cell has a verdict", () => {
  assert.equal(buildScorecard(fixture(), OPTS).complete, true);
  assert.equal(buildScorecard(fixture(), OPTS).incomplete, null);
  const records = fixture();
  records[0] = {
    ...records[0],
    verdict: null,
    passed: false,
    status: "fault",
    fault: { source: "candidate", kind: "provider", message: "503" },
  };
  // One faulted cell, and one cell that never ran.
  const sc = buildScorecard(records.slice(0, 7), OPTS);
  assert.equal(sc.complete, false);
  assert.deepEqual(sc.incomplete, { cells: 2, faults: 1 });
  assert.equal(sc.gradedCells, 6);
  const luna = sc.candidates.find((c) => c.candidate === "luna")!;
  assert.equal(luna.faults, 1);
  assert.equal(luna.attempts, 3);
  // Money spent on the faulted try still counts; per attempt divides by every try.
  assert.equal(luna.cost.listMicros, 8000);
  assert.equal(luna.cost.listPerAttempt, 2000);
});

Deno.test("buildScorecard() keeps only the latest try of each cell", () => {
  const first = record({
    candidate: "a",
    tryNo: 1,
    verdict: null,
    passed: false,
    status: "fault",
    billedMicros: 10,
  });
  const retry = record({ candidate: "a", tryNo: 2, billedMicros: 20 });
  const sc = buildScorecard([retry, first], {
    ...OPTS,
    candidates: ["a"],
    expectedCells: 1,
  });
  assert.equal(sc.complete, true);
  assert.equal(sc.candidates[0].attempts, 1);
  assert.equal(sc.candidates[0].cost.billedMicros, 20);
  // What the faulted first try cost is not lost: it is in the money spent.
  assert.equal(sc.candidates[0].cost.spentBilledMicros, 30);
  assert.equal(sc.candidates[0].cost.spentListMicros, 30);
  assert.equal(sc.candidates[0].cost.retriedTries, 1);
});

Deno.test("buildScorecard() marks non-isolated attempts and the lowest trust tier", () => {
  const records = fixture().map((r, i) => (i === 5 ? { ...r, isolated: false } : r));
  const sc = buildScorecard(records, { ...OPTS, trust: "room" });
  assert.equal(sc.isolated, false);
  assert.equal(sc.trust, "room");
  const haiku = sc.candidates[0];
  assert.equal(haiku.isolated, false);
  assert.equal(haiku.notIsolated, 1);
  assert.equal(sc.candidates[1].isolated, true);
  assert.equal(haiku.trust, "ad-hoc", "records say ad-hoc");
  const promoted = buildScorecard(records.map((r) => ({ ...r, trust: "room" as const })), {
    ...OPTS,
    trust: "room",
  });
  assert.equal(promoted.candidates[0].trust, "room");
});

Deno.test("buildScorecard() does not depend on the order of the records", () => {
  const records = fixture();
  const a = buildScorecard(records, OPTS);
  const b = buildScorecard([...records].reverse(), OPTS);
  assert.deepEqual(b, a);
});

Deno.test("buildScorecard() is plain JSON", () => {
  const sc = buildScorecard(fixture(), OPTS);
  assert.deepEqual(JSON.parse(JSON.stringify(sc)), sc);
  assert.equal(sc.format, "dvergr-scorecard/1");
  assert.equal(sc.bundleId, "bundle-1");
  assert.ok(JSON.stringify(sc).length < 64 * 1024);
});

Deno.test("buildScorecard() lists a candidate without records with empty figures", () => {
  const sc = buildScorecard(fixture(), { ...OPTS, candidates: ["haiku", "luna", "idle"] });
  const idle = sc.candidates[2];
  assert.equal(idle.attempts, 0);
  assert.equal(idle.passRate, null);
  assert.equal(idle.passInterval, null);
  assert.equal(idle.meanReward, null);
  assert.equal(idle.cost.listPerAttempt, null);
  assert.equal(idle.time.medianMs, null);
  assert.equal(sc.leaderboard.at(-1), "idle");
  const vsIdle = sc.comparisons.find((c) => c.candidate === "idle")!;
  assert.equal(vsIdle.pPassRateHigher, null);
  assert.equal(vsIdle.pairedCases, 0);
});

Deno.test("buildScorecard() refuses records of another experiment or candidate as bugs", () => {
  assert.throws(
    () => buildScorecard([record({ candidate: "luna", experimentId: "other" })], OPTS),
    /experiment "other"/,
  );
  assert.throws(() => buildScorecard([record({ candidate: "ghost" })], OPTS), /"ghost"/);
});
