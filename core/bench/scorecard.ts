/**
 * The scorecard of an experiment: per candidate what it achieved (pass rate, reward, checks),
 * what it cost (billed and list price, tokens, time), the leaderboard, and the paired
 * comparison of every candidate against a baseline (docs/compatibility.md §8.4–§8.6). Built from the
 * attempt records alone; plain JSON, so it is stored in KV and printed by `--json`.
 */
import { type WebStats, webStatsOfFold } from "./web_stats.ts";
import type { AttemptRecord, TrustTier } from "./records.ts";
import type { OutcomeCounts } from "./outcome.ts";
import { type CandidateFold, foldRecords, HistoryFold } from "./history_fold.ts";
import {
  type Interval,
  jeffreysInterval,
  mcnemarExact,
  mean,
  meanInterval,
  median,
  pairedDifference,
  percentile,
  pHigher,
} from "./stats.ts";
import { DvergrError } from "../errors.ts";
import {
  type PairShape,
  sequentialOfFold,
  type SequentialSummary,
  type StoppingRule,
} from "./sequential.ts";

/** The margin of "no worse": a pass rate at most 5 points below the baseline's. */
export const NO_WORSE_MARGIN = 0.05;

export interface ScorecardOptions {
  /** The experiment's candidates, in declared order. */
  candidates: string[];
  /** Cells the experiment has (candidates × cases × repetitions). */
  expectedCells: number;
  /** The candidate to compare the others against; default: the leaderboard's top. */
  baseline?: string;
  /** Trust tier of the verifier (the bundle's checker) on this host. */
  trust: TrustTier;
  bundleId: string;
  experimentId: string;
  /** The run's own wall clock; default: first record's start to last record's end. */
  wallClockMs?: number;
  /**
   * Cells planned per candidate (cases × repetitions); default expectedCells divided by the
   * number of candidates (every candidate has the same cells in a plan).
   */
  plannedPerCandidate?: number;
  /**
   * The run stopped comparisons when decided (`--stop-when-decided`): its rule and the
   * plan's cases and repetitions, from which the comparisons are recomputed.
   */
  sequential?: { rule: StoppingRule } & Omit<PairShape, "candidates">;
}

/** Money in microdollars (1e-6 $). Per-attempt figures divide by every recorded attempt. */
export interface CostSummary {
  /**
   * False when an attempt ran a model whose prices are unknown: the per-attempt and per-pass
   * figures are then null (the cost is unknown, never $0) and the candidate ranks after every
   * priced one of equal reward.
   */
  known: boolean;
  billedMicros: number;
  /** List price (falls back to the bill for each record without one). */
  listMicros: number;
  /** Null when the cost is unknown (`known` false) or nothing was tried. */
  billedPerAttempt: number | null;
  listPerAttempt: number | null;
  /** Null when the cost is unknown or nothing passed. */
  billedPerPass: number | null;
  listPerPass: number | null;
  /** Everything the candidate's tries cost, earlier tries of retried cells included. */
  spentBilledMicros: number;
  spentListMicros: number;
  /** Tries superseded by a later try of the same cell (faults that ran again). */
  retriedTries: number;
  /**
   * Attempts of a model whose prices are unknown (not in the registry): every money figure
   * above leaves their tokens out, so it is not the candidate's cost. 0 when all are priced.
   */
  unpricedAttempts: number;
}

export interface TokenSummary {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Integer division of the totals by the recorded attempts (null without any). */
  inputPerAttempt: number | null;
  outputPerAttempt: number | null;
  cacheReadPerAttempt: number | null;
  cacheWritePerAttempt: number | null;
  /** input + output per attempt. */
  perAttempt: number | null;
  /** cacheRead / input; null when no attempt recorded cache use (unknown, not 0). */
  cacheShare: number | null;
}

export interface TimeSummary {
  medianMs: number | null;
  /** The 90th percentile (interpolated; never below the median), whole ms. */
  p90Ms: number | null;
  summedMs: number;
  /** First start to last end of this candidate's attempts (shorter than the sum in parallel). */
  wallClockMs: number | null;
}

