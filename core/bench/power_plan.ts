/**
 * The power planner of `dvergr plan`: from a pilot experiment's paired reward differences
 * (candidate − baseline on the same case and repetition), how many cases × repetitions a
 * fixed-size paired interval of a given half-width needs, and how many cells a run with
 * `--stop-when-decided` would be expected to use. Pure; the simulation is seeded, so the
 * same pilot gives the same plan.
 *
 * Fixed size. The scorecard's paired interval averages each case's differences over its
 * repetitions, then takes a Student-t interval over the cases. With σ²_b the variance of the
 * cases' true differences and σ²_w the variance between repetitions of one case, the mean of
 * n cases × r repetitions has variance (σ²_b + σ²_w / r) / n, so the half-width h at level
 * 1 − α needs n = ⌈ (t_{1−α/2, n−1})² (σ²_b + σ²_w / r) / h² ⌉ cases (solved by iteration,
 * at least 2). The two variances are the pilot's one-way analysis of variance: σ²_w pooled
 * within cases, σ²_b the variance of the case means less σ²_w / r̄ (r̄ the harmonic mean of
 * the repetitions per case), at least 0. A pilot with one repetition per case cannot tell
 * them apart: all of it is counted as σ²_b, and repetitions are planned as if they added
 * nothing. Fewer cells come from more cases, not more repetitions (n·r grows with r); more
 * repetitions help only where the bundle has too few cases.
 *
 * Sequential. The expected cells are the mean over seeded simulated runs of the stopping
 * rule (sequential.ts) on the fixed plan: each planned case draws one of the pilot's cases,
 * and each of its repetitions one of that pilot case's differences (a two-level bootstrap),
 * in plan order (repetition, then case); a run that never stops uses every planned pair.
 * It assumes the pilot's differences are the true ones: a pilot that saw a difference too
 * large makes the expected cells too few.
 */
import { addDifference, newSequence, sequenceStatus } from "./confidence_sequence.ts";
import { tQuantile } from "./stats.ts";
import { seededRandom } from "../seeded_random.ts";
import type { CandidateFold, HistoryFold } from "./history_fold.ts";

/** A pilot's paired differences, grouped by case (each case's in repetition order). */
export type PilotDifferences = readonly (readonly number[])[];

/** What the pilot says about one comparison. */
export interface PilotSummary {
  pairs: number;
  cases: number;
  /** The most repetitions of one case. */
  repetitions: number;
  meanDifference: number;
  /** Standard deviation of a pair's difference. */
  sd: number;
  /** σ_b: of the cases' true differences. */
  sdBetweenCases: number;
  /** σ_w: between repetitions of one case; null when no case has two. */
  sdWithinCases: number | null;
}

/** One fixed-size plan: cases × repetitions and its cells (both candidates). */
export interface FixedPlan {
  repetitions: number;
  cases: number;
  pairs: number;
  /** Cells of the candidate and the baseline: 2 × pairs. */
  cells: number;
}

/** What sequential stopping is expected to use on a fixed plan. */
export interface SequentialExpectation {
  plannedPairs: number;
  expectedPairs: number;
  /** 2 × expected pairs. */
  expectedCells: number;
  /** Shares of simulated runs that ended decided, equivalent, or open (the plan ran out). */
  decided: number;
  equivalent: number;
  open: number;
  runs: number;
}

export interface PlanOptions {
  halfWidth: number;
  alpha: number;
  /** The equivalence margin of the simulated stopping rule. */
  delta: number;
  /** Repetitions to plan for; default 1, 2, 3, 5, 10. */
  repetitions?: readonly number[];
  /** Cases the bundle has: the recommended plan is the cheapest that fits; null: unknown. */
  casesAvailable?: number | null;
  /** Simulated runs for the sequential expectation (at most); default 2000. */
  runs?: number;
  seed?: number;
}

export interface ComparisonPlan {
  pilot: PilotSummary;
  fixed: FixedPlan[];
  /** The cheapest fixed plan that fits the cases available; null when none does. */
  recommended: FixedPlan | null;
  /** Sequential stopping on the recommended plan (else on the first fixed one). */
  sequential: SequentialExpectation;
}

/** The repetitions planned for unless asked otherwise. */
export const PLAN_REPETITIONS = [1, 2, 3, 5, 10] as const;

/** Simulated pairs, at most, behind one sequential expectation (bounds the planner's time). */
const SIMULATED_PAIRS = 5_000_000;

/** The pilot's mean, total, between- and within-case spread (one-way analysis of variance). */
export function summarisePilot(byCase: PilotDifferences): PilotSummary {
  const cases = byCase.filter((c) => c.length > 0);
  const all = cases.flat();
  const n = all.length;
  const mean = n > 0 ? all.reduce((a, b) => a + b, 0) / n : 0;
  const total = n > 1 ? all.reduce((a, d) => a + (d - mean) ** 2, 0) / (n - 1) : 0;
  let within = 0;
  let withinDf = 0;
  const caseMeans: number[] = [];
  let inverseReps = 0;
  for (const c of cases) {
    const m = c.reduce((a, b) => a + b, 0) / c.length;
    caseMeans.push(m);
    inverseReps += 1 / c.length;
    within += c.reduce((a, d) => a + (d - m) ** 2, 0);
    withinDf += c.length - 1;
  }
  const k = caseMeans.length;
  const grand = k > 0 ? caseMeans.reduce((a, b) => a + b, 0) / k : 0;
  const betweenMeans = k > 1 ? caseMeans.reduce((a, m) => a + (m - grand) ** 2, 0) / (k - 1) : 0;
  const sdWithin = withinDf > 0 ? Math.sqrt(within / withinDf) : null;
  const harmonicReps = k > 0 ? k / inverseReps : 1;
  const between = sdWithin === null
    ? (k > 1 ? betweenMeans : total)
    : Math.max(0, betweenMeans - sdWithin ** 2 / harmonicReps);
  return {
    pairs: n,
    cases: k,
    repetitions: Math.max(0, ...cases.map((c) => c.length)),
    meanDifference: mean,
    sd: Math.sqrt(total),
    sdBetweenCases: Math.sqrt(between),
    sdWithinCases: sdWithin,
  };
}

