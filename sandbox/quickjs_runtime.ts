/**
 * What both sandbox engines (checker.js: sandbox/quickjs_call.ts; checker.clj:
 * sandbox/sci_engine.ts) set up the same way in a freshly instantiated QuickJS module: one
 * runtime and context with their limits and interrupt handler, the memory layout their
 * snapshots rely on, the cache of prepared checkers' snapshots, and the check that a call's
 * text fits the sandbox (their faults' wording: sandbox/fault_text.ts).
 *
 * It also makes and restores boot images (imageOf, restoreImage): an engine's memory once
 * booted, which a new engine of the same module restores instead of booting.
 *
 * Snapshot rules this keeps (each was a bug when broken): the runtime, the context and the
 * handles QuickJS creates on first use exist before any snapshot; the interrupt handler and
 * the memory and stack limits are set before it.
 *
 * Runs inside a sandbox worker; no permissions.
 */
import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { Fault, mib } from "./fault_text.ts";
import type { KnownLayout } from "./known_layout.ts";
import {
  findBreakWord,
  findStackGap,
  type MemoryLayout,
  type MemorySnapshot,
  SnapshotMemory,
} from "./wasm_snapshot.ts";
import { decodeImage, encodeImage } from "./sci_image.ts";

export interface RuntimeLimits {
  /** QuickJS heap limit (setMemoryLimit), in bytes. */
  memoryLimitBytes: number;
  /** The hard cap of the wasm memory, for messages. */
  memoryCapBytes: number;
  /** QuickJS stack limit, in bytes. */
  stackBytes: number;
}

export interface SnapshotRuntime<T extends { snapshot: MemorySnapshot }> {
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  /** The module's memory, with its layout found: takes and restores snapshots. */
  snapshots: SnapshotMemory;
  /** The engine's prepared checkers, empty. */
  prepared: PreparedCache<T>;
  /**
   * The layout as this module's runtime found it, to hand on (sandbox/known_layout.ts):
   * undefined when it was given.
   */
  found?: { layout: MemoryLayout; breakValue: number };
}

/** How many prepared checkers an engine keeps, and how many bytes of snapshots. */
export interface PreparedBudget {
  count: number;
  bytes: number;
}

/**
 * Opens the one runtime and context of an engine in `module`, which must be freshly
 * instantiated in `memory` (its layout is read from it, unless `known`: a layout that
 * layoutFits() found is this module's). `interrupt` is QuickJS's interrupt handler for the
 * engine's life: true stops the running code.
 */
export function openSnapshotRuntime<T extends { snapshot: MemorySnapshot }>(
  module: QuickJSWASMModule,
  memory: WebAssembly.Memory,
  limits: RuntimeLimits,
  interrupt: () => boolean,
  budget: PreparedBudget,
  known?: KnownLayout,
): SnapshotRuntime<T> {
  // Read while the module is fresh: its C stack is the long run of zeroes in its memory.
  const gap = known ?? findStackGap(memory);
  const rt = module.newRuntime();
  rt.setMemoryLimit(limits.memoryLimitBytes);
  rt.setMaxStackSize(limits.stackBytes);
  rt.setInterruptHandler(interrupt);
  const ctx = rt.newContext();
  // These handles are created on first use; create them now, inside every snapshot.
  void [ctx.undefined, ctx.null, ctx.true, ctx.false, ctx.global];
  const valueAt = (word: number) => word < 0 ? -1 : new Uint32Array(memory.buffer)[word >>> 2];
  // A known break word holds what it held in the module it was found in, or it is looked for.
  const breakWord = known && valueAt(known.breakWord) === known.breakValue
    ? known.breakWord
    : findBreakWord(memory, gap, (bytes) => {
      // Made by QuickJS itself: copying a string in from the host is far slower.
      const made = ctx.evalCode(`"x".repeat(${bytes})`, "probe.js", { type: "global" });
      const h = made.error ?? made.value;
      return () => h.dispose();
    });
  const layout = { gapStart: gap.gapStart, gapEnd: gap.gapEnd, breakWord };
  return {
    rt,
    ctx,
    snapshots: new SnapshotMemory(memory, layout),
    prepared: new PreparedCache(budget.count, budget.bytes),
    ...(known ? {} : { found: { layout, breakValue: valueAt(breakWord) } }),
  };
}

