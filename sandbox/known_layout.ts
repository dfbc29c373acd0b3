/**
 * The memory layout of QuickJS's module (sandbox/wasm_snapshot.ts: the stack gap and the
 * allocator's break word), handed from one worker to the next. Finding it scans the fresh
 * module's memory four times over (~30 ms of a worker's ~110 ms start, more under load);
 * it depends only on the module, so a worker that found it reports it, the host keeps it
 * (sandbox/layout_cache.ts) and gives it to the next worker's init.
 *
 * A worker trusts a given layout only for the module it was found in: the SHA-256 of the
 * fresh memory below the stack gap (the module's static data, which differs between QuickJS
 * builds) and the memory's size must be the same, and the break word must hold the value it
 * had then once the runtime and context exist; otherwise it finds the layout itself.
 *
 * Runs inside a sandbox worker; no permissions.
 */
import type { MemoryLayout } from "./wasm_snapshot.ts";

/** A layout as found in one module, with what tells that module from another. */
export interface KnownLayout extends MemoryLayout {
  /** The fresh memory's size in bytes. */
  bytes: number;
  /** SHA-256 (hex) of the fresh memory below `gapStart`. */
  lowSha256: string;
  /** The break word's value once the runtime and context exist (before any other use). */
  breakValue: number;
}

/**
 * The layout of the QuickJS module this build pins (@jitl/quickjs-wasmfile-release-sync
 * 0.32.0), for a worker whose init brings none (nothing kept yet, as in a first check, or no
 * cache directory): it need not find it. Checked like any given layout (layoutFits()): for
 * another module it is none, and the worker finds its own. tests/sandbox/known_layout_test.ts
 * checks that it is the pinned module's.
 */
export const PINNED_LAYOUT: KnownLayout = {
  gapStart: 94208,
  gapEnd: 5332992,
  breakWord: 86864,
  bytes: 16777216,
  lowSha256: "d517337cbb2a62038b86cc0b61721a16029821a15140dd2030b411407a8e87c7",
  breakValue: 5402624,
};

/** The fresh memory kept to fingerprint it once its layout is found (its static data). */
const FRESH_COPY_BYTES = 256 * 1024;

async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * `given` (from the host: any value) when it is a layout of the module whose fresh memory is
 * `memory`, else undefined. Call it before anything runs in the module.
 */
export async function layoutFits(
  given: unknown,
  memory: WebAssembly.Memory,
): Promise<KnownLayout | undefined> {
  if (given === null || typeof given !== "object") return undefined;
  const l = given as Record<string, unknown>;
  const bytes = memory.buffer.byteLength;
  const shaped = isCount(l.gapStart) && isCount(l.gapEnd) && isCount(l.breakWord) &&
    isCount(l.breakValue) && l.bytes === bytes && typeof l.lowSha256 === "string" &&
    l.gapStart > 0 && l.gapStart < l.gapEnd && l.gapEnd <= bytes &&
    l.breakWord % 4 === 0 && l.breakWord < l.gapStart;
  if (!shaped) return undefined;
  const low = new Uint8Array(memory.buffer as ArrayBuffer, 0, l.gapStart as number);
  if (await sha256Hex(low) !== l.lowSha256) return undefined;
  return given as KnownLayout;
}

/** A copy of the start of a fresh module's memory, for describeLayout(). */
export function freshCopy(memory: WebAssembly.Memory): Uint8Array<ArrayBuffer> {
  return new Uint8Array(
    memory.buffer as ArrayBuffer,
    0,
    Math.min(FRESH_COPY_BYTES, memory.buffer.byteLength),
  )
    .slice();
}

/**
 * The KnownLayout of `layout` (found in a module whose fresh memory started with `fresh` and
 * was `bytes` long, its break word holding `breakValue`), or undefined when it cannot be
 * handed on (no gap or break word found, or static data longer than the copy).
 */
export async function describeLayout(
  fresh: Uint8Array<ArrayBuffer>,
  bytes: number,
  layout: MemoryLayout,
  breakValue: number,
): Promise<KnownLayout | undefined> {
  const { gapStart, gapEnd, breakWord } = layout;
  if (gapStart <= 0 || gapStart > fresh.byteLength || breakWord < 0) return undefined;
  const lowSha256 = await sha256Hex(fresh.subarray(0, gapStart));
  return { gapStart, gapEnd, breakWord, bytes, lowSha256, breakValue };
}
