/**
 * The fixed case shuffle behind `--cases N`: Java's `java.util.Random` and
 * `Collections.shuffle`, reproduced bit for bit so that "the first N cases" names the same
 * cases here as in the earlier system (docs/compatibility.md §7.2). Pure; 48-bit arithmetic in BigInt.
 */
import { DvergrError } from "../errors.ts";

/** The seed of the `--cases N` shuffle. */
export const CASE_SHUFFLE_SEED = 20261001;

const MULTIPLIER = 0x5DEECE66Dn;
const ADDEND = 0xBn;
const MASK = (1n << 48n) - 1n;

/** A generator with the exact sequence of `new java.util.Random(seed)`. */
export interface JavaRandom {
  /** Java's `next(bits)`: the top `bits` of the next state, as a signed 32-bit int. */
  next(bits: number): number;
  /** Java's `nextInt(bound)`: uniform in [0, bound), with Java's rejection of biased draws. */
  nextInt(bound: number): number;
}

/** A generator seeded like `new java.util.Random(seed)` (seed is a Java long). */
export function javaRandom(seed: number | bigint): JavaRandom {
  let state = (BigInt.asIntN(64, BigInt(seed)) ^ MULTIPLIER) & MASK;

  function next(bits: number): number {
    state = (state * MULTIPLIER + ADDEND) & MASK;
    return Number(BigInt.asIntN(32, state >> BigInt(48 - bits)));
  }

  function nextInt(bound: number): number {
    if (!Number.isInteger(bound) || bound <= 0 || bound > 0x7fffffff) {
      throw new RangeError(`nextInt bound must be a positive 32-bit int, got ${bound}`);
    }
    let r = next(31);
    const m = bound - 1;
    if ((bound & m) === 0) {
      // A power of two: the high bits of r, as Java's (int)((bound * (long)r) >> 31).
      return Number((BigInt(bound) * BigInt(r)) >> 31n);
    }
    // Java rejects a draw when u - r + m overflows int32: u fell in the last, partial bucket.
    let u = r;
    r = u % bound;
    while (u - r + m > 0x7fffffff) {
      u = next(31);
      r = u % bound;
    }
    return r;
  }

  return { next, nextInt };
}

/**
 * A shuffled copy of `list`, as `Collections.shuffle(list, new Random(seed))` orders it
 * (or with the given generator, which it advances).
 */
export function javaShuffle<T>(list: readonly T[], random: JavaRandom | number | bigint): T[] {
  const rnd = typeof random === "object" ? random : javaRandom(random);
  const out = [...list];
  for (let i = out.length; i > 1; i--) {
    const j = rnd.nextInt(i);
    const tmp = out[i - 1];
    out[i - 1] = out[j];
    out[j] = tmp;
  }
  return out;
}

/**
 * The cases `--cases N` runs: every id in string order, shuffled with seed 20261001, the
 * first `n` of that, sorted again. The same ids and `n` always give the same cases; `n`
 * beyond the count gives all, `n` of 0 gives none.
 */
export function selectCases(ids: readonly string[], n: number): string[] {
  if (!Number.isInteger(n) || n < 0) {
    throw new DvergrError(
      "USAGE",
      `Cannot select cases: --cases must be a whole number ≥ 0, got "${n}"`,
      {
        hint: "Give the number of cases to run, e.g. --cases 30",
      },
    );
  }
  // Default sort compares UTF-16 code units, as Java's String.compareTo does.
  const sorted = [...ids].sort();
  return javaShuffle(sorted, CASE_SHUFFLE_SEED).slice(0, n).sort();
}
