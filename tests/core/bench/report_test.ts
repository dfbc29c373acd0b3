import assert from "node:assert/strict";
import type { AttemptRecord } from "../../../core/bench/records.ts";
import { attemptRecord as record, T0 } from "../../helpers/records.ts";
import { buildScorecard, type ScorecardOptions } from "../../../core/bench/scorecard.ts";
import { formatFixed, renderReport } from "../../../core/bench/report.ts";

const CASES = ["B0001", "B0002", "B0003", "B0004"];

/**
 * The earlier system's report_test: luna (a subscription: billed 0, list 2,000 µ$ per attempt)
 * passes 3 of 4 at 20 s each, haiku (paid, no list price) 1 of 4 at 40 s each.
 */
function fixture(): AttemptRecord[] {
  const starts = [0, 10_000, 20_000, 28_000]; // last end at 48 s: 0.8 min of wall clock
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
    })
  );
  return [...luna, ...haiku];
}

const OPTS: ScorecardOptions = {
  // Declared luna first: the report still lists candidates by name (haiku, then luna).
  candidates: ["luna", "haiku"],
  expectedCells: 8,
  trust: "ad-hoc",
  bundleId: "bundle-1",
  experimentId: "exp-1",
};

const CERTIFICATION = {
  cases: 264,
  certified: 259,
  byReason: { "conflicting-outcomes": 2, "duplicate-id": 2, unlabelled: 1 },
};

function report(records = fixture(), opts: Partial<ScorecardOptions> = {}): string {
  return renderReport(buildScorecard(records, { ...OPTS, ...opts }), {
    title: "Bank booking",
    certification: CERTIFICATION,
  });
}

function lines(md: string): string[] {
  return md.split("\n");
}

Deno.test("renderReport() writes the frontier row of the reference's report", () => {
  const md = report();
  assert.ok(md.includes("| luna | 4 | 3 (75%) |"));
  assert.ok(
    lines(md).includes(
      "| luna | 4 | 3 (75%) | 28%–97% | 0.875 | $0.0020 | $0.0027 | 1000 | 20 s | 3 passed, 1 failed |",
    ),
    md,
  );
  assert.ok(
    lines(md).includes(
      "| haiku | 4 | 1 (25%) | 3%–72% | 0.250 | $0.0060 | $0.0240 | 2000 | 40 s | 1 passed, 3 failed |",
    ),
    md,
  );
});

Deno.test("renderReport() writes the resources row: tokens, times, wall clock, list price", () => {
  const md = report();
  assert.ok(
    // 48 s of wall clock: below a minute in seconds (the earlier report wrote "0.8 min").
    lines(md).includes("| luna | 900 | 100 | – | 20 s | 20 s | 1.3 min | 48 s | $0.0080 |"),
    md,
  );
  assert.match(
    md,
    /whether or not a subscription paid for them\. Billed: haiku \$0\.0240, luna \$0\.0000\./,
  );
});

Deno.test("renderReport() counts failed checks per candidate, by name (haiku, then luna)", () => {
  const md = report();
  assert.ok(lines(md).includes("| Failed check | haiku | luna |"), md);
  assert.ok(lines(md).includes("| bu | 3 / 4 | 1 / 4 |"), md);
  assert.ok(lines(md).includes("| gegenkonto | 2 / 4 | 0 / 4 |"), md);
  assert.ok(!md.includes("| answer-present |"), "a check that never failed has no row");
});

Deno.test("renderReport() says which cases could grade an answer and why others could not", () => {
  assert.ok(
    report().includes(
      "259 of 264 cases could grade an answer; the others were excluded: 2 conflicting " +
        "outcomes, 2 duplicate id, 1 unlabelled (`certification.edn` lists each).",
    ),
  );
  const none = renderReport(buildScorecard(fixture(), OPTS), {
    certification: { cases: 5, certified: 5, byReason: { certified: 5 } },
  });
  assert.ok(none.includes("\n## Cases\n\n5 of 5 cases could grade an answer.\n"), none);
  assert.ok(!renderReport(buildScorecard(fixture(), OPTS)).includes("## Cases"));
});

Deno.test("renderReport() keeps the reference's section order and adds the comparison", () => {
  const md = renderReport(buildScorecard(fixture(), OPTS), {
    title: "Bank booking",
    note: "Two models on the bookings.",
    certification: CERTIFICATION,
  });
  assert.ok(md.startsWith("# Bank booking\n\nTwo models on the bookings.\n\n"), md);
  const at = (s: string) => md.indexOf(s);
  const order = [
    "Scored by",
    "## Frontier",
    "## Resources",
    "## Where answers fail",
    "## Paired comparison",
    "## Cases",
  ].map(at);
  assert.ok(order.every((i) => i >= 0), String(order));
  assert.deepEqual(order, [...order].sort((a, b) => a - b));
  assert.ok(renderReport(buildScorecard(fixture(), OPTS)).startsWith("# Benchmark report\n\n"));
});

