/**
 * zlib streams as packs hold them: `adler32` (the checksum closing a stream) and `zlibDecode`,
 * which copies out streams of stored blocks (what `pack_write.ts` writes for small objects,
 * where zlib's fixed cost per call outweighs what it saves) and inflates any other.
 */
import { inflateSync } from "node:zlib";

/** The Adler-32 checksum that ends a zlib stream. */
export function adler32(data: Uint8Array): number {
  let a = 1, b = 0;
  for (let i = 0; i < data.length;) {
    const stop = Math.min(i + 3800, data.length); // no overflow before the modulo
    for (; i < stop; i++) {
      a += data[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Inflates a zlib stream; streams of stored blocks (ours, for small objects) are copied out. */
export function zlibDecode(z: Uint8Array, size: number): Uint8Array {
  if (z.length >= 11 && (z[0] & 0x0f) === 8 && !(z[1] & 0x20) && ((z[2] >> 1) & 3) === 0) {
    const out = new Uint8Array(size);
    let p = 2, n = 0;
    for (;;) {
      const head = z[p];
      if (((head >> 1) & 3) !== 0 || p + 5 > z.length) break; // not all stored: let zlib do it
      const len = z[p + 1] | (z[p + 2] << 8);
      if (((z[p + 3] | (z[p + 4] << 8)) ^ 0xffff) !== len || n + len > size) break;
      out.set(z.subarray(p + 5, p + 5 + len), n);
      n += len;
      p += 5 + len;
      if (head & 1) {
        const sum = p + 4 <= z.length
          ? new DataView(z.buffer, z.byteOffset + p, 4).getUint32(0)
          : -1;
        if (n === size && sum === adler32(out)) return out;
        break;
      }
    }
  }
  return inflateSync(z);
}
