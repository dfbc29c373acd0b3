/**
 * Costs of model tokens, exact, in integer microdollars (1e-6 $).
 *
 * A price of p dollars per million tokens is p microdollars per token. Prices are held as
 * integer picodollars per token (p × 1e6, so six decimals of a dollar-per-million price are
 * exact) and products are summed as bigints; a total is rounded to the microdollar once,
 * half up. Summing an attempt's tokens first and pricing the sum therefore gives the same
 * figure as any order of calls.
 *
 * Usage counts (core/bench/candidate.ts `Usage`): `input` is every prompt token, cached or
 * not; `cacheRead` and `cacheWrite` are the parts of it read from or written to a prompt
 * cache; `output` includes reasoning tokens. So the tokens billed at the input rate are
 * input − cacheRead − cacheWrite, and cacheRead / input is the cached share.
 */
import type { Usage } from "./usage.ts";

/** Dollars per million tokens. */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const FREE: ModelPrices = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

const PICO_PER_MICRO = 1_000_000n;

/** A price in dollars per million tokens as integer picodollars per token. */
export function picoPerToken(dollarsPerMillion: number): bigint {
  return BigInt(Math.round(dollarsPerMillion * 1_000_000));
}

/** Prompt tokens billed at the input rate: those neither read from nor written to a cache. */
export function uncachedInput(usage: Usage): number {
  return Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite);
}

/** The exact cost of `usage` at `prices`, in picodollars. */
export function costPico(usage: Usage, prices: ModelPrices): bigint {
  return BigInt(uncachedInput(usage)) * picoPerToken(prices.input) +
    BigInt(usage.output) * picoPerToken(prices.output) +
    BigInt(usage.cacheRead) * picoPerToken(prices.cacheRead) +
    BigInt(usage.cacheWrite) * picoPerToken(prices.cacheWrite);
}

/** Picodollars rounded half up to whole microdollars. */
export function picoToMicros(pico: bigint): number {
  return Number((pico + PICO_PER_MICRO / 2n) / PICO_PER_MICRO);
}

/** The cost of `usage` at `prices`, in whole microdollars (rounded half up, once). */
export function costMicros(usage: Usage, prices: ModelPrices): number {
  return picoToMicros(costPico(usage, prices));
}

/** Microdollars as dollars with four decimals, e.g. 18375 → "$0.0184". */
export function formatDollars(micros: number): string {
  return `$${(micros / 1_000_000).toFixed(4)}`;
}

/** The sum of two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
  };
}