Deno.test("renderReport() writes the paired comparison against the baseline", () => {
  const md = report();
  assert.ok(md.includes("Each candidate against the baseline, **luna**,"), md);
  // haiku − luna per case: 0, −1, −1, −0.5; McNemar b = 0, c = 2, p = 0.5.
  assert.ok(
    lines(md).includes(
      "| haiku | 4 | -0.625 | -1.000 to +0.137 | 0 | 2 | 0.5000 | 8% | 11% | 9.00× |",
    ),
    md,
  );
});

Deno.test("renderReport() says when there is no other candidate to compare", () => {
  const luna = fixture().filter((r) => r.candidate === "luna");
  const md = renderReport(
    buildScorecard(luna, { ...OPTS, candidates: ["luna"], expectedCells: 4 }),
  );
  assert.ok(
    md.includes(
      "## Paired comparison\n\nThere is no other candidate to compare with the " +
        "baseline, **luna**.\n",
    ),
    md,
  );
  assert.ok(lines(md).includes("| bu | 1 / 4 |"), md);
});

Deno.test("renderReport() leaves out 'Where answers fail' when no check failed", () => {
  const ok = CASES.map((caseId) => record({ candidate: "luna", caseId }));
  const md = renderReport(buildScorecard(ok, { ...OPTS, candidates: ["luna"], expectedCells: 4 }));
  assert.ok(!md.includes("## Where answers fail"), md);
});

Deno.test("renderReport() marks an incomplete run: one cell, several cells", () => {
  const one = report(fixture().slice(0, 7));
  assert.ok(
    one.includes(
      "**Incomplete:** 1 cell did not finish, so there is no Scorecard yet; running the " +
        "experiment again resumes them.",
    ),
    one,
  );
  const three = report(fixture().slice(0, 5));
  assert.ok(three.includes("**Incomplete:** 3 cells did not finish, so there is no"), three);
  assert.ok(!report().includes("**Incomplete:**"));
});

Deno.test("renderReport() names the verifier's trust tier", () => {
  assert.match(
    report(),
    /Scored by an \*\*ad-hoc\*\* verifier: the bundle's checker, not promoted/,
  );
  const room = fixture().map((r) => ({ ...r, trust: "room" as const }));
  assert.match(
    report(room, { trust: "room" }),
    /Scored by a \*\*room\*\* verifier: .*promoted on this host/,
  );
  const trusted = fixture().map((r) => ({ ...r, trust: "trusted" as const }));
  assert.match(report(trusted, { trust: "trusted" }), /Scored by a \*\*trusted\*\* verifier/);
  assert.match(report(), /Bundle `bundle-1`, experiment `exp-1`\./);
  assert.match(
    report(fixture(), { trust: "room" }),
    /another tier: haiku \(ad-hoc\), luna \(ad-hoc\)/,
  );
});

Deno.test("renderReport() says whether attempts ran isolated, with the reason when not", () => {
  assert.match(report(), /Every attempt ran isolated\./);
  const loose = fixture().map((r) => (r.candidate === "haiku" ? { ...r, isolated: false } : r));
  const md = renderReport(buildScorecard(loose, OPTS), {
    isolatedNote: "bubblewrap is not installed.",
  });
  assert.match(
    md,
    /Not every attempt ran isolated \(without isolation: haiku 4 of 4\); bubblewrap is not installed\./,
  );
});

Deno.test("renderReport() shows en dashes for what is unknown", () => {
  const faulted = [
    record({
      candidate: "luna",
      verdict: null,
      passed: false,
      status: "fault",
      startedAt: "not a time",
    }),
  ];
  const md = renderReport(
    buildScorecard(faulted, { ...OPTS, candidates: ["luna"], expectedCells: 1 }),
  );
  assert.ok(
    lines(md).includes("| luna | 0 | 0 (–) | – | – | $0.0000 | – | 0 | 1 s | 1 fault |"),
    md,
  );
  assert.ok(lines(md).includes("| luna | 0 | 0 | – | 1 s | 1 s | 1 s | – | $0.0000 |"), md);
});

