/**
 * SHA-512 (FIPS 180-4) in plain JavaScript, fed in parts: the hash of content ids
 * (core/bundle/content_id.ts), which hashes every value of a bundle's EDN, most of them a few
 * bytes long. Pure.
 *
 * Why not node:crypto's createHash: its first import boots Deno's Node compatibility layer
 * (~15-30 ms of every `dvergr check`, more than the hashing), and each hash object is a
 * native one, several calls across to Rust for a few bytes. 64-bit words are pairs of
 * 32-bit integers (high, low). Large inputs are hashed natively all the same (NATIVE_FROM).
 */

// The first 64 bits of the fractional parts of the cube roots of the first 80 primes, as
// (high, low) pairs.
const K = new Int32Array([
  0x428a2f98,
  0xd728ae22,
  0x71374491,
  0x23ef65cd,
  0xb5c0fbcf,
  0xec4d3b2f,
  0xe9b5dba5,
  0x8189dbbc,
  0x3956c25b,
  0xf348b538,
  0x59f111f1,
  0xb605d019,
  0x923f82a4,
  0xaf194f9b,
  0xab1c5ed5,
  0xda6d8118,
  0xd807aa98,
  0xa3030242,
  0x12835b01,
  0x45706fbe,
  0x243185be,
  0x4ee4b28c,
  0x550c7dc3,
  0xd5ffb4e2,
  0x72be5d74,
  0xf27b896f,
  0x80deb1fe,
  0x3b1696b1,
  0x9bdc06a7,
  0x25c71235,
  0xc19bf174,
  0xcf692694,
  0xe49b69c1,
  0x9ef14ad2,
  0xefbe4786,
  0x384f25e3,
  0x0fc19dc6,
  0x8b8cd5b5,
  0x240ca1cc,
  0x77ac9c65,
  0x2de92c6f,
  0x592b0275,
  0x4a7484aa,
  0x6ea6e483,
  0x5cb0a9dc,
  0xbd41fbd4,
  0x76f988da,
  0x831153b5,
  0x983e5152,
  0xee66dfab,
  0xa831c66d,
  0x2db43210,
  0xb00327c8,
  0x98fb213f,
  0xbf597fc7,
  0xbeef0ee4,
  0xc6e00bf3,
  0x3da88fc2,
  0xd5a79147,
  0x930aa725,
  0x06ca6351,
  0xe003826f,
  0x14292967,
  0x0a0e6e70,
  0x27b70a85,
  0x46d22ffc,
  0x2e1b2138,
  0x5c26c926,
  0x4d2c6dfc,
  0x5ac42aed,
  0x53380d13,
  0x9d95b3df,
  0x650a7354,
  0x8baf63de,
  0x766a0abb,
  0x3c77b2a8,
  0x81c2c92e,
  0x47edaee6,
  0x92722c85,
  0x1482353b,
  0xa2bfe8a1,
  0x4cf10364,
  0xa81a664b,
  0xbc423001,
  0xc24b8b70,
  0xd0f89791,
  0xc76c51a3,
  0x0654be30,
  0xd192e819,
  0xd6ef5218,
  0xd6990624,
  0x5565a910,
  0xf40e3585,
  0x5771202a,
  0x106aa070,
  0x32bbd1b8,
  0x19a4c116,
  0xb8d2d0c8,
  0x1e376c08,
  0x5141ab53,
  0x2748774c,
  0xdf8eeb99,
  0x34b0bcb5,
  0xe19b48a8,
  0x391c0cb3,
  0xc5c95a63,
  0x4ed8aa4a,
  0xe3418acb,
  0x5b9cca4f,
  0x7763e373,
  0x682e6ff3,
  0xd6b2b8a3,
  0x748f82ee,
  0x5defb2fc,
  0x78a5636f,
  0x43172f60,
  0x84c87814,
  0xa1f0ab72,
  0x8cc70208,
  0x1a6439ec,
  0x90befffa,
  0x23631e28,
  0xa4506ceb,
  0xde82bde9,
  0xbef9a3f7,
  0xb2c67915,
  0xc67178f2,
  0xe372532b,
  0xca273ece,
  0xea26619c,
  0xd186b8c7,
  0x21c0c207,
  0xeada7dd6,
  0xcde0eb1e,
  0xf57d4f7f,
  0xee6ed178,
  0x06f067aa,
  0x72176fba,
  0x0a637dc5,
  0xa2c898a6,
  0x113f9804,
  0xbef90dae,
  0x1b710b35,
  0x131c471b,
  0x28db77f5,
  0x23047d84,
  0x32caab7b,
  0x40c72493,
  0x3c9ebe0a,
  0x15c9bebc,
  0x431d67c4,
  0x9c100d4c,
  0x4cc5d4be,
  0xcb3e42b6,
  0x597f299c,
  0xfc657e2a,
  0x5fcb6fab,
  0x3ad6faec,
  0x6c44198c,
  0x4a475817,
]);

