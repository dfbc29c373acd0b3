/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes: the text encoded and padded into the block
 * function's memory, hashed there (WebAssembly: core/sha256_block.ts). Pure.
 *
 * Why not node:crypto's createHash: in Deno each hash object holds native memory that is
 * given back only when V8 collects the object, and a small heap is seldom collected; a run
 * that hashes each of 100,000 cells' inputs as it reads their records grew by ~45 MiB of
 * native memory for 200,000 hashes (~95 MiB for a million). This one allocates only its
 * hex result (and more memory for the block function when a text is longer than any before).
 */
import { sha256Block } from "./sha256_block.ts";

const INITIAL = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);
const encoder = new TextEncoder();

/** The SHA-256 of `text`'s UTF-8 bytes, as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  const block = sha256Block();
  // A UTF-16 code unit is at most 3 UTF-8 bytes; 72 more hold the padding and the length.
  const buf = block.blocks(text.length * 3 + 72);
  const n = encoder.encodeInto(text, buf).written;
  const total = (n + 9 + 63) & ~63;
  buf[n] = 0x80;
  buf.fill(0, n + 1, total - 8);
  // The length in bits, big-endian.
  const bits = n * 8;
  for (let i = 0; i < 8; i++) buf[total - 1 - i] = Math.floor(bits / 2 ** (8 * i)) & 0xff;
  block.state.set(INITIAL);
  block.compress(total / 64);
  let hex = "";
  for (let i = 0; i < 8; i++) hex += (block.state[i] >>> 0).toString(16).padStart(8, "0");
  return hex;
}
