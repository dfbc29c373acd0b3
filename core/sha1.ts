/**
 * SHA-1 (FIPS 180-4) in plain JavaScript, fed in parts: git's object ids
 * (core/codecs/git/objects.ts), thousands of small objects per commit of a bundle. Pure.
 *
 * Why not node:crypto's createHash for them: each hash object is a native one (three calls
 * across to Rust and a wrapper object for a blob of a few dozen bytes, ~5 µs each before the
 * JIT warms up) whose memory goes back only when V8 collects it. Installing a 1,000-case
 * bundle hashes ~4,000 objects. Large contents are hashed natively by the caller all the same.
 */

const INITIAL = new Int32Array([0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0]);

/** The message schedule, shared: compress() runs to its end before anything else does. */
const W = new Int32Array(80);

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** An incremental SHA-1: update() and byte() with the bytes in order, then a digest once. */
export class Sha1 {
  #h = new Int32Array(INITIAL);
  #block = new Uint8Array(64);
  #filled = 0;
  #length = 0;

  update(bytes: Uint8Array): this {
    this.#length += bytes.length;
    let i = 0;
    if (this.#filled > 0) {
      const take = Math.min(64 - this.#filled, bytes.length);
      this.#block.set(bytes.subarray(0, take), this.#filled);
      this.#filled += take;
      i = take;
      if (this.#filled < 64) return this;
      compress(this.#h, this.#block, 0);
      this.#filled = 0;
    }
    for (; bytes.length - i >= 64; i += 64) compress(this.#h, bytes, i);
    this.#block.set(bytes.subarray(i), 0);
    this.#filled = bytes.length - i;
    return this;
  }

  /** update() with one byte, without making an array of it. */
  byte(b: number): this {
    this.#block[this.#filled++] = b;
    this.#length++;
    if (this.#filled === 64) {
      compress(this.#h, this.#block, 0);
      this.#filled = 0;
    }
    return this;
  }

  /** Back to the start, for another hash (a hasher used again makes no buffer anew). */
  reset(): this {
    this.#h.set(INITIAL);
    this.#filled = 0;
    this.#length = 0;
    return this;
  }

  /** The 20-byte hash of everything given, in lower-case hex. */
  hexDigest(): string {
    const block = this.#block;
    block[this.#filled] = 0x80;
    block.fill(0, this.#filled + 1);
    if (this.#filled >= 56) {
      compress(this.#h, block, 0);
      block.fill(0);
    }
    // The length in bits, a 64-bit big-endian number.
    const high = Math.floor(this.#length / 0x20000000);
    const low = (this.#length * 8) >>> 0;
    for (let i = 0; i < 4; i++) {
      block[56 + i] = high >>> (24 - 8 * i);
      block[60 + i] = low >>> (24 - 8 * i);
    }
    compress(this.#h, block, 0);
    let out = "";
    for (let i = 0; i < 5; i++) {
      const w = this.#h[i];
      out += HEX[w >>> 24] + HEX[(w >>> 16) & 0xff] + HEX[(w >>> 8) & 0xff] + HEX[w & 0xff];
    }
    return out;
  }
}

/** One 64-byte block at `off` of `b` into the state `H`. */
function compress(H: Int32Array, b: Uint8Array, off: number): void {
  for (let t = 0; t < 16; t++) {
    const i = off + t * 4;
    W[t] = (b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];
  }
  for (let t = 16; t < 80; t++) {
    const x = W[t - 3] ^ W[t - 8] ^ W[t - 14] ^ W[t - 16];
    W[t] = (x << 1) | (x >>> 31);
  }
  let a = H[0], bb = H[1], c = H[2], d = H[3], e = H[4];
  for (let t = 0; t < 80; t++) {
    let f: number, k: number;
    if (t < 20) {
      f = (bb & c) | (~bb & d);
      k = 0x5a827999;
    } else if (t < 40) {
      f = bb ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (t < 60) {
      f = (bb & c) | (bb & d) | (c & d);
      k = 0x8f1bbcdc | 0;
    } else {
      f = bb ^ c ^ d;
      k = 0xca62c1d6 | 0;
    }
    const next = (((a << 5) | (a >>> 27)) + f + e + k + W[t]) | 0;
    e = d;
    d = c;
    c = (bb << 30) | (bb >>> 2);
    bb = a;
    a = next;
  }
  H[0] = (H[0] + a) | 0;
  H[1] = (H[1] + bb) | 0;
  H[2] = (H[2] + c) | 0;
  H[3] = (H[3] + d) | 0;
  H[4] = (H[4] + e) | 0;
}
