import assert from "node:assert/strict";
import {
  betaQuantile,
  jeffreysInterval,
  logGamma,
  mcnemarExact,
  mean,
  meanInterval,
  median,
  pairedDifference,
  percentile,
  pHigher,
  regularizedBeta,
  tQuantile,
  tQuantile975,
} from "../../../core/bench/stats.ts";

function close(actual: number | null | undefined, expected: number, digits = 4): void {
  assert.ok(actual !== null && actual !== undefined, `expected ${expected}, got ${actual}`);
  assert.ok(
    Math.abs(actual - expected) < 0.5 * 10 ** -digits,
    `expected ${expected} to ${digits} digits, got ${actual}`,
  );
}

function closeInterval(actual: [number, number] | null, expected: [number, number]): void {
  assert.ok(actual !== null, `expected [${expected}], got null`);
  close(actual[0], expected[0]);
  close(actual[1], expected[1]);
}

Deno.test("logGamma() agrees with factorials and Γ(½) = √π", () => {
  close(logGamma(10), Math.log(362880), 10);
  close(logGamma(1), 0, 12);
  close(logGamma(0.5), 0.5 * Math.log(Math.PI), 12);
  close(logGamma(0.25), Math.log(3.6256099082219083), 10);
});

Deno.test("regularizedBeta() is the Beta CDF: uniform, symmetric, and Beta(2,3)", () => {
  close(regularizedBeta(0.3, 1, 1), 0.3, 12);
  close(regularizedBeta(0.5, 3.5, 3.5), 0.5, 12);
  // Beta(2,3) CDF: 6x² − 8x³ + 3x⁴.
  const x = 0.4;
  close(regularizedBeta(x, 2, 3), 6 * x ** 2 - 8 * x ** 3 + 3 * x ** 4, 12);
  assert.equal(regularizedBeta(0, 2, 3), 0);
  assert.equal(regularizedBeta(1, 2, 3), 1);
});

Deno.test("betaQuantile() inverts regularizedBeta()", () => {
  const q = betaQuantile(0.8, 2.5, 4.5);
  close(regularizedBeta(q, 2.5, 4.5), 0.8, 12);
});

Deno.test("jeffreysInterval() gives the reference's vectors for 3/4, 1/4, 0/4 and 4/4", () => {
  closeInterval(jeffreysInterval(3, 4), [0.2838, 0.9715]);
  closeInterval(jeffreysInterval(1, 4), [0.0285, 0.7162]);
  assert.deepEqual(jeffreysInterval(0, 4)?.[0], 0);
  closeInterval(jeffreysInterval(0, 4), [0, 0.4448]);
  assert.deepEqual(jeffreysInterval(4, 4)?.[1], 1);
  closeInterval(jeffreysInterval(4, 4), [0.5552, 1]);
});

Deno.test("jeffreysInterval() is null without attempts", () => {
  assert.equal(jeffreysInterval(0, 0), null);
});

Deno.test("tQuantile975() reads the table to 30 degrees of freedom, then 1.96", () => {
  assert.equal(tQuantile975(1), 12.706);
  assert.equal(tQuantile975(3), 3.182);
  assert.equal(tQuantile975(30), 2.042);
  assert.equal(tQuantile975(31), 1.96);
  assert.throws(() => tQuantile975(0), RangeError);
});

Deno.test("meanInterval() of [1, 1, 1, 0.5] is [0.4773, 1] (clipped at 1)", () => {
  close(mean([1, 1, 1, 0.5]), 0.875, 12);
  closeInterval(meanInterval([1, 1, 1, 0.5]), [0.4773, 1]);
  assert.equal(meanInterval([1, 1, 1, 0.5])?.[1], 1);
});

Deno.test("meanInterval() is null for fewer than two values and clips to given bounds", () => {
  assert.equal(meanInterval([]), null);
  assert.equal(meanInterval([0.5]), null);
  assert.equal(mean([]), null);
  // mean −0.5, s = 0.7071, t(1) = 12.706 → half-width 6.35: clipped to [−1, 1].
  assert.deepEqual(meanInterval([-1, 0], [-1, 1]), [-1, 1]);
  // An unclipped case: [0.4, 0.5, 0.6] → 0.5 ± 4.303 · 0.1 / √3.
  const half = 4.303 * 0.1 / Math.sqrt(3);
  closeInterval(meanInterval([0.4, 0.5, 0.6]), [0.5 - half, 0.5 + half]);
});