export interface CandidateSummary {
  candidate: string;
  /** Attempts with a verdict (the latest try of each cell). */
  attempts: number;
  passes: number;
  passRate: number | null;
  /** 95% Jeffreys interval of the pass rate. */
  passInterval: Interval | null;
  /** Mean reward over attempts with a verdict (a missing reward counts 0). */
  meanReward: number | null;
  /** 95% Student-t interval of the mean reward, clipped to [0, 1]. */
  rewardInterval: Interval | null;
  /** Per check: the share of attempts whose verdict passed it. */
  checkRates: Record<string, number>;
  /** Per check: how many attempts' verdicts have it exactly false (only checks that failed). */
  failedChecks: Record<string, number>;
  /** Cells whose latest try has no verdict (they run again on resume). */
  faults: number;
  /** Cells planned for this candidate (cases × repetitions). */
  plannedCells: number;
  /**
   * Planned cells without a verdict (faulted or never run), counted as not passed; cells not
   * needed (sequential stopping) are not among them.
   */
  unfinished: number;
  /**
   * Cells skipped because the candidate's comparison had stopped (sequential stopping; the
   * baseline's once every comparison had): neither failures nor unfinished. Absent without
   * sequential stopping.
   */
  notNeeded?: number;
  /**
   * What the leaderboard ranks on: reward summed over graded cells ÷ planned cells (less
   * those not needed).
   */
  rankedReward: number;
  /** Passes ÷ planned cells (less those not needed): unfinished cells count as not passed. */
  rankedPassRate: number;
  /**
   * How each cell's latest try ended (passed, failed, crashed, timed out, budget, fault).
   * Absent in scorecards stored before outcomes were counted.
   */
  outcomes?: OutcomeCounts;
  cost: CostSummary;
  tokens: TokenSummary;
  time: TimeSummary;
  /** Every recorded attempt ran isolated (bubblewrap). */
  isolated: boolean;
  /** Recorded attempts that ran without isolation. */
  notIsolated: number;
  /** The lowest trust tier among this candidate's records (the scorecard's when none). */
  trust: TrustTier;
  /** Searches, pages, denials and the judge over every try; absent without web or judge. */
  web?: WebStats;
}

/** A candidate against the baseline, on the same case × repetition. */
export interface Comparison {
  candidate: string;
  baseline: string;
  /** Candidate − baseline reward, per case mean over repetitions, over the cases both ran. */
  rewardDifference: number | null;
  /** 95% t interval of that difference, clipped to [−1, 1]. */
  rewardDifferenceInterval: Interval | null;
  pairedCases: number;
  /** P(candidate's pass rate > baseline's), Jeffreys posteriors. */
  pPassRateHigher: number | null;
  /** P(candidate's pass rate > baseline's − 0.05). */
  pPassRateNoWorse: number | null;
  /** Exact McNemar test on case × repetition pairs both graded. */
  mcnemar: {
    /** Pairs graded for both. */
    pairs: number;
    /** Candidate passed, baseline failed. */
    b: number;
    /** Baseline passed, candidate failed. */
    c: number;
    p: number;
  };
  /** Candidate's list price per pass ÷ the baseline's. */
  costPerPassRatio: number | null;
  /** Baseline's list price per pass − the candidate's, in microdollars. */
  microsPerPassSaved: number | null;
}

export interface Scorecard {
  format: "dvergr-scorecard/1";
  experimentId: string;
  bundleId: string;
  trust: TrustTier;
  /** Every expected cell has a verdict (or, with sequential stopping, is not needed). */
  complete: boolean;
  /** Null when complete: cells without a verdict (not needed ones aside), how many faulted. */
  incomplete: { cells: number; faults: number } | null;
  expectedCells: number;
  /** Cells with a verdict. */
  gradedCells: number;
  /** Every recorded attempt ran isolated. */
  isolated: boolean;
  wallClockMs: number | null;
  /** Per candidate, in declared order. */
  candidates: CandidateSummary[];
  /**
   * Candidate names by reward over all planned cells (desc; unfinished cells count 0), then
   * list price per pass (asc, none last).
   */
  leaderboard: string[];
  /** Null when there are no candidates. */
  baseline: string | null;
  /** Every other candidate against the baseline, in leaderboard order. */
  comparisons: Comparison[];
  /**
   * Sequential stopping: each comparison's confidence sequence, whether and after how many
   * pairs it stopped, and the cells not needed. Absent for a run without it.
   */
  sequential?: SequentialSummary;
}

