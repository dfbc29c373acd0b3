/**
 * SHA-512 (FIPS 180-4), fed in parts: the hash of content ids (core/bundle/content_id.ts),
 * which hashes every value of a bundle's EDN, most of them a few bytes long. Padding and
 * parts here; the block function is WebAssembly (core/sha512_block.ts). Pure.
 *
 * Why not node:crypto's createHash: its first import boots Deno's Node compatibility layer
 * (~15-30 ms of every `dvergr check`, more than the hashing), and each hash object is a
 * native one, several calls across to Rust for a few bytes. Nor for large inputs: the block
 * function hashes a MiB in ~4 ms, node:crypto in ~3.4 after ~40 ms to boot that layer.
 */
import { MAX_BLOCKS, sha512Block } from "./sha512_block.ts";

// The first 64 bits of the fractional parts of the square roots of the first 8 primes, as
// (low, high) pairs of 32-bit integers: the block function's state, little-endian words.
const INITIAL = new Int32Array([
  0xf3bcc908,
  0x6a09e667,
  0x84caa73b,
  0xbb67ae85,
  0xfe94f82b,
  0x3c6ef372,
  0x5f1d36f1,
  0xa54ff53a,
  0xade682d1,
  0x510e527f,
  0x2b3e6c1f,
  0x9b05688c,
  0xfb41bd6b,
  0x1f83d9ab,
  0x137e2179,
  0x5be0cd19,
]);

/** `n` blocks of `bytes` from `off` into the state `h` (its (low, high) pairs). */
function compress(h: Int32Array, bytes: Uint8Array, off: number, n: number): void {
  const block = sha512Block();
  block.state.set(h);
  for (let done = 0; done < n;) {
    const k = Math.min(n - done, MAX_BLOCKS);
    block.blocks.set(bytes.subarray(off + done * 128, off + (done + k) * 128));
    block.compress(k);
    done += k;
  }
  h.set(block.state);
}

/** An incremental SHA-512: update() with the bytes in order, then digest() once. */
export class Sha512 {
  #h = new Int32Array(INITIAL);
  #block = new Uint8Array(128);
  #view = new DataView(this.#block.buffer);
  #filled = 0;
  #length = 0;

  update(bytes: Uint8Array): this {
    this.#length += bytes.length;
    let i = 0;
    if (this.#filled > 0) {
      const take = Math.min(128 - this.#filled, bytes.length);
      this.#block.set(bytes.subarray(0, take), this.#filled);
      this.#filled += take;
      i = take;
      if (this.#filled < 128) return this;
      compress(this.#h, this.#block, 0, 1);
      this.#filled = 0;
    }
    const whole = Math.floor((bytes.length - i) / 128);
    if (whole > 0) {
      compress(this.#h, bytes, i, whole);
      i += whole * 128;
    }
    this.#block.set(bytes.subarray(i), 0);
    this.#filled = bytes.length - i;
    return this;
  }

  /** update() with one byte (a tag, a flag) without making an array of it. */
  byte(b: number): this {
    this.#block[this.#filled++] = b;
    this.#length++;
    if (this.#filled === 128) {
      compress(this.#h, this.#block, 0, 1);
      this.#filled = 0;
    }
    return this;
  }

  /**
   * Back to the start, for another hash: a hasher used again makes none of its buffers anew
   * (content ids hash thousands of small values; their allocation cost more than hashing).
   */
  reset(): this {
    this.#h.set(INITIAL);
    this.#filled = 0;
    this.#length = 0;
    return this;
  }

  /** The 64-byte hash of everything given. */
  digest(): Uint8Array {
    const block = this.#block;
    block[this.#filled] = 0x80;
    block.fill(0, this.#filled + 1);
    if (this.#filled >= 112) {
      compress(this.#h, block, 0, 1);
      block.fill(0);
    }
    // The length in bits, a 128-bit big-endian number (its top 64 bits are 0 here).
    this.#view.setUint32(120, Math.floor(this.#length / 0x20000000));
    this.#view.setUint32(124, (this.#length * 8) >>> 0);
    compress(this.#h, block, 0, 1);
    const out = new Uint8Array(64);
    const view = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) {
      view.setInt32(i * 8, this.#h[i * 2 + 1]);
      view.setInt32(i * 8 + 4, this.#h[i * 2]);
    }
    return out;
  }
}

/** The SHA-512 of the parts given one after the other. */
export function sha512(...parts: Uint8Array[]): Uint8Array {
  const h = new Sha512();
  for (const p of parts) h.update(p);
  return h.digest();
}