/**
 * Prepared checkers by key, most recently used last, within a count and a byte budget of
 * their snapshots; the newest entry is always kept.
 */
export class PreparedCache<T extends { snapshot: MemorySnapshot }> {
  private readonly entries = new Map<string, T>();
  private total = 0;

  constructor(private readonly maxCount: number, private readonly maxBytes: number) {}

  /** The entry for `key`, now the most recently used. */
  get(key: string): T | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Adds an entry, evicting the least recently used others beyond the budgets. */
  set(key: string, value: T): void {
    const old = this.entries.get(key);
    if (old) this.total -= old.snapshot.bytes;
    this.entries.delete(key);
    this.entries.set(key, value);
    this.total += value.snapshot.bytes;
    for (const [k, p] of this.entries) {
      if (this.entries.size <= this.maxCount && this.total <= this.maxBytes) break;
      if (k === key) continue;
      this.entries.delete(k);
      this.total -= p.snapshot.bytes;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of all snapshots held. */
  get bytes(): number {
    return this.total;
  }

  values(): IterableIterator<T> {
    return this.entries.values();
  }
}

/**
 * Text is copied into wasm memory as UTF-8 before QuickJS sees it; text that cannot fit
 * would make the allocation fail outside QuickJS's own checks, so it is refused first.
 */
export function refuseOversized(
  req: { input: string; source: string },
  limits: RuntimeLimits,
): void {
  const max = Math.floor(limits.memoryLimitBytes / 4);
  for (const [what, text] of [["input", req.input], ["source", req.source]]) {
    if (text.length > max) {
      throw new Fault(
        "memory",
        `The checker's ${what} is too large for the sandbox: ${text.length} characters ` +
          `(at most ${max} fit in its ${mib(limits.memoryCapBytes)})`,
      );
    }
  }
}

/**
 * The boot image of the memory as it is now (sandbox/sci_image.ts's format, for both
 * engines), with the heap addresses `handles` of the handles the engine opened before it.
 */
export function imageOf(
  snapshots: SnapshotMemory,
  memory: WebAssembly.Memory,
  handles: number[],
): Uint8Array {
  const s = snapshots.take();
  const { gapStart, gapEnd, breakWord } = snapshots.layout;
  return encodeImage({
    meta: {
      format: 1,
      gapStart,
      gapEnd,
      breakWord,
      top: s.top,
      bufferBytes: memory.buffer.byteLength,
      handles,
    },
    low: s.low,
    high: s.high,
  });
}

/**
 * Restores a boot image into a module whose runtime and context were just opened, when the
 * image fits it (the same layout and the same handles); false, with the memory untouched,
 * when it does not.
 */
export function restoreImage(
  ctx: QuickJSContext,
  snapshots: SnapshotMemory,
  memory: WebAssembly.Memory,
  bytes: Uint8Array,
  handles: number[],
): boolean {
  const image = decodeImage(bytes);
  if (!image) return false;
  const { meta } = image;
  const { gapStart, gapEnd, breakWord } = snapshots.layout;
  const fits = meta.gapStart === gapStart && meta.gapEnd === gapEnd &&
    meta.breakWord === breakWord && breakWord >= 0 &&
    meta.handles.length === handles.length && meta.handles.every((h, i) => h === handles[i]);
  if (!fits) return false;
  if (meta.top > memory.buffer.byteLength) {
    // Grown by QuickJS's own allocator, so the module sees its memory's new size.
    const r = ctx.evalCode(
      `"x".repeat(${meta.top - memory.buffer.byteLength})`,
      "grow.js",
      { type: "global" },
    );
    (r.error ?? r.value).dispose();
    if (meta.top > memory.buffer.byteLength) return false;
  }
  snapshots.restore({
    low: image.low,
    high: image.high,
    gapEnd: meta.gapEnd,
    top: meta.top,
    bytes: image.low.byteLength + image.high.byteLength,
  });
  return true;
}