function perOrNull(total: number, n: number): number | null {
  return n > 0 ? total / n : null;
}

/** The summary of one candidate's folded tries; `rows` are its latest tries in canonical order. */
function summarise(
  candidate: string,
  c: CandidateFold,
  rows: Int32Array,
  trust: TrustTier,
  planned: number,
  notNeeded: number | null,
): CandidateSummary {
  const attempts = c.graded;
  const passes = c.passes;
  const rewards: number[] = [];
  const times: number[] = [];
  for (const i of rows) {
    if (c.flags.at(i) !== 0) rewards.push(c.reward.at(i));
    times.push(c.elapsed.at(i));
  }
  const checkRates: Record<string, number> = {};
  for (const check of [...c.passCounts.keys()].sort()) {
    checkRates[check] = c.passCounts.get(check)! / attempts;
  }
  const failedChecks: Record<string, number> = {};
  for (const check of Object.keys(c.failed).sort()) failedChecks[check] = c.failed[check];

  const tried = c.latest;
  const billed = c.billed;
  const list = c.list;
  const tok = { ...c.tokens };
  const perTry = (x: number) => (tried > 0 ? Math.floor(x / tried) : null);
  const needed = planned - (notNeeded ?? 0);
  // A model without prices has no known cost: its figures are unknown, not $0.
  const known = c.unpriced === 0;
  const per = (total: number, n: number) => (known ? perOrNull(total, n) : null);

  return {
    candidate,
    attempts,
    passes,
    passRate: perOrNull(passes, attempts),
    passInterval: jeffreysInterval(passes, attempts),
    meanReward: mean(rewards),
    rewardInterval: meanInterval(rewards),
    checkRates,
    failedChecks,
    faults: tried - attempts,
    plannedCells: planned,
    unfinished: Math.max(0, needed - attempts),
    ...(notNeeded === null ? {} : { notNeeded }),
    rankedReward: needed > 0 ? rewards.reduce((a, b) => a + b, 0) / needed : 0,
    rankedPassRate: needed > 0 ? passes / needed : 0,
    outcomes: { ...c.outcomes },
    cost: {
      known,
      billedMicros: billed,
      listMicros: list,
      billedPerAttempt: per(billed, tried),
      listPerAttempt: per(list, tried),
      billedPerPass: per(billed, passes),
      listPerPass: per(list, passes),
      spentBilledMicros: c.spentBilled,
      spentListMicros: c.spentList,
      retriedTries: c.tries - tried,
      unpricedAttempts: c.unpriced,
    },
    tokens: {
      ...tok,
      inputPerAttempt: perTry(tok.input),
      outputPerAttempt: perTry(tok.output),
      cacheReadPerAttempt: perTry(tok.cacheRead),
      cacheWritePerAttempt: perTry(tok.cacheWrite),
      perAttempt: perTry(tok.input + tok.output),
      cacheShare: c.cacheRecorded && tok.input > 0 ? tok.cacheRead / tok.input : null,
    },
    time: {
      medianMs: median(times),
      p90Ms: orRound(percentile(times, 0.9)),
      summedMs: times.reduce((a, b) => a + b, 0),
      wallClockMs: c.span.ms,
    },
    isolated: c.notIsolated === 0,
    notIsolated: c.notIsolated,
    trust: tried > 0 ? c.lowestTrust : trust,
  };
}

