/**
 * The boot image of a Clojure worker: the QuickJS module's memory right after SCI booted (the
 * state sandbox/sci_engine.ts's base snapshot is taken from), as bytes a new worker can
 * restore instead of booting SCI again (~0.5–3 s of compiling scittle in QuickJS).
 *
 * Layout: a 4-byte little-endian length, that many bytes of JSON (ImageMeta), then the
 * memory below the C stack (`low`) and from the stack's end up to the heap's top (`high`).
 * The meta says where the image lies in memory and what the module looked like when it was
 * taken (the stack gap, the allocator's break word, the heap addresses of the handles the
 * engine opened before SCI): a module that differs in any of these is not the one the
 * image came from, and the image is refused (the worker then boots SCI).
 *
 * The bytes are only ever restored into the worker's own QuickJS memory: whatever they
 * hold, the checker's code still runs inside QuickJS with its limits. Their integrity
 * (length and SHA-256) is checked by the host before they are sent
 * (sandbox/sci_image_cache.ts). Runs in the worker; no permissions.
 */

/** What a boot image says about itself. */
export interface ImageMeta {
  /** The format; a different number is refused. */
  format: 1;
  gapStart: number;
  gapEnd: number;
  breakWord: number;
  /** One past the last byte the image holds. */
  top: number;
  /** The wasm memory's size when the image was taken. */
  bufferBytes: number;
  /** Heap addresses of the handles the engine opened before SCI (undefined, global…). */
  handles: number[];
}

/** A decoded image: its meta and the memory below and above the stack. */
export interface BootImage {
  meta: ImageMeta;
  low: Uint8Array;
  high: Uint8Array;
}

const FORMAT = 1;

/**
 * An image's bytes (boot or checker image, of either engine): its meta's length, its meta,
 * low, high.
 */
export function frame(image: { meta: unknown; low: Uint8Array; high: Uint8Array }): Uint8Array {
  const meta = new TextEncoder().encode(JSON.stringify(image.meta));
  const out = new Uint8Array(4 + meta.byteLength + image.low.byteLength + image.high.byteLength);
  new DataView(out.buffer).setUint32(0, meta.byteLength, true);
  out.set(meta, 4);
  out.set(image.low, 4 + meta.byteLength);
  out.set(image.high, 4 + meta.byteLength + image.low.byteLength);
  return out;
}

/**
 * The meta of framed image bytes and where the memory after it starts, or null when the
 * length says more than `maxMeta` bytes or more than the bytes hold (JSON errors throw).
 */
export function unframe(
  bytes: Uint8Array,
  maxMeta: number,
): { meta: unknown; start: number } | null {
  if (bytes.byteLength < 4) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const metaLength = view.getUint32(0, true);
  if (metaLength > maxMeta || 4 + metaLength > bytes.byteLength) return null;
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + metaLength)));
  return { meta, start: 4 + metaLength };
}

/** The image's bytes. */
export function encodeImage(image: BootImage): Uint8Array {
  return frame(image);
}

/** The image in `bytes`, or null when they are not an image of this format. */
export function decodeImage(bytes: Uint8Array): BootImage | null {
  try {
    const framed = unframe(bytes, 4096);
    if (framed === null || !validMeta(framed.meta)) return null;
    const { meta, start: lowStart } = framed;
    const highStart = lowStart + meta.gapStart;
    if (highStart + (meta.top - meta.gapEnd) !== bytes.byteLength) return null;
    return {
      meta,
      low: bytes.subarray(lowStart, highStart),
      high: bytes.subarray(highStart),
    };
  } catch {
    return null;
  }
}

function validMeta(m: unknown): m is ImageMeta {
  if (typeof m !== "object" || m === null) return false;
  const r = m as Record<string, unknown>;
  const int = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= -1;
  return r.format === FORMAT && int(r.gapStart) && int(r.gapEnd) && int(r.breakWord) &&
    int(r.top) && int(r.bufferBytes) && (r.top as number) >= (r.gapEnd as number) &&
    (r.gapEnd as number) >= (r.gapStart as number) && Array.isArray(r.handles) &&
    r.handles.every(int);
}

/** What a checker image says about itself (a prepared checker, as its change to the base). */
export interface CheckerImageMeta {
  format: 1;
  /** The checker's key (the SHA-256 of checker.clj). */
  key: string;
  ns: string;
  check: "fn" | "value" | "none";
  judge: "fn" | "value" | "none";
  /** generator.clj's `generate` (absent in images made before generators ran: none). */
  generate?: "fn" | "value" | "none";
  gapEnd: number;
  top: number;
  /** Offsets (from gapEnd) of the pages of `high` that differ from the base's. */
  pages: number[];
}

/** A decoded checker image. */
export interface CheckerImage {
  meta: CheckerImageMeta;
  low: Uint8Array;
  high: Uint8Array;
}

/** A checker image's bytes: the same framing as a boot image's. */
export function encodeCheckerImage(image: CheckerImage): Uint8Array {
  return frame(image);
}

const KINDS = ["fn", "value", "none"];

/**
 * The checker image in `bytes` when they are one for `key` whose low part is `lowBytes`
 * long; null otherwise. The pages are checked by the engine against its base.
 */
export function decodeCheckerImage(
  bytes: Uint8Array,
  key: string,
  lowBytes: number,
): CheckerImage | null {
  try {
    const framed = unframe(bytes, 16 * 1024 * 1024);
    if (framed === null || framed.start + lowBytes > bytes.byteLength) return null;
    const { start } = framed;
    // deno-lint-ignore no-explicit-any
    const m = framed.meta as any;
    const int = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
    const valid = typeof m === "object" && m !== null && m.format === FORMAT && m.key === key &&
      typeof m.ns === "string" && KINDS.includes(m.check) && KINDS.includes(m.judge) &&
      (m.generate === undefined || KINDS.includes(m.generate)) &&
      int(m.gapEnd) && int(m.top) && m.top >= m.gapEnd && Array.isArray(m.pages) &&
      m.pages.every(int);
    if (!valid) return null;
    return {
      meta: m as CheckerImageMeta,
      low: bytes.subarray(start, start + lowBytes),
      high: bytes.subarray(start + lowBytes),
    };
  } catch {
    return null;
  }
}
