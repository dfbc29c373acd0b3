/**
 * Sequential stopping of a benchmark (`--stop-when-decided`): per candidate, a confidence
 * sequence (confidence_sequence.ts) of its paired reward difference to the baseline over
 * the (case, repetition) pairs in plan order, and the cells that are not needed once the
 * comparisons they serve have stopped. Pure.
 *
 * The sequence of a comparison takes the pairs in plan order (repetition, then case), and
 * only as a prefix: pair j joins once pairs 0 … j−1 have joined and both of its cells have a
 * verdict. So what a comparison concludes is a function of the records alone, whatever order
 * the cells finished in: the run that stops it, a rerun that resumes it and the scorecard
 * folded from the records agree. A fault holds its comparison's prefix until the cell is
 * graded; it is never counted as a difference (a candidate cannot fault its way to a stop).
 *
 * Once a comparison is decided (its sequence excludes 0) or equivalent (inside ±delta), the
 * candidate's cells without a verdict are not needed; the baseline's are not needed once
 * every comparison has stopped. Cells that ran anyway (in flight at the stop) are kept and
 * counted as usual; the comparison's figures stay those of its stop.
 */
import {
  addDifference,
  type Interval,
  newSequence,
  sequenceMean,
  type SequenceState,
  type SequenceStatus,
  sequenceStatus,
} from "./confidence_sequence.ts";
import { formatFixed } from "./format_fixed.ts";
import type { HistoryFold } from "./history_fold.ts";

/** The significance level of `--stop-when-decided` unless `--alpha` says otherwise. */
export const DEFAULT_ALPHA = 0.05;
/** The equivalence margin unless `--delta` says otherwise. */
export const DEFAULT_DELTA = 0.02;

/** How a run stops its comparisons. */
export interface StoppingRule {
  /** The candidate every other is compared with. */
  baseline: string;
  /** The error allowed over all looks, per comparison: P(the sequence ever misses) ≤ alpha. */
  alpha: number;
  /** A sequence strictly inside (−delta, delta) stops as equivalent; 0 never does. */
  delta: number;
}

/** Where one comparison's sequence stands (or stopped). */
export interface ComparisonStop {
  candidate: string;
  baseline: string;
  status: SequenceStatus;
  /** Decided: true when the candidate's reward is higher than the baseline's; else null. */
  higher: boolean | null;
  /** Pairs the sequence took (the first ones in plan order), at its stop when it stopped. */
  pairs: number;
  /** Pairs the plan has (cases × repetitions). */
  plannedPairs: number;
  /** Mean reward difference (candidate − baseline) over those pairs; null before any. */
  meanDifference: number | null;
  /** The confidence sequence at that point (1 − alpha, anytime-valid), in [−1, 1]. */
  sequence: Interval;
}

/** The scorecard's account of a run with sequential stopping. */
export interface SequentialSummary {
  method: "empirical-bernstein";
  baseline: string;
  alpha: number;
  delta: number;
  /** Every other candidate against the baseline, in declared order. */
  comparisons: ComparisonStop[];
  /** Cells skipped as not needed (no verdict, of a stopped comparison). */
  notNeeded: number;
}

/** The comparisons of one run: candidates by index, pairs by their index in plan order. */
export class SequentialComparisons {
  readonly #names: readonly string[];
  readonly #base: number;
  readonly #pairs: number;
  readonly #rule: StoppingRule;
  /** Reward per candidate per pair; NaN: no verdict known. */
  readonly #rewards: Float32Array[];
  /** The next pair each comparison's sequence takes. */
  readonly #cursor: Int32Array;
  readonly #sequences: SequenceState[];
  readonly #status: SequenceStatus[];
  readonly #higher: (boolean | null)[];
  #open: number;

  /** `names`: the plan's candidates in declared order; `pairs`: cases × repetitions. */
  constructor(names: readonly string[], pairs: number, rule: StoppingRule) {
    const base = names.indexOf(rule.baseline);
    if (base < 0) throw new RangeError(`No baseline "${rule.baseline}" among the candidates`);
    if (names.length < 2) throw new RangeError("Sequential stopping needs two candidates");
    this.#names = names;
    this.#base = base;
    this.#pairs = pairs;
    this.#rule = rule;
    this.#rewards = names.map(() => new Float32Array(pairs).fill(NaN));
    this.#cursor = new Int32Array(names.length);
    this.#sequences = names.map(() => newSequence(rule.alpha));
    this.#status = names.map(() => "open");
    this.#higher = names.map(() => null);
    this.#open = names.length - 1;
  }

  /**
   * A verdict's reward for the cell at `index` of the plan (index = pair × candidates +
   * candidate, plan order). Returns the comparisons this stopped.
   */
  noteCell(index: number, reward: number): ComparisonStop[] {
    const n = this.#names.length;
    return this.note(index % n, Math.floor(index / n), reward);
  }