/**
 * Reward over every planned cell desc (a cell without a verdict counts 0, so failing loudly
 * never beats failing quietly), then known cost before unknown (a model without prices is not
 * free), then list price per pass asc (no passes last), then declared order.
 */
function leaderboardOrder(summaries: readonly CandidateSummary[]): string[] {
  const key = (s: CandidateSummary) => ({
    reward: s.rankedReward,
    // Scorecards stored before `known` existed say it by their unpriced attempts.
    unknown: (s.cost.unpricedAttempts ?? 0) > 0 ? 1 : 0,
    perPass: s.cost.listPerPass ?? Infinity,
  });
  return summaries
    .map((s, i) => ({ s, i, k: key(s) }))
    .sort((x, y) =>
      // Infinity − Infinity is NaN, which is falsy: ties fall through to the next key.
      y.k.reward - x.k.reward || x.k.unknown - y.k.unknown || x.k.perPass - y.k.perPass ||
      x.i - y.i
    )
    .map((x) => x.s.candidate);
}

/** A candidate's graded latest tries: rewards per case (canonical order) and passes per cell. */
function gradedCells(fold: HistoryFold, c: CandidateFold, rows: Int32Array) {
  const rewards = new Map<string, number[]>();
  /** case index × 2^32 + repetition → passed. */
  const passed = new Map<number, boolean>();
  for (const i of rows) {
    const flags = c.flags.at(i);
    if (flags === 0) continue;
    const world = JSON.stringify(fold.caseIds[c.caseIndex.at(i)]);
    const list = rewards.get(world) ?? [];
    list.push(c.reward.at(i));
    rewards.set(world, list);
    passed.set(c.caseIndex.at(i) * 2 ** 32 + c.repetition.at(i), flags === 3);
  }
  return { rewards, passed };
}

function compare(
  cand: CandidateSummary,
  base: CandidateSummary,
  candCells: ReturnType<typeof gradedCells>,
  baseCells: ReturnType<typeof gradedCells>,
): Comparison {
  const paired = pairedDifference(candCells.rewards, baseCells.rewards);
  let pairs = 0;
  let b = 0;
  let c = 0;
  for (const [cell, passed] of candCells.passed) {
    const other = baseCells.passed.get(cell);
    if (other === undefined) continue;
    pairs++;
    if (passed && !other) b++;
    if (!passed && other) c++;
  }
  const cpp = cand.cost.listPerPass;
  const bpp = base.cost.listPerPass;
  return {
    candidate: cand.candidate,
    baseline: base.candidate,
    rewardDifference: paired.mean,
    rewardDifferenceInterval: paired.interval,
    pairedCases: paired.worlds,
    pPassRateHigher: pHigher(cand.passes, cand.attempts, base.passes, base.attempts, 0),
    pPassRateNoWorse: pHigher(
      cand.passes,
      cand.attempts,
      base.passes,
      base.attempts,
      NO_WORSE_MARGIN,
    ),
    mcnemar: { pairs, b, c, p: mcnemarExact(b, c) },
    costPerPassRatio: cpp !== null && bpp !== null && bpp > 0 ? cpp / bpp : null,
    microsPerPassSaved: cpp !== null && bpp !== null ? bpp - cpp : null,
  };
}

/** Throws a DvergrError when `opts.baseline` is not one of the candidates. */
function checkBaseline(opts: ScorecardOptions): void {
  if (opts.baseline !== undefined && !opts.candidates.includes(opts.baseline)) {
    throw new DvergrError(
      "USAGE",
      `Cannot compare against baseline "${opts.baseline}": it is not a candidate of this experiment`,
      { hint: `Name one of: ${opts.candidates.map((c) => `"${c}"`).join(", ")}` },
    );
  }
}

/**
 * A check of every record a scorecard is built from: one of another experiment or candidate
 * is a bug (an Error).
 */
export function scorecardRecordCheck(opts: ScorecardOptions): (r: AttemptRecord) => void {
  const known = new Set(opts.candidates);
  return (r) => {
    if (r.experimentId !== opts.experimentId) {
      throw new Error(
        `buildScorecard: record of experiment "${r.experimentId}" given for "${opts.experimentId}"`,
      );
    }
    if (!known.has(r.candidate)) {
      throw new Error(`buildScorecard: record of unknown candidate "${r.candidate}"`);
    }
  };
}

