/**
 * The statistics of a scorecard (docs/compatibility.md §8.5): Jeffreys intervals for pass rates,
 * Student-t intervals for mean rewards, posterior probabilities that one pass rate beats
 * another, the paired reward difference, an exact McNemar test, and order statistics.
 * Pure functions over numbers; the numerics match the earlier system's to four decimals.
 */

/** A closed interval [low, high]. */
export type Interval = [number, number];

// Lanczos approximation, g = 7, nine coefficients (double precision to ~1e-15).
const LANCZOS_G = 7;
const LANCZOS = [
  0.99999999999980993,
  676.5203681218851,
  -1259.1392167224028,
  771.32342877765313,
  -176.61502916214059,
  12.507343278686905,
  -0.13857109526572012,
  9.9843695780195716e-6,
  1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0. */
export function logGamma(x: number): number {
  if (x < 0.5) {
    // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
    return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  }
  const z = x - 1;
  let sum = LANCZOS[0];
  for (let i = 1; i < LANCZOS.length; i++) sum += LANCZOS[i] / (z + i);
  const t = z + LANCZOS_G + 0.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The continued fraction of the incomplete beta (modified Lentz), valid for x < (a+1)/(a+b+2). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  const eps = 1e-15;
  let c = 1;
  let d = 1 - (a + b) * x / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let f = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    // Even step.
    let num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    f *= d * c;
    // Odd step.
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    f *= delta;
    if (Math.abs(delta - 1) < eps) break;
  }
  return f;
}

/** The regularized incomplete beta I_x(a, b): the CDF of Beta(a, b) at x. */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(
    logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x),
  );
  if (x < (a + 1) / (a + b + 2)) return front * betaContinuedFraction(a, b, x) / a;
  return 1 - front * betaContinuedFraction(b, a, 1 - x) / b;
}