/** Cases a fixed-size interval of `halfWidth` needs at `repetitions` per case (≥ 2). */
export function casesNeeded(
  pilot: PilotSummary,
  repetitions: number,
  halfWidth: number,
  alpha: number,
): number {
  const variance = pilot.sdBetweenCases ** 2 + (pilot.sdWithinCases ?? 0) ** 2 / repetitions;
  let n = 2;
  for (let i = 0; i < 50; i++) {
    const t = tQuantile(1 - alpha / 2, n - 1);
    const next = Math.max(2, Math.ceil(t * t * variance / (halfWidth * halfWidth)));
    if (next === n) break;
    n = next;
  }
  return n;
}

/**
 * The mean of the stopping rule over seeded simulated runs of `plannedCases` × `repetitions`
 * pairs drawn from the pilot (two-level bootstrap, plan order).
 */
export function expectSequential(
  byCase: PilotDifferences,
  plan: { cases: number; repetitions: number },
  opts: { alpha: number; delta: number; runs?: number; seed?: number },
): SequentialExpectation {
  const cases = byCase.filter((c) => c.length > 0);
  const planned = plan.cases * plan.repetitions;
  const runs = Math.max(100, Math.min(opts.runs ?? 2000, Math.floor(SIMULATED_PAIRS / planned)));
  const rand = seededRandom(opts.seed ?? 20261001);
  const pick = (n: number) => Math.min(n - 1, Math.floor(rand() * n));
  let pairs = 0;
  const ends = { decided: 0, equivalent: 0, open: 0 };
  const drawn = new Int32Array(plan.cases);
  for (let run = 0; run < runs; run++) {
    for (let c = 0; c < plan.cases; c++) drawn[c] = pick(cases.length);
    const seq = newSequence(opts.alpha);
    let status: "decided" | "equivalent" | "open" = "open";
    let used = 0;
    outer: for (let r = 0; r < plan.repetitions; r++) {
      for (let c = 0; c < plan.cases; c++) {
        const pilotCase = cases[drawn[c]];
        addDifference(seq, pilotCase[pick(pilotCase.length)]);
        used++;
        status = sequenceStatus([seq.low, seq.high], opts.delta).status;
        if (status !== "open") break outer;
      }
    }
    pairs += used;
    ends[status]++;
  }
  const expectedPairs = pairs / runs;
  return {
    plannedPairs: planned,
    expectedPairs,
    expectedCells: 2 * expectedPairs,
    decided: ends.decided / runs,
    equivalent: ends.equivalent / runs,
    open: ends.open / runs,
    runs,
  };
}

/** The plan of one comparison from its pilot differences; null with fewer than two pairs. */
export function planComparison(
  byCase: PilotDifferences,
  opts: PlanOptions,
): ComparisonPlan | null {
  const pilot = summarisePilot(byCase);
  if (pilot.pairs < 2) return null;
  const fixed = (opts.repetitions ?? PLAN_REPETITIONS).map((repetitions): FixedPlan => {
    const cases = casesNeeded(pilot, repetitions, opts.halfWidth, opts.alpha);
    return { repetitions, cases, pairs: cases * repetitions, cells: 2 * cases * repetitions };
  });
  const available = opts.casesAvailable ?? null;
  const fits = fixed.filter((f) => available === null || f.cases <= available);
  const recommended = fits.length === 0
    ? null
    : fits.reduce((best, f) => (f.cells < best.cells ? f : best));
  const target = recommended ?? fixed[0];
  return {
    pilot,
    fixed,
    recommended,
    sequential: expectSequential(byCase, target, opts),
  };
}

/**
 * The paired differences (candidate − baseline) of a folded history's latest tries, by case:
 * the (case, repetition) cells both have a verdict for, each case's in repetition order.
 */
export function pilotDifferences(
  fold: HistoryFold,
  candidate: string,
  baseline: string,
): number[][] {
  const a = fold.candidates.get(candidate);
  const b = fold.candidates.get(baseline);
  if (!a || !b) return [];
  const key = (c: CandidateFold, row: number) => `${c.caseIndex.at(row)}/${c.repetition.at(row)}`;
  const base = new Map<string, number>();
  for (let row = 0; row < b.latest; row++) {
    if (b.flags.at(row) !== 0) base.set(key(b, row), b.reward.at(row));
  }
  const byCase = new Map<number, [number, number][]>();
  for (let row = 0; row < a.latest; row++) {
    const other = base.get(key(a, row));
    if (a.flags.at(row) === 0 || other === undefined) continue;
    const k = a.caseIndex.at(row);
    const list = byCase.get(k) ?? [];
    list.push([a.repetition.at(row), a.reward.at(row) - other]);
    byCase.set(k, list);
  }
  return [...byCase.keys()].sort((x, y) => x - y).map((k) =>
    byCase.get(k)!.sort(([r], [s]) => r - s).map(([, d]) => d)
  );
}
