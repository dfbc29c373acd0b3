import assert from "node:assert/strict";
import {
  casesNeeded,
  expectSequential,
  planComparison,
  summarisePilot,
} from "../../../core/bench/power_plan.ts";
import { SequentialComparisons } from "../../../core/bench/sequential.ts";
import { meanInterval } from "../../../core/bench/stats.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

/** Differences of a candidate passing with pA against a baseline passing with pB, as counts. */
function exactPilot(counts: { up: number; down: number; same: number }, reps: number) {
  const values = [
    ...Array(counts.up).fill(1),
    ...Array(counts.down).fill(-1),
    ...Array(counts.same).fill(0),
  ];
  const rand = seededRandom(5);
  for (let i = values.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [values[i], values[j]] = [values[j], values[i]];
  }
  const byCase: number[][] = [];
  for (let i = 0; i < values.length; i += reps) byCase.push(values.slice(i, i + reps));
  return byCase;
}

/** One pair of the true model: independent passes with pA and pB, reward 1 or 0. */
function draw(rand: () => number, pA: number, pB: number): [number, number] {
  return [rand() < pA ? 1 : 0, rand() < pB ? 1 : 0];
}

function within20(actual: number, expected: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= 0.2 * expected,
    `${what}: ${actual.toFixed(4)} vs ${expected.toFixed(4)} (more than 20% apart)`,
  );
}

const RULE = { alpha: 0.05, delta: 0.02 };

Deno.test("planComparison() plans a fixed-size interval whose simulated half-width is within 20% of the asked one", () => {
  // 0.8 vs 0.4: P(+1) = 0.48, P(−1) = 0.08, P(0) = 0.44; the pilot holds exactly those shares.
  const pilot = exactPilot({ up: 24, down: 4, same: 22 }, 2);
  const plan = planComparison(pilot, { halfWidth: 0.05, ...RULE })!;
  const one = plan.fixed.find((f) => f.repetitions === 1)!;
  const rand = seededRandom(99);
  let widths = 0;
  let covered = 0;
  const runs = 1000;
  for (let run = 0; run < runs; run++) {
    const diffs = Array.from({ length: one.cases }, () => {
      const [a, b] = draw(rand, 0.8, 0.4);
      return a - b;
    });
    const [lo, hi] = meanInterval(diffs, [-1, 1])!;
    widths += (hi - lo) / 2;
    if (lo <= 0.4 && 0.4 <= hi) covered++;
  }
  within20(widths / runs, 0.05, "mean half-width");
  assert.ok(covered / runs > 0.92 && covered / runs < 0.98, `coverage ${covered / runs}`);
});

for (
  const [label, pA, pB, counts, halfWidth] of [
    ["a large difference (0.8 vs 0.4)", 0.8, 0.4, { up: 24, down: 4, same: 22 }, 0.05],
    ["a moderate one (0.7 vs 0.5)", 0.7, 0.5, { up: 7, down: 3, same: 10 }, 0.1],
    ["none (0.5 vs 0.5)", 0.5, 0.5, { up: 5, down: 5, same: 10 }, 0.1],
  ] as const
) {
  Deno.test(`planComparison() expects the cells sequential stopping uses within 20% of simulation: ${label}`, () => {
    const pilot = exactPilot(counts, 1);
    const plan = planComparison(pilot, { halfWidth, ...RULE })!;
    const target = plan.recommended!;
    const rand = seededRandom(1234);
    const runs = 1000;
    let cells = 0;
    for (let run = 0; run < runs; run++) {
      const seq = new SequentialComparisons(["cand", "base"], target.pairs, {
        baseline: "base",
        ...RULE,
      });
      for (let p = 0; p < target.pairs && !seq.allStopped; p++) {
        const [a, b] = draw(rand, pA, pB);
        seq.note(0, p, a);
        seq.note(1, p, b);
        cells += 2;
      }
    }
    within20(plan.sequential.expectedCells, cells / runs, "expected cells");
    assert.equal(plan.sequential.plannedPairs, target.pairs);
  });
}

Deno.test("summarisePilot() splits case and repetition variance; repetitions reduce cases only for the latter", () => {
  // Every case the same across its repetitions: all of it is between cases.
  const byCase = Array.from({ length: 20 }, (_, i) => Array(3).fill(i % 2));
  const cases = summarisePilot(byCase);
  assert.equal(cases.sdWithinCases, 0);
  assert.ok(Math.abs(cases.sdBetweenCases - cases.sd) < 0.02);
  assert.equal(casesNeeded(cases, 1, 0.1, 0.05), casesNeeded(cases, 10, 0.1, 0.05));
  // Repetitions that differ inside every case around the same mean: all of it is within.
  const noise = Array.from({ length: 20 }, () => [1, 0, 1, 0]);
  const reps = summarisePilot(noise);
  assert.equal(reps.sdBetweenCases, 0);
  assert.ok(reps.sdWithinCases! > 0.5);
  assert.ok(casesNeeded(reps, 4, 0.1, 0.05) < casesNeeded(reps, 1, 0.1, 0.05) / 3);
});

Deno.test("casesNeeded() matches the normal formula for large plans and never plans fewer than 2", () => {
  const pilot = summarisePilot(exactPilot({ up: 24, down: 4, same: 22 }, 1));
  const n = casesNeeded(pilot, 1, 0.02, 0.05);
  const normal = (1.959964 * pilot.sd / 0.02) ** 2;
  assert.ok(Math.abs(n - normal) / normal < 0.01, `${n} vs ${normal}`);
  assert.ok(casesNeeded(pilot, 1, 0.04, 0.05) < n);
  assert.ok(casesNeeded(pilot, 1, 0.02, 0.01) > n);
  assert.equal(casesNeeded(summarisePilot([[1], [1], [1]]), 1, 0.05, 0.05), 2);
});

Deno.test("planComparison() recommends the cheapest plan that fits the cases there are", () => {
  const noise = Array.from({ length: 20 }, () => [1, 0, 1, 0]);
  const open = planComparison(noise, { halfWidth: 0.1, ...RULE })!;
  assert.equal(open.recommended!.repetitions, 1);
  const few = planComparison(noise, { halfWidth: 0.1, casesAvailable: 30, ...RULE })!;
  assert.ok(few.recommended!.cases <= 30 && few.recommended!.repetitions > 1);
  const none = planComparison([[1, 0], [0, 1]], { halfWidth: 0.01, casesAvailable: 5, ...RULE })!;
  assert.equal(none.recommended, null);
  assert.equal(planComparison([[1]], { halfWidth: 0.1, ...RULE }), null);
});

Deno.test("expectSequential() is the same for the same pilot and seed", () => {
  const pilot = exactPilot({ up: 7, down: 3, same: 10 }, 1);
  const a = expectSequential(pilot, { cases: 100, repetitions: 1 }, { ...RULE, runs: 300 });
  const b = expectSequential(pilot, { cases: 100, repetitions: 1 }, { ...RULE, runs: 300 });
  assert.deepEqual(a, b);
  assert.ok(a.decided + a.equivalent + a.open > 0.999);
});