Deno.test("pHigher() gives the reference's vectors: 3/4 vs 1/4 and 2/4 vs 2/4", () => {
  close(pHigher(3, 4, 1, 4, 0), 0.9216);
  close(pHigher(3, 4, 1, 4, 0.05), 0.9427);
  close(pHigher(2, 4, 2, 4, 0), 0.5);
});

Deno.test("pHigher() is complementary when the sides swap and null without attempts", () => {
  close(pHigher(1, 4, 3, 4, 0)!, 1 - pHigher(3, 4, 1, 4, 0)!, 3);
  assert.equal(pHigher(0, 0, 1, 4), null);
  assert.equal(pHigher(1, 4, 0, 0), null);
});

Deno.test("pairedDifference() pairs worlds, averaging repetitions first", () => {
  const a = new Map([["w1", [1, 0.5]], ["w2", [1]], ["w3", [0]], ["only-a", [1]]]);
  const b = new Map([["w1", [0.5]], ["w2", [0, 0]], ["w3", [0.5]], ["only-b", [0]]]);
  const d = pairedDifference(a, b);
  // Differences: 0.75 − 0.5, 1 − 0, 0 − 0.5 = 0.25, 1, −0.5 → mean 0.25, s = 0.75.
  assert.equal(d.worlds, 3);
  close(d.mean, 0.25, 12);
  const half = 4.303 * 0.75 / Math.sqrt(3);
  closeInterval(d.interval, [Math.max(-1, 0.25 - half), Math.min(1, 0.25 + half)]);
  assert.equal(d.interval?.[0], -1);
});

Deno.test("pairedDifference() without shared worlds has no mean and no interval", () => {
  const d = pairedDifference(new Map([["x", [1]]]), new Map([["y", [1]]]));
  assert.deepEqual(d, { worlds: 0, mean: null, interval: null });
  const one = pairedDifference(new Map([["x", [1]]]), new Map([["x", [0.25]]]));
  assert.deepEqual(one, { worlds: 1, mean: 0.75, interval: null });
});

Deno.test("mcnemarExact() matches hand-computed exact binomial p-values", () => {
  close(mcnemarExact(0, 5), 0.0625, 10); // 2 · 1/32
  close(mcnemarExact(5, 0), 0.0625, 10);
  close(mcnemarExact(1, 9), 0.021484375, 10); // 2 · 11/1024
  close(mcnemarExact(2, 8), 2 * 56 / 1024, 10); // 1 + 10 + 45 = 56
  assert.equal(mcnemarExact(3, 3), 1);
  assert.equal(mcnemarExact(0, 0), 1);
  assert.equal(mcnemarExact(0, 1), 1);
});

Deno.test("mcnemarExact() stays finite for thousands of discordant pairs", () => {
  // Normal approximation with continuity correction: z = (|b − c| − 1) / √(b + c).
  const p = mcnemarExact(4000, 4100);
  close(p, 0.2713, 3);
  const tiny = mcnemarExact(100, 1500);
  assert.ok(tiny > 0 && tiny < 1e-300, String(tiny));
});

Deno.test("median() averages the middle pair; percentile() interpolates at q·(n−1)", () => {
  assert.equal(median([30, 10, 20]), 20);
  assert.equal(median([40, 10, 20, 30]), 25);
  assert.equal(median([]), null);
  const xs = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
  close(percentile(xs, 0.9)!, 9.1, 9); // 0.9 · 9 = 8.1: a tenth of the way from 9 to 10
  assert.equal(percentile([20, 20, 20, 20], 0.9), 20);
  assert.equal(percentile([7], 0.9), 7);
  assert.equal(percentile([], 0.9), null);
});

Deno.test("percentile() at 0.9 is never below the median (two attempts: 100 ms and 900 ms)", () => {
  // Element ⌊0.9·(n−1)⌋ gave 100 ms here, below the median of 500 ms.
  for (const xs of [[100, 900], [1, 2, 3, 1000], [5, 5, 6, 100, 100, 100]]) {
    assert.ok(percentile(xs, 0.9)! >= median(xs)!, JSON.stringify(xs));
  }
  assert.equal(percentile([100, 900], 0.9), 820);
});

Deno.test("tQuantile() agrees with the 97.5% table, is symmetric and tends to the normal quantile", () => {
  for (let df = 1; df <= 30; df++) {
    assert.ok(Math.abs(tQuantile(0.975, df) - tQuantile975(df)) < 0.0006, `df ${df}`);
  }
  close(tQuantile(0.025, 7), -tQuantile(0.975, 7), 9);
  close(tQuantile(0.995, 1e7), 2.5758, 4);
  assert.equal(tQuantile(0.5, 3), 0);
  assert.throws(() => tQuantile(1, 3), RangeError);
});
