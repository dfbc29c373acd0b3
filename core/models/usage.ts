/**
 * Tokens of an attempt. `input` counts every prompt token, cached parts included;
 * `cacheRead` and `cacheWrite` are subsets of it (the input rate applies to
 * input − cacheRead − cacheWrite), so the cache share is cacheRead / input.
 */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** No tokens at all. */
export const NO_USAGE: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
