/**
 * An anytime-valid confidence sequence for the mean of paired differences in [−1, 1]: the
 * predictable plug-in empirical-Bernstein confidence sequence of Waudby-Smith & Ramdas,
 * "Estimating means of bounded random variables by betting" (JRSS-B 2023, Theorem 2),
 * built on the empirical-Bernstein supermartingale of Howard, Ramdas, McAuliffe & Sekhon,
 * "Time-uniform, nonparametric, nonasymptotic confidence sequences" (Ann. Statist. 2021).
 * Pure; O(1) per observation and a handful of numbers of state, so it can be kept per
 * comparison while a run's cells settle. docs/sequential.md derives it.
 *
 * A difference d ∈ [−1, 1] is mapped to x = (d + 1)/2 ∈ [0, 1]. With λ_i predictable (a
 * function of x_1 … x_{i−1}) and in [0, 1), for m the common conditional mean of the x_i,
 *
 *   M_t(m) = Π_{i ≤ t} exp( λ_i (x_i − m) − v_i ψ(λ_i) ),
 *   v_i = 4 (x_i − μ̂_{i−1})²,   ψ(λ) = (−log(1 − λ) − λ) / 4,
 *
 * is a nonnegative supermartingale when m is the mean (Howard et al. 2021's sub-exponential
 * boundary with the empirical variance; Waudby-Smith & Ramdas 2023, Theorem 2), and so is its
 * mirror with (m − x_i). Ville's inequality gives
 * P(∃t: M_t(m) ≥ 2/α) ≤ α/2 for each, so the set of m where both stay below 2/α holds the
 * mean at every t at once with probability ≥ 1 − α. Solving for m gives the interval
 *
 *   C_t = Σλ_i x_i / Σλ_i  ±  ( log(2/α) + Σ v_i ψ(λ_i) ) / Σλ_i,
 *
 * with μ̂_t = (½ + Σ x_i)/(t + 1), σ̂²_t = (¼ + Σ (x_i − μ̂_i)²)/(t + 1) and
 * λ_t = min( √(2 log(2/α) / (σ̂²_{t−1} · t · log(1 + t))), ½ ). Because the guarantee holds
 * for every t simultaneously, the running intersection of the C_t is valid too, and so is
 * stopping at any time the data suggest (after every pair, as often as one likes).
 */

/** A closed interval [low, high]. */
export type Interval = [number, number];

/** The largest bet: Waudby-Smith & Ramdas suggest ½ (or ¾); ½ decided moderate gaps sooner here. */
export const MAX_BET = 0.5;

/** The running state of one confidence sequence (plain numbers, so it can be copied). */
export interface SequenceState {
  alpha: number;
  /** Observations so far. */
  n: number;
  /** Σ x_i (x = (d + 1)/2). */
  sumX: number;
  /** Σ (x_i − μ̂_i)². */
  sumSquares: number;
  /** Σ λ_i, Σ λ_i x_i, Σ v_i ψ(λ_i). */
  sumBets: number;
  sumBetX: number;
  sumPenalty: number;
  /** The running intersection, in units of d. */
  low: number;
  high: number;
}

/** A confidence sequence at level 1 − alpha that has seen nothing yet: [−1, 1]. */
export function newSequence(alpha: number): SequenceState {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  return {
    alpha,
    n: 0,
    sumX: 0,
    sumSquares: 0,
    sumBets: 0,
    sumBetX: 0,
    sumPenalty: 0,
    low: -1,
    high: 1,
  };
}

/** ψ(λ) = (−log(1 − λ) − λ)/4. */
function psi(lambda: number): number {
  return (-Math.log1p(-lambda) - lambda) / 4;
}

/**
 * Adds one paired difference d ∈ [−1, 1] (clamped; NaN is refused) and narrows the running
 * interval. Mutates and returns `s`.
 */
export function addDifference(s: SequenceState, d: number): SequenceState {
  if (Number.isNaN(d)) throw new RangeError("a paired difference must be a number");
  const x = (Math.min(1, Math.max(-1, d)) + 1) / 2;
  const t = s.n + 1;
  const logTerm = Math.log(2 / s.alpha);
  // μ̂_{t−1}, σ̂²_{t−1}: the estimates before this observation (predictable).
  const muPrev = (0.5 + s.sumX) / t;
  const varPrev = (0.25 + s.sumSquares) / t;
  const lambda = Math.min(Math.sqrt(2 * logTerm / (varPrev * t * Math.log(1 + t))), MAX_BET);
  s.sumBets += lambda;
  s.sumBetX += lambda * x;
  s.sumPenalty += 4 * (x - muPrev) ** 2 * psi(lambda);
  s.n = t;
  s.sumX += x;
  const mu = (0.5 + s.sumX) / (t + 1);
  s.sumSquares += (x - mu) ** 2;
  const center = s.sumBetX / s.sumBets;
  const half = (logTerm + s.sumPenalty) / s.sumBets;
  const low = Math.max(s.low, 2 * (center - half) - 1);
  const high = Math.min(s.high, 2 * (center + half) - 1);
  // Empty only where the sequence already missed the mean (probability ≤ alpha): keep the last.
  if (low <= high) {
    s.low = low;
    s.high = high;
  }
  return s;
}

/** The mean of the differences seen, or null before any. */
export function sequenceMean(s: SequenceState): number | null {
  return s.n === 0 ? null : 2 * (s.sumX / s.n) - 1;
}

/** What a comparison's sequence says: it excludes 0, lies inside ±delta, or neither yet. */
export type SequenceStatus = "decided" | "equivalent" | "open";

/**
 * The stopping rule: "decided" once the interval excludes 0 (then `higher` says on which
 * side), "equivalent" once it lies strictly inside (−delta, delta), else "open".
 */
export function sequenceStatus(
  interval: Interval,
  delta: number,
): { status: SequenceStatus; higher: boolean | null } {
  const [low, high] = interval;
  if (low > 0) return { status: "decided", higher: true };
  if (high < 0) return { status: "decided", higher: false };
  if (low > -delta && high < delta) return { status: "equivalent", higher: null };
  return { status: "open", higher: null };
}