// The first 64 bits of the fractional parts of the square roots of the first 8 primes.
const INITIAL = new Int32Array([
  0x6a09e667,
  0xf3bcc908,
  0xbb67ae85,
  0x84caa73b,
  0x3c6ef372,
  0xfe94f82b,
  0xa54ff53a,
  0x5f1d36f1,
  0x510e527f,
  0xade682d1,
  0x9b05688c,
  0x2b3e6c1f,
  0x1f83d9ab,
  0xfb41bd6b,
  0x5be0cd19,
  0x137e2179,
]);

/** The message schedule, shared: compress() runs to its end before anything else does. */
const W = new Int32Array(160);

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
      compress(this.#h, this.#view, 0);
      this.#filled = 0;
    }
    if (bytes.length - i >= 128) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (; bytes.length - i >= 128; i += 128) compress(this.#h, view, i);
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
      compress(this.#h, this.#view, 0);
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
      compress(this.#h, this.#view, 0);
      block.fill(0);
    }
    // The length in bits, a 128-bit big-endian number (its top 64 bits are 0 here).
    this.#view.setUint32(120, Math.floor(this.#length / 0x20000000));
    this.#view.setUint32(124, (this.#length * 8) >>> 0);
    compress(this.#h, this.#view, 0);
    const out = new Uint8Array(64);
    for (let i = 0; i < 16; i++) {
      const w = this.#h[i];
      out[i * 4] = w >>> 24;
      out[i * 4 + 1] = w >>> 16;
      out[i * 4 + 2] = w >>> 8;
      out[i * 4 + 3] = w;
    }
    return out;
  }
}

/**
 * From this many bytes on, a one-shot hash is native when Node's crypto can be had without an
 * import (process.getBuiltinModule): about ten times as fast as this file's (~5 vs ~55 ms a
 * MiB), which pays for booting the Node layer (~30-50 ms) from about a MiB on (a bundle's
 * large fixture file, say).
 */
const NATIVE_FROM = 1 << 20;

type NodeCrypto = typeof import("node:crypto");
let native: NodeCrypto | null | undefined;

function nativeCrypto(): NodeCrypto | null {
  if (native === undefined) {
    const process = (globalThis as {
      process?: { getBuiltinModule?: (id: string) => unknown };
    }).process;
    try {
      native = (process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined) ?? null;
    } catch {
      native = null;
    }
  }
  return native;
}

/** The SHA-512 of the parts given one after the other. */
export function sha512(...parts: Uint8Array[]): Uint8Array {
  if (parts.reduce((n, p) => n + p.length, 0) >= NATIVE_FROM) {
    const crypto = nativeCrypto();
    if (crypto) {
      const h = crypto.createHash("sha512");
      for (const p of parts) h.update(p);
      return new Uint8Array(h.digest());
    }
  }
  const h = new Sha512();
  for (const p of parts) h.update(p);
  return h.digest();
}

/** One 128-byte block at `off` of `view` into the state `H`. */
function compress(H: Int32Array, view: DataView, off: number): void {
  for (let t = 0; t < 32; t++) W[t] = view.getInt32(off + t * 4);
  for (let t = 32; t < 160; t += 2) {
    // σ0 of W[t-15]: rotate right 1 and 8, shift right 7.
    let xh = W[t - 30], xl = W[t - 29];
    const s0h = ((xh >>> 1) | (xl << 31)) ^ ((xh >>> 8) | (xl << 24)) ^ (xh >>> 7);
    const s0l = ((xl >>> 1) | (xh << 31)) ^ ((xl >>> 8) | (xh << 24)) ^ ((xl >>> 7) | (xh << 25));
    // σ1 of W[t-2]: rotate right 19 and 61, shift right 6.
    xh = W[t - 4];
    xl = W[t - 3];
    const s1h = ((xh >>> 19) | (xl << 13)) ^ ((xl >>> 29) | (xh << 3)) ^ (xh >>> 6);
    const s1l = ((xl >>> 19) | (xh << 13)) ^ ((xh >>> 29) | (xl << 3)) ^ ((xl >>> 6) | (xh << 26));
    const lo = (s0l >>> 0) + (s1l >>> 0) + (W[t - 13] >>> 0) + (W[t - 31] >>> 0);
    W[t] = (s0h + s1h + W[t - 14] + W[t - 32] + Math.floor(lo / 0x100000000)) | 0;
    W[t + 1] = lo | 0;
  }
  let ah = H[0], al = H[1], bh = H[2], bl = H[3], ch = H[4], cl = H[5], dh = H[6], dl = H[7];
  let eh = H[8], el = H[9], fh = H[10], fl = H[11], gh = H[12], gl = H[13], hh = H[14], hl = H[15];
  for (let t = 0; t < 160; t += 2) {
    // Σ1 of e: rotate right 14, 18 and 41.
    const S1h = ((eh >>> 14) | (el << 18)) ^ ((eh >>> 18) | (el << 14)) ^ ((el >>> 9) | (eh << 23));
    const S1l = ((el >>> 14) | (eh << 18)) ^ ((el >>> 18) | (eh << 14)) ^ ((eh >>> 9) | (el << 23));
    const chh = (eh & fh) ^ (~eh & gh);
    const chl = (el & fl) ^ (~el & gl);
    const t1lo = (hl >>> 0) + (S1l >>> 0) + (chl >>> 0) + (K[t + 1] >>> 0) + (W[t + 1] >>> 0);
    const t1h = (hh + S1h + chh + K[t] + W[t] + Math.floor(t1lo / 0x100000000)) | 0;
    const t1l = t1lo | 0;
    // Σ0 of a: rotate right 28, 34 and 39.
    const S0h = ((ah >>> 28) | (al << 4)) ^ ((al >>> 2) | (ah << 30)) ^ ((al >>> 7) | (ah << 25));
    const S0l = ((al >>> 28) | (ah << 4)) ^ ((ah >>> 2) | (al << 30)) ^ ((ah >>> 7) | (al << 25));
    const majh = (ah & bh) ^ (ah & ch) ^ (bh & ch);
    const majl = (al & bl) ^ (al & cl) ^ (bl & cl);
    const t2lo = (S0l >>> 0) + (majl >>> 0);
    const t2h = (S0h + majh + Math.floor(t2lo / 0x100000000)) | 0;
    const t2l = t2lo | 0;
    hh = gh;
    hl = gl;
    gh = fh;
    gl = fl;
    fh = eh;
    fl = el;
    const elo = (dl >>> 0) + (t1l >>> 0);
    eh = (dh + t1h + Math.floor(elo / 0x100000000)) | 0;
    el = elo | 0;
    dh = ch;
    dl = cl;
    ch = bh;
    cl = bl;
    bh = ah;
    bl = al;
    const alo = (t1l >>> 0) + (t2l >>> 0);
    ah = (t1h + t2h + Math.floor(alo / 0x100000000)) | 0;
    al = alo | 0;
  }
  add(H, 0, ah, al);
  add(H, 2, bh, bl);
  add(H, 4, ch, cl);
  add(H, 6, dh, dl);
  add(H, 8, eh, el);
  add(H, 10, fh, fl);
  add(H, 12, gh, gl);
  add(H, 14, hh, hl);
}

function add(H: Int32Array, i: number, h: number, l: number): void {
  const lo = (H[i + 1] >>> 0) + (l >>> 0);
  H[i] = (H[i] + h + Math.floor(lo / 0x100000000)) | 0;
  H[i + 1] = lo | 0;
}
