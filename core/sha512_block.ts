/**
 * SHA-512's block function as a small WebAssembly module (its source, the instructions it is
 * assembled from: core/sha512_block_source.ts).
 *
 * Why WebAssembly: a content id is computed once per command, in a process that has not run
 * the hash before, where V8 runs fresh JavaScript in its interpreter and baseline tiers:
 * SHA-512's 64-bit arithmetic on pairs of 32-bit integers cost ~25 µs a block there (~3 ms
 * of `dvergr check` of a small bundle). WebAssembly has 64-bit integers and rotations, and
 * its baseline compiler makes machine code at once: ~2.5 µs a block from the first call,
 * after ~0.3 ms to compile and instantiate the module.
 *
 * Memory (one 64 KiB page): the 80 round constants at K, the message schedule at W, the state
 * (eight 64-bit words, little-endian) at STATE, then the blocks to hash at BLOCKS.
 * `compress(n)` hashes the n blocks at BLOCKS into the state.
 */

/** Byte offsets in the module's memory. */
export const K = 0;
export const W = 640;
export const STATE = 1280;
export const BLOCKS = 2048;
/** The most blocks one compress() call takes. */
export const MAX_BLOCKS = (65536 - BLOCKS) / 128;

/** The module, as core/sha512_block_source.ts assembles it (a test checks they agree). */
export const SHA512_BLOCK_MODULE = [
  "AGFzbQEAAAABBQFgAX8AAwIBAAUDAQABBxUCBm1lbW9yeQIACGNvbXByZXNzAAAKswQBsAQCAn8KfkGAECEBAkADQC",
  "AARQ0BQQAhAgNAIAEgAmopAwAhCyALQgiIQv+B/Ifwn8D/AIMgC0L/gfyH8J/A/wCDQgiGhCELIAtCEIhC//+DgPD/",
  "P4MgC0L//4OA8P8/g0IQhoQhCyALQiCKIQsgAiALNwOABSACQQhqIgJBgAFJDQALA0AgAiACKQPwBCELIAtCE4ogC0",
  "I9ioUgC0IGiIUgAikDyAR8IAIpA4gEIQsgC0IBiiALQgiKhSALQgeIhXwgAikDgAR8NwOABSACQQhqIgJBgAVJDQAL",
  "QQApA4AKIQNBACkDiAohBEEAKQOQCiEFQQApA5gKIQZBACkDoAohB0EAKQOoCiEIQQApA7AKIQlBACkDuAohCkEAIQ",
  "IDQCAKIAdCDoogB0ISioUgB0IpioV8IAkgByAIIAmFg4V8IAIpAwB8IAIpA4AFfCEMIANCHIogA0IiioUgA0InioUg",
  "AyAEgyAFIAMgBISDhHwhCyAJIQogCCEJIAchCCAGIAx8IQcgBSEGIAQhBSADIQQgDCALfCEDIAJBCGoiAkGABUkNAA",
  "tBAEEAKQOACiADfDcDgApBAEEAKQOICiAEfDcDiApBAEEAKQOQCiAFfDcDkApBAEEAKQOYCiAGfDcDmApBAEEAKQOg",
  "CiAHfDcDoApBAEEAKQOoCiAIfDcDqApBAEEAKQOwCiAJfDcDsApBAEEAKQO4CiAKfDcDuAogAUGAAWohASAAQQFrIQ",
  "AMAAsLCwuHBQEAQQALgAUirijXmC+KQs1l7yORRDdxLztN7M/7wLW824mBpdu16Ti1SPNbwlY5GdAFtvER8VmbTxmv",
  "pII/khiBbdrVXhyrQgIDo5iqB9i+b3BFAVuDEoyy5E6+hTEk4rT/1cN9DFVviXvydF2+crGWFjv+sd6ANRLHJacG3J",
  "uUJmnPdPGbwdJK8Z7BaZvk4yVPOIZHvu+11YyLxp3BD2WcrHfMoQwkdQIrWW8s6S2D5KZuqoR0StT7Qb3cqbBctVMR",
  "g9qI+Xar32buUlE+mBAytC1txjGoPyH7mMgnA7DkDu++x39Zv8KPqD3zC+DGJacKk0eRp9VvggPgUWPKBnBuDgpnKS",
  "kU/C/SRoUKtycmySZcOCEbLu0qxFr8bSxN37OVnRMNOFPeY6+LVHMKZaiydzy7Cmp25q7tRy7JwoE7NYIUhSxykmQD",
  "8Uyh6L+iATBCvEtmGqiRl/jQcItLwjC+VAajUWzHGFLv1hnoktEQqWVVJAaZ1iogcVeFNQ70uNG7MnCgahDI0NK4Fs",
  "GkGVOrQVEIbDcemeuO30x3SCeoSJvhtbywNGNaycWzDBw5y4pB40qq2E5z42N3T8qcW6O4stbzby5o/LLvXe6Cj3Rg",
  "LxdDb2OleHKr8KEUeMiE7DlkGggCx4woHmMj+v++kOm9gt7rbFCkFXnGsvej+b4rU3Lj8nhxxpxhJurOPifKB8LAIc",
  "e4htEe6+DN1n3a6njRbu5/T331um8Xcqpn8AammMiixX1jCq4N+b4EmD8RG0ccEzULcRuEfQQj9XfbKJMkx0B7q8oy",
  "vL7JFQq+njxMDRCcxGcdQ7ZCPsu+1MVMKn5l/Jwpf1ns+tY6q2/LXxdYR0qMGURs",
].join("");

/** The block function: the state and block views into its memory, and compress(n). */
export interface BlockFunction {
  /** The state: eight 64-bit words as (low, high) pairs of 32-bit integers. */
  state: Int32Array;
  /** Where the blocks to hash go, MAX_BLOCKS × 128 bytes. */
  blocks: Uint8Array;
  compress(n: number): void;
}

let instance: BlockFunction | undefined;

/** The block function, its module compiled on the first call. */
export function sha512Block(): BlockFunction {
  if (instance === undefined) {
    const bytes = Uint8Array.fromBase64(SHA512_BLOCK_MODULE);
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes));
    const memory = exports.memory as WebAssembly.Memory;
    instance = {
      state: new Int32Array(memory.buffer, STATE, 16),
      blocks: new Uint8Array(memory.buffer, BLOCKS, MAX_BLOCKS * 128),
      compress: exports.compress as (n: number) => void,
    };
  }
  return instance;
}