/**
 * The scorecard of an experiment from its attempt records. Every figure counts the latest
 * try of each cell, except the money spent (`cost.spent*`), which counts every try given:
 * pass a cell's whole history to include what its retried faults cost. Throws a DvergrError when `baseline` is not one of
 * the candidates; a record of another experiment or candidate is a bug and throws an Error.
 */
export function buildScorecard(
  records: readonly AttemptRecord[],
  opts: ScorecardOptions,
): Scorecard {
  checkBaseline(opts);
  records.forEach(scorecardRecordCheck(opts));
  const fold = new HistoryFold(opts.candidates);
  foldRecords(records, fold);
  return scorecardOfFold(fold, opts);
}

/**
 * The scorecard of a folded history (HistoryFold of the experiment's candidates, every
 * record checked by scorecardRecordCheck): the same as buildScorecard() of its records.
 */
export function scorecardOfFold(fold: HistoryFold, opts: ScorecardOptions): Scorecard {
  checkBaseline(opts);
  const planned = opts.plannedPerCandidate ??
    (opts.candidates.length > 0 ? Math.ceil(opts.expectedCells / opts.candidates.length) : 0);
  const rowsOf = new Map(opts.candidates.map((c) => [c, fold.canonicalRows(c)]));
  const seq = opts.sequential
    ? sequentialOfFold(
      fold,
      { ...opts.sequential, candidates: opts.candidates },
      opts.sequential.rule,
    )
    : null;
  const summaries = opts.candidates.map((name) => {
    const c = fold.candidates.get(name)!;
    const notNeeded = seq ? seq.notNeeded.get(name) ?? 0 : null;
    const s = summarise(name, c, rowsOf.get(name)!, opts.trust, planned, notNeeded);
    const web = webStatsOfFold(c);
    return web ? { ...s, web } : s;
  });
  const leaderboard = leaderboardOrder(summaries);
  const baseline = opts.baseline ?? leaderboard[0] ?? null;
  const summaryOf = new Map(summaries.map((s) => [s.candidate, s]));
  const cellsOf = (name: string) =>
    gradedCells(fold, fold.candidates.get(name)!, rowsOf.get(name)!);
  const others = baseline === null ? [] : leaderboard.filter((c) => c !== baseline);
  // A candidate's graded cells are a map per cell: built only when there is a comparison.
  const baseCells = others.length > 0 ? cellsOf(baseline!) : null;
  const comparisons = others.map((c) =>
    compare(summaryOf.get(c)!, summaryOf.get(baseline!)!, cellsOf(c), baseCells!)
  );

  const gradedCellCount = fold.graded;
  // A stopped comparison's faulted cells are among its cells not needed.
  let faults = fold.latest - gradedCellCount;
  for (const [name, n] of seq?.notNeeded ?? []) {
    const c = fold.candidates.get(name)!;
    if (n > 0) faults -= c.latest - c.graded;
  }
  const notNeeded = seq?.summary.notNeeded ?? 0;
  const complete = gradedCellCount + notNeeded >= opts.expectedCells;
  return {
    format: "dvergr-scorecard/1",
    experimentId: opts.experimentId,
    bundleId: opts.bundleId,
    trust: opts.trust,
    complete,
    incomplete: complete
      ? null
      : { cells: opts.expectedCells - gradedCellCount - notNeeded, faults },
    expectedCells: opts.expectedCells,
    gradedCells: gradedCellCount,
    isolated: fold.notIsolated === 0,
    wallClockMs: opts.wallClockMs ?? fold.span.ms,
    candidates: summaries,
    leaderboard,
    baseline,
    comparisons,
    ...(seq ? { sequential: seq.summary } : {}),
  };
}

function orRound(x: number | null): number | null {
  return x === null ? null : Math.round(x);
}
