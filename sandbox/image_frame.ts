/**
 * The frame of an image file (a QuickJS boot or checker image, sandbox/quickjs_image.ts; a
 * Clojure worker's, sandbox/sci_image_cache.ts): an 8-byte magic word naming the kind, the
 * SHA-256 of the image, its length (64-bit little-endian), then the image. Each caller hashes
 * with what its side may load (the worker: crypto.subtle; the host: node:crypto), so this
 * module only frames and unframes, and compares.
 *
 * No permissions.
 */

/** Bytes before the image: magic word, SHA-256, length. */
export function frameHeader(magic: Uint8Array, hash: Uint8Array, length: number): Uint8Array {
  const head = new Uint8Array(magic.byteLength + 32 + 8);
  head.set(magic, 0);
  head.set(hash, magic.byteLength);
  const view = new DataView(head.buffer);
  view.setUint32(magic.byteLength + 32, length % 2 ** 32, true);
  view.setUint32(magic.byteLength + 36, Math.floor(length / 2 ** 32), true);
  return head;
}

/**
 * The image `bytes` frame and the hash they say it has, when they begin with `magic` and are
 * exactly as long as they say; null otherwise (short, long, foreign).
 */
export function unframeImage(
  bytes: Uint8Array,
  magic: Uint8Array,
): { image: Uint8Array; hash: Uint8Array } | null {
  const header = magic.byteLength + 32 + 8;
  if (bytes.byteLength < header) return null;
  for (let i = 0; i < magic.byteLength; i++) if (bytes[i] !== magic[i]) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(magic.byteLength + 32, true) +
    view.getUint32(magic.byteLength + 36, true) * 2 ** 32;
  if (length !== bytes.byteLength - header) return null;
  return {
    image: bytes.subarray(header),
    hash: bytes.subarray(magic.byteLength, magic.byteLength + 32),
  };
}

/** Whether two hashes are the same bytes. */
export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