/** The p-quantile of Beta(a, b), by 61 bisection steps on [0, 1]. */
export function betaQuantile(p: number, a: number, b: number): number {
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 61; i++) {
    const mid = (lo + hi) / 2;
    if (regularizedBeta(mid, a, b) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * The 95% Jeffreys interval of a pass rate: the 2.5% and 97.5% quantiles of
 * Beta(passes + ½, fails + ½), with the low end 0 when nothing passed and the high end 1
 * when everything did; null when there were no attempts.
 */
export function jeffreysInterval(passes: number, n: number): Interval | null {
  if (n <= 0) return null;
  const a = passes + 0.5;
  const b = n - passes + 0.5;
  return [
    passes === 0 ? 0 : betaQuantile(0.025, a, b),
    passes === n ? 1 : betaQuantile(0.975, a, b),
  ];
}

const T_975 = [
  12.706,
  4.303,
  3.182,
  2.776,
  2.571,
  2.447,
  2.365,
  2.306,
  2.262,
  2.228,
  2.201,
  2.179,
  2.160,
  2.145,
  2.131,
  2.120,
  2.110,
  2.101,
  2.093,
  2.086,
  2.080,
  2.074,
  2.069,
  2.064,
  2.060,
  2.056,
  2.052,
  2.048,
  2.045,
  2.042,
];

/** The 97.5% quantile of Student's t with `df` degrees of freedom (table to 30, then 1.96). */
export function tQuantile975(df: number): number {
  if (df < 1) throw new RangeError(`t quantile needs df ≥ 1, got ${df}`);
  return df <= 30 ? T_975[Math.floor(df) - 1] : 1.96;
}

/** The arithmetic mean; null for no values. */
export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/**
 * The 95% Student-t interval of the mean (sample variance, n − 1), clipped to `bounds`
 * (rewards: [0, 1]); null for fewer than two values.
 */
export function meanInterval(
  values: readonly number[],
  bounds: Interval = [0, 1],
): Interval | null {
  const n = values.length;
  if (n < 2) return null;
  const m = mean(values)!;
  let ss = 0;
  for (const v of values) ss += (v - m) * (v - m);
  const half = tQuantile975(n - 1) * Math.sqrt(ss / (n - 1)) / Math.sqrt(n);
  return [Math.max(bounds[0], m - half), Math.min(bounds[1], m + half)];
}

/**
 * P(p_a > p_b − margin) where p_a, p_b have independent Jeffreys posteriors
 * (Beta(pass + ½, fail + ½)), integrated over 2,000 equal cells of [0, 1]: each cell's
 * mass under a's posterior times b's CDF at the cell's midpoint plus the margin.
 * Null when either side has no attempts.
 */
export function pHigher(
  aPass: number,
  aN: number,
  bPass: number,
  bN: number,
  margin = 0,
): number | null {
  if (aN <= 0 || bN <= 0) return null;
  const cells = 2000;
  const aA = aPass + 0.5;
  const aB = aN - aPass + 0.5;
  const bA = bPass + 0.5;
  const bB = bN - bPass + 0.5;
  let total = 0;
  let prev = 0;
  for (let i = 1; i <= cells; i++) {
    const cdf = regularizedBeta(i / cells, aA, aB);
    const mid = (i - 0.5) / cells;
    total += (cdf - prev) * regularizedBeta(mid + margin, bA, bB);
    prev = cdf;
  }
  return Math.min(1, Math.max(0, total));
}

/** The paired difference of two candidates' rewards over the worlds (cases) both ran. */
export interface PairedDifference {
  /** Worlds both ran. */
  worlds: number;
  /** Mean over worlds of (a's mean reward − b's mean reward); null without shared worlds. */
  mean: number | null;
  /** 95% t interval of that mean, clipped to [−1, 1]; null for fewer than two worlds. */
  interval: Interval | null;
}

/**
 * Reward of `a` minus reward of `b`, paired by world: per world each side's mean over its
 * repetitions, then the differences over the worlds both have (with at least one reward).
 */
export function pairedDifference(
  a: ReadonlyMap<string, readonly number[]>,
  b: ReadonlyMap<string, readonly number[]>,
): PairedDifference {
  const diffs: number[] = [];
  for (const world of [...a.keys()].sort()) {
    const ra = a.get(world)!;
    const rb = b.get(world);
    if (ra.length === 0 || rb === undefined || rb.length === 0) continue;
    diffs.push(mean(ra)! - mean(rb)!);
  }
  return { worlds: diffs.length, mean: mean(diffs), interval: meanInterval(diffs, [-1, 1]) };
}

/**
 * The exact two-sided McNemar test on discordant pairs: `b` pairs where only the first
 * passed, `c` where only the second did. p = min(1, 2·P(X ≤ min(b, c))), X ~ Bin(b + c, ½);
 * 1 when there are no discordant pairs.
 */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  // Sum C(n, i) / 2^n for i ≤ k in log space, so large n neither overflows nor underflows.
  const logs: number[] = [];
  let logC = 0;
  for (let i = 0; i <= k; i++) {
    logs.push(logC - n * Math.LN2);
    logC += Math.log(n - i) - Math.log(i + 1);
  }
  // Terms grow with i up to n/2, and k ≤ n/2: the last term is the largest.
  const top = logs[logs.length - 1];
  let sum = 0;
  for (const l of logs) sum += Math.exp(l - top);
  return Math.min(1, 2 * Math.exp(top) * sum);
}

/** The median (the mean of the two middle values for an even count); null for no values. */
export function median(values: readonly number[]): number | null {
  const n = values.length;
  if (n === 0) return null;
  const s = [...values].sort((x, y) => x - y);
  return n % 2 === 1 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/**
 * The q-quantile, interpolated linearly between the order statistics around q·(n − 1) (as
 * numpy and R's default do). Monotone in q, so the 90th percentile is never below the median
 * (taking element ⌊q·(n − 1)⌋, as the earlier report did, gives p90 < median for n = 2).
 */
export function percentile(values: readonly number[], q: number): number | null {
  const n = values.length;
  if (n === 0) return null;
  const s = [...values].sort((x, y) => x - y);
  const h = q * (n - 1);
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  return s[lo] + (h - lo) * (s[hi] - s[lo]);
}

/**
 * The p-quantile of Student's t with `df` degrees of freedom (df ≥ 1, 0 < p < 1), by
 * bisection on its CDF, F(t) = 1 − ½ I_{df/(df+t²)}(df/2, ½) for t ≥ 0.
 */
export function tQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`t quantile needs 0 < p < 1, got ${p}`);
  if (!(df >= 1)) throw new RangeError(`t quantile needs df ≥ 1, got ${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -tQuantile(1 - p, df);
  const upper = (t: number) => 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
  let lo = 0;
  let hi = 1;
  while (upper(hi) > 1 - p && hi < 1e12) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (upper(mid) > 1 - p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