Deno.test("formatFixed() rounds half up on the shortest decimal, as Java's %.nf", () => {
  // Values checked against String.format on OpenJDK (which writes "-0.000" for the
  // rounded zero: the report drops that sign on purpose).
  assert.equal(formatFixed(0.00015, 4), "0.0002");
  assert.equal(formatFixed(0.00025, 4), "0.0003");
  assert.equal(formatFixed(0.5, 0), "1");
  assert.equal(formatFixed(2.5, 0), "3");
  assert.equal(formatFixed(0.15, 1), "0.2");
  assert.equal(formatFixed(0.0005, 3), "0.001");
  assert.equal(formatFixed(99.96, 1), "100.0");
  assert.equal(formatFixed(28.375167, 0), "28");
  assert.equal(formatFixed(8000 / 3 / 1e6, 4), "0.0027");
  assert.equal(formatFixed(1e-7, 4), "0.0000");
  assert.equal(formatFixed(1234.5, 0), "1235");
  assert.equal(formatFixed(1e21, 1), "1000000000000000000000.0");
  assert.equal(formatFixed(-0.625, 3), "-0.625");
  assert.equal(formatFixed(-0.0001, 3), "0.000");
  assert.equal(formatFixed(0, 2), "0.00");
  // Whole numbers (formatted without rounding).
  assert.equal(formatFixed(1, 3), "1.000");
  assert.equal(formatFixed(120, 0), "120");
  assert.equal(formatFixed(-7, 2), "-7.00");
  assert.equal(formatFixed(-0, 3), "0.000");
  assert.equal(formatFixed(123456789012, 1), "123456789012.0");
  assert.equal(formatFixed(1e21, 0), "1000000000000000000000");
});

Deno.test("renderReport() says what tries that faulted and ran again cost on top", () => {
  const faulted = record({
    candidate: "luna",
    verdict: null,
    passed: false,
    status: "fault",
    listMicros: 3000,
  });
  const retry = record({ candidate: "luna", tryNo: 2, listMicros: 2000 });
  const md = renderReport(
    buildScorecard([faulted, retry], { ...OPTS, candidates: ["luna"], expectedCells: 1 }),
  );
  assert.match(
    md,
    /Tries that faulted and ran again cost more on top: luna spent \$0\.0050 in all \(1 retried try; billed \$0\.0000\)\./,
  );
  const clean = renderReport(
    buildScorecard([retry], { ...OPTS, candidates: ["luna"], expectedCells: 1 }),
  );
  assert.ok(!clean.includes("ran again"), clean);
});

Deno.test("renderReport() shows attempts under a second in ms, not as 0 s", () => {
  const quick = CASES.map((caseId) => record({ candidate: "luna", caseId, elapsedMs: 120 }));
  const md = renderReport(
    buildScorecard(quick, { ...OPTS, candidates: ["luna"], expectedCells: 4 }),
  );
  assert.ok(
    lines(md).some((l) => l.startsWith("| luna | 4 | 4 (100%) |") && l.includes("| 120 ms |")),
    md,
  );
});

Deno.test("renderReport() gives summed time under a minute in seconds or ms, never 0.0 min", () => {
  const quick = CASES.map((caseId) => record({ candidate: "luna", caseId, elapsedMs: 300 }));
  const md = renderReport(
    buildScorecard(quick, { ...OPTS, candidates: ["luna"], expectedCells: 4 }),
  );
  const row = lines(md).find((l) => l.startsWith("| luna | 0 | 0 |"))!;
  assert.ok(!md.includes("0.0 min"), md);
  // Median 300 ms, p90 300 ms, summed 1.2 s → "1 s", wall clock from the records.
  assert.match(row, /\| 300 ms \| 300 ms \| 1 s \|/);
});

Deno.test("renderReport() never prints a p90 time below the median (two attempts)", () => {
  const two = [
    record({ candidate: "luna", caseId: "B0001", elapsedMs: 1_000 }),
    record({ candidate: "luna", caseId: "B0002", elapsedMs: 9_000 }),
  ];
  const md = renderReport(
    buildScorecard(two, { ...OPTS, candidates: ["luna"], expectedCells: 2 }),
  );
  // Median 5 s; element ⌊0.9·1⌋ would have said 1 s.
  assert.match(lines(md).find((l) => l.startsWith("| luna | 0 | 0 |"))!, /\| 5 s \| 8 s \|/);
});

Deno.test("renderReport() says cost unknown for a model without prices, never $0", () => {
  const records = fixture().map((r) =>
    r.candidate === "luna" ? { ...r, billedMicros: 0, listMicros: 0, unpriced: true } : r
  );
  const md = report(records);
  const row = lines(md).find((l) => l.startsWith("| luna |"))!;
  assert.match(row, /\| cost unknown \| cost unknown \|/);
  assert.doesNotMatch(row, /\$0\.0/);
  assert.match(md, /Billed: haiku \$0\.0240, luna cost unknown\./);
  assert.match(md, /after every priced candidate of equal reward/);
  assert.match(md, /\| haiku \|[^\n]*\| cost unknown \|\n/);
});
