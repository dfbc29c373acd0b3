/**
 * A checker.js worker's boot image as a file: the QuickJS memory once the prelude and the
 * loop guard ran (sandbox/quickjs_call.ts; sandbox/sci_image.ts's format), so that a new
 * worker restores it instead of running them (their parse and first run, with the lazy
 * compilation of QuickJS's functions it needs, is most of a worker's boot).
 *
 * The file is a magic word, the SHA-256 of the image, its length, then the image. The host
 * (sandbox/quickjs_image_cache.ts) reads the file and sends its bytes as they are; the
 * worker checks them here, off the host's thread, before it restores anything: bytes that
 * are short, long, foreign or whose hash does not hold are no image, and the worker runs the
 * prelude. The image is made by a worker at its start, before any checker ran in it, and
 * only ever restored into a worker's own QuickJS memory, whose module must match it (the
 * same layout and handles: sandbox/quickjs_runtime.ts restoreImage).
 *
 * No permissions (crypto.subtle).
 */

import { frame, unframe } from "./sci_image.ts";
import { frameHeader, sameHash, unframeImage } from "./image_frame.ts";

const MAGIC = new TextEncoder().encode("DVQJSIM1");

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/** The file's bytes for `image`: magic word, SHA-256, length, image (image_frame.ts). */
export async function imageFileBytes(image: Uint8Array): Promise<Uint8Array> {
  const head = frameHeader(MAGIC, await sha256(image), image.byteLength);
  const out = new Uint8Array(head.byteLength + image.byteLength);
  out.set(head, 0);
  out.set(image, head.byteLength);
  return out;
}

/** The image the file's `bytes` hold when they are whole and its hash holds; else null. */
export async function imageOfFile(bytes: Uint8Array): Promise<Uint8Array | null> {
  const framed = unframeImage(bytes, MAGIC);
  if (framed === null) return null;
  return sameHash(await sha256(framed.image), framed.hash) ? framed.image : null;
}

/** The SHA-256 the file's bytes claim for their image, in hex (a name, not a check). */
export function claimedId(bytes: Uint8Array): string {
  return Array.from(
    bytes.subarray(MAGIC.byteLength, Math.min(bytes.byteLength, MAGIC.byteLength + 32)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/**
 * What a checker image says about itself: a checker.js loaded in a worker restored from a
 * boot image, as that worker's whole memory right after the load (the host pairs it with the
 * boot image: sandbox/quickjs_image_cache.ts), and the heap addresses a worker restored from
 * the same boot image needs to call it.
 */
export interface CheckerImageMeta {
  format: 1;
  engine: "checker.js";
  /** The checker's key (the SHA-256 of its source). */
  key: string;
  gapEnd: number;
  /** One past the last byte the image holds. */
  top: number;
  /** The heap address of the checker's module namespace handle. */
  exports: number;
  /** The heap addresses of the prelude's helper handles of the worker that made it. */
  helpers: number[];
  /** What checker.js wrote with console.* while it loaded. */
  logs: string[];
  /**
   * The QuickJS heap and stack limits of the worker that made it: they lie in the image's
   * memory, so a worker with other limits must not take it.
   */
  limits: [number, number];
}

/** A checker image's bytes (before its file's header). */
export function encodeCheckerImage(
  meta: CheckerImageMeta,
  low: Uint8Array,
  high: Uint8Array,
): Uint8Array {
  return frame({ meta, low, high });
}

/**
 * The checker image in `bytes` when it is one of checker `key` whose low part is `lowBytes`
 * long; null otherwise (the engine checks the addresses against its own).
 */
export function decodeCheckerImage(
  bytes: Uint8Array,
  key: string,
  lowBytes: number,
): { meta: CheckerImageMeta; low: Uint8Array; high: Uint8Array } | null {
  try {
    const framed = unframe(bytes, 1024 * 1024);
    if (framed === null || framed.start + lowBytes > bytes.byteLength) return null;
    const m = framed.meta as Record<string, unknown>;
    const int = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
    const high = bytes.subarray(framed.start + lowBytes);
    const valid = typeof m === "object" && m !== null && m.format === 1 &&
      m.engine === "checker.js" && m.key === key && int(m.gapEnd) && int(m.top) &&
      int(m.exports) && Array.isArray(m.helpers) && m.helpers.every(int) &&
      Array.isArray(m.logs) && m.logs.every((l) => typeof l === "string") &&
      Array.isArray(m.limits) && m.limits.length === 2 && m.limits.every(int) &&
      (m.top as number) === (m.gapEnd as number) + high.byteLength;
    if (!valid) return null;
    return {
      meta: m as unknown as CheckerImageMeta,
      low: bytes.subarray(framed.start, framed.start + lowBytes),
      high,
    };
  } catch {
    return null;
  }
}