  /** A verdict's reward for candidate `a` on pair `pair`; returns the comparisons it stopped. */
  note(a: number, pair: number, reward: number): ComparisonStop[] {
    if (pair < 0 || pair >= this.#pairs) return [];
    this.#rewards[a][pair] = Number.isFinite(reward) ? reward : 0;
    const stopped: ComparisonStop[] = [];
    const advance = (c: number) => {
      if (this.#advance(c)) stopped.push(this.comparison(c));
    };
    if (a === this.#base) this.#names.forEach((_, c) => c !== this.#base && advance(c));
    else advance(a);
    return stopped;
  }

  /** Feeds comparison `c` the pairs now complete after its prefix; true when it stopped. */
  #advance(c: number): boolean {
    if (this.#status[c] !== "open") return false;
    const mine = this.#rewards[c];
    const base = this.#rewards[this.#base];
    const seq = this.#sequences[c];
    for (let p = this.#cursor[c]; p < this.#pairs; p++) {
      if (Number.isNaN(mine[p]) || Number.isNaN(base[p])) return false;
      addDifference(seq, mine[p] - base[p]);
      this.#cursor[c] = p + 1;
      const { status, higher } = sequenceStatus([seq.low, seq.high], this.#rule.delta);
      if (status !== "open") {
        this.#status[c] = status;
        this.#higher[c] = higher;
        this.#open--;
        return true;
      }
    }
    return false;
  }

  /** True when the cells of candidate `a` still without a verdict are not needed. */
  notNeeded(a: number): boolean {
    return a === this.#base ? this.#open === 0 : this.#status[a] !== "open";
  }

  /** notNeeded() of the candidate of the cell at `index` of the plan. */
  notNeededCell(index: number): boolean {
    return this.notNeeded(index % this.#names.length);
  }

  /** Every comparison has stopped. */
  get allStopped(): boolean {
    return this.#open === 0;
  }

  /** Where comparison `c` (a candidate's index, not the baseline's) stands. */
  comparison(c: number): ComparisonStop {
    const seq = this.#sequences[c];
    return {
      candidate: this.#names[c],
      baseline: this.#rule.baseline,
      status: this.#status[c],
      higher: this.#higher[c],
      pairs: seq.n,
      plannedPairs: this.#pairs,
      meanDifference: sequenceMean(seq),
      sequence: [seq.low, seq.high],
    };
  }

  /** Every comparison, in declared order of the candidates. */
  comparisons(): ComparisonStop[] {
    return this.#names.flatMap((_, c) => c === this.#base ? [] : [this.comparison(c)]);
  }
}

/** A stop in a few words: "decided (higher) after 16 pairs, sequence +0.21 to +1.00". */
export function stopText(c: ComparisonStop): string {
  const signed = (x: number) => (x > 0 ? "+" : "") + formatFixed(x, 2);
  const what = c.status === "decided"
    ? `decided: ${c.higher ? "higher" : "lower"} than ${c.baseline}`
    : c.status === "equivalent"
    ? `equivalent to ${c.baseline}`
    : `open against ${c.baseline}`;
  return `${c.candidate} ${what} after ${c.pairs} of ${c.plannedPairs} pairs, sequence ${
    signed(c.sequence[0])
  } to ${signed(c.sequence[1])}`;
}

/** The plan's shape that pair indices are computed from. */
export interface PairShape {
  /** The plan's candidates, in declared order. */
  candidates: readonly string[];
  /** The plan's cases in plan order (null: a bundle without cases). */
  cases: readonly (string | null)[] | null;
  repetitions: number;
}

/**
 * The comparisons of a folded history (the latest try of every cell): what the run that
 * stopped them concluded, recomputed from the records, with the cells not needed per
 * candidate (cells without a verdict of a stopped comparison).
 */
export function sequentialOfFold(
  fold: HistoryFold,
  shape: PairShape,
  rule: StoppingRule,
): { summary: SequentialSummary; notNeeded: Map<string, number> } {
  const cases = shape.cases ?? [null];
  const pairs = cases.length * shape.repetitions;
  const seq = new SequentialComparisons(shape.candidates, pairs, rule);
  const caseAt = new Map<string | null, number>(cases.map((c, i) => [c, i]));
  const planCase = fold.caseIds.map((id) => caseAt.get(id) ?? -1);
  const graded = shape.candidates.map((name, a) => {
    const c = fold.candidates.get(name);
    if (!c) return 0;
    for (let row = 0; row < c.latest; row++) {
      const k = planCase[c.caseIndex.at(row)];
      const rep = c.repetition.at(row);
      if (c.flags.at(row) === 0 || k < 0 || rep >= shape.repetitions) continue;
      seq.note(a, rep * cases.length + k, c.reward.at(row));
    }
    return c.graded;
  });
  const notNeeded = new Map<string, number>();
  let total = 0;
  shape.candidates.forEach((name, a) => {
    const n = seq.notNeeded(a) ? Math.max(0, pairs - graded[a]) : 0;
    notNeeded.set(name, n);
    total += n;
  });
  return {
    summary: {
      method: "empirical-bernstein",
      baseline: rule.baseline,
      alpha: rule.alpha,
      delta: rule.delta,
      comparisons: seq.comparisons(),
      notNeeded: total,
    },
    notNeeded,
  };
}
