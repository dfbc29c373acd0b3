/**
 * SHA-256's block function as a small WebAssembly module (its source, the instructions it is
 * assembled from: core/sha256_block_source.ts), for core/sha256.ts. Why WebAssembly: as for
 * SHA-512 (core/sha512_block.ts), a process's first hashes ran in V8's interpreter and
 * baseline tiers (~1-2 ms for a checker's 2 KB key in `dvergr check`'s start).
 *
 * Memory (one 64 KiB page, grown for a long text): the 64 round constants at K, the message
 * schedule at W, the state (eight 32-bit words, little-endian) at STATE, then the blocks to
 * hash from BLOCKS on. `compress(n)` hashes the n blocks at BLOCKS into the state.
 */

/** Byte offsets in the module's memory. */
export const K = 0;
export const W = 256;
export const STATE = 512;
export const BLOCKS = 1024;

/** The module, as core/sha256_block_source.ts assembles it (a test checks they agree). */
export const SHA256_BLOCK_MODULE = [
  "AGFzbQEAAAABBQFgAX8AAwIBAAUDAQABBxUCBm1lbW9yeQIACGNvbXByZXNzAAAK/QMB+gMBDH9BgAghAQJAA0AgAE",
  "UNAUEAIQIDQCACIAEgAmooAgAhCyALQQh4QYD+g3hxIAtBCHdB/4H8B3FyNgKAAiACQQRqIgJBwABJDQALA0AgAiAC",
  "KAL4ASELIAtBEXggC0ETeHMgC0EKdnMgAigC5AFqIAIoAsQBIQsgC0EHeCALQRJ4cyALQQN2c2ogAigCwAFqNgKAAi",
  "ACQQRqIgJBgAJJDQALQQAoAoAEIQNBACgChAQhBEEAKAKIBCEFQQAoAowEIQZBACgCkAQhB0EAKAKUBCEIQQAoApgE",
  "IQlBACgCnAQhCkEAIQIDQCAKIAdBBnggB0ELeHMgB0EZeHNqIAkgByAIIAlzcXNqIAIoAgBqIAIoAoACaiEMIANBAn",
  "ggA0ENeHMgA0EWeHMgAyAEcSAFIAMgBHJxcmohCyAJIQogCCEJIAchCCAGIAxqIQcgBSEGIAQhBSADIQQgDCALaiED",
  "IAJBBGoiAkGAAkkNAAtBAEEAKAKABCADajYCgARBAEEAKAKEBCAEajYChARBAEEAKAKIBCAFajYCiARBAEEAKAKMBC",
  "AGajYCjARBAEEAKAKQBCAHajYCkARBAEEAKAKUBCAIajYClARBAEEAKAKYBCAJajYCmARBAEEAKAKcBCAKajYCnAQg",
  "AUHAAGohASAAQQFrIQAMAAsLCwuHAgEAQQALgAKYL4pCkUQ3cc/7wLWl27XpW8JWOfER8Vmkgj+S1V4cq5iqB9gBW4",
  "MSvoUxJMN9DFV0Xb5y/rHegKcG3Jt08ZvBwWmb5IZHvu/GncEPzKEMJG8s6S2qhHRK3KmwXNqI+XZSUT6YbcYxqMgn",
  "A7DHf1m/8wvgxkeRp9VRY8oGZykpFIUKtyc4IRsu/G0sTRMNOFNUcwpluwpqdi7JwoGFLHKSoei/oktmGqhwi0vCo1",
  "FsxxnoktEkBpnWhTUO9HCgahAWwaQZCGw3Hkx3SCe1vLA0swwcOUqq2E5Pypxb828uaO6Cj3RvY6V4FHjIhAgCx4z6",
  "/76Q62xQpPej+b7yeHHG",
].join("");

/** The block function: the state, room for the blocks, and compress(n). */
export interface BlockFunction {
  /** The state: eight 32-bit words. */
  state: Int32Array;
  /** The memory from BLOCKS on, at least `bytes` long (grown when it is shorter). */
  blocks(bytes: number): Uint8Array;
  compress(n: number): void;
}

let instance: BlockFunction | undefined;

/** The block function, its module compiled on the first call. */
export function sha256Block(): BlockFunction {
  if (instance !== undefined) return instance;
  const bytes = Uint8Array.fromBase64(SHA256_BLOCK_MODULE);
  const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes));
  const memory = exports.memory as WebAssembly.Memory;
  // Views of the memory: a grown memory has a new buffer.
  let blocks = new Uint8Array(memory.buffer, BLOCKS);
  const block: BlockFunction = {
    state: new Int32Array(memory.buffer, STATE, 8),
    blocks(n) {
      if (blocks.length < n) {
        memory.grow(Math.ceil((n - blocks.length) / 65536));
        blocks = new Uint8Array(memory.buffer, BLOCKS);
        block.state = new Int32Array(memory.buffer, STATE, 8);
      }
      return blocks;
    },
    compress: exports.compress as (n: number) => void,
  };
  return instance = block;
}
