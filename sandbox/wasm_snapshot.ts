/**
 * Snapshots of a QuickJS module's WebAssembly memory, so a checker call can start from
 * exactly the interpreter state left after the prelude, the loop guard and checker.js were
 * loaded, instead of compiling them again (the technique is described in
 * shared notes "clojure-checkers.md").
 *
 * The memory of the Emscripten build is laid out as static data, then a 5 MiB C stack that
 * grows down, then the malloc heap. A snapshot copies the static data and the heap up to the
 * highest byte in use, and leaves out the stack below the frames a fresh module touched: no
 * frame is live between calls, so nothing there is state. That keeps a snapshot to a few
 * hundred KiB, restored in tens of microseconds.
 *
 * A restore also zeroes the memory above the snapshot's top that calls wrote since: the
 * restored allocator regards it as unused and QuickJS zeroes what it hands to scripts, but
 * nothing of one call (an answer, a secret in its input) may lie in memory the next call's
 * interpreter could come to read. Only the memory below the allocator's highest break since
 * the last restore can have been written (this build's allocator never lowers its break: a
 * freed 7 MB block left it where it was), so zeroing stays as small as the calls were.
 *
 * Runs inside the checker worker; no permissions.
 */

const BLOCK = 4096;
/** A run of zeroes at least this long inside the used memory of a fresh module is its stack. */
const MIN_STACK_GAP = 1024 * 1024;

/** Where the state of a module's memory lies; found once per module. */
export interface MemoryLayout {
  /** Bytes [gapStart, gapEnd) are stack that holds no state between calls. */
  gapStart: number;
  gapEnd: number;
  /**
   * Address of the allocator's break word (the end of the heap: everything allocated lies
   * below it), or -1 when none was found: snapshots then copy everything up to the highest
   * non-zero byte.
   */
  breakWord: number;
}

/** The state of a memory at one moment, restorable with `SnapshotMemory.restore`. */
export interface MemorySnapshot {
  /** The bytes below the layout's gap. */
  low: Uint8Array;
  /**
   * The bytes from the gap's end up to the highest byte in use; with `base`, only the pages
   * that differ from the base's (listed in `pages`) and then the bytes past the base's top.
   */
  high: Uint8Array;
  gapEnd: number;
  /** One past the last byte held: above it the memory is zero once the snapshot is restored. */
  top: number;
  /** Total bytes held (a base's not counted). */
  bytes: number;
  /** The snapshot this one was taken as a difference from. */
  base?: MemorySnapshot;
  /** With `base`: the offsets (from `gapEnd`) of the PAGE-sized pages `high` holds first. */
  pages?: Uint32Array;
}

/** The unit in which a snapshot is compared with its base. */
const PAGE = 4096;
export const SNAPSHOT_PAGE = PAGE;

/**
 * One past the highest non-zero byte of `bytes` (a whole memory), rounded up to 8, or 0. Read
 * as 32-bit words: a fresh worker runs this before V8 has optimised it, and reading 64-bit
 * words makes a BigInt of each (twice the time in a worker's start).
 */
function usedEnd(bytes: Uint8Array): number {
  const words = new Uint32Array(bytes.buffer, 0, bytes.byteLength >>> 2);
  let i = words.length - 1;
  while (i >= 0 && words[i] === 0) i--;
  return i < 0 ? 0 : ((i >>> 1) + 1) * 8;
}

/**
 * Finds the stack gap of a module's memory. Call it on a module that has only been
 * instantiated (nothing allocated yet): its used memory is the static data and the few stack
 * frames of its start-up, with the untouched stack between them.
 */
export function findStackGap(memory: WebAssembly.Memory): { gapStart: number; gapEnd: number } {
  const end = usedEnd(new Uint8Array(memory.buffer));
  const words = new Uint32Array(memory.buffer, 0, end >>> 2);
  const blockWords = BLOCK / 4;
  let runStart = -1;
  let best = { gapStart: 0, gapEnd: 0 };
  for (let b = 0; b * blockWords < words.length; b++) {
    let zero = true;
    const last = Math.min(words.length, (b + 1) * blockWords);
    for (let k = b * blockWords; k < last; k++) {
      if (words[k] !== 0) {
        zero = false;
        break;
      }
    }
    if (zero) {
      if (runStart < 0) runStart = b * BLOCK;
    } else if (runStart >= 0) {
      const runEnd = b * BLOCK;
      if (runEnd - runStart > best.gapEnd - best.gapStart) {
        best = { gapStart: runStart, gapEnd: runEnd };
      }
      runStart = -1;
    }
  }
  return best.gapEnd - best.gapStart >= MIN_STACK_GAP ? best : { gapStart: 0, gapEnd: 0 };
}

/**
 * Finds the allocator's break word: the one word of static data that points at the end of
 * the heap (everything allocated lies below it). It is the word that, after one large
 * allocation from a fresh heap (made and released by `allocate`), grew by at least the
 * allocation and points just past the highest non-zero byte. Call it while the memory above
 * the heap is still untouched (right after the first runtime is created); the memory is put
 * back as it was before the probe.
 */
export function findBreakWord(
  memory: WebAssembly.Memory,
  gap: { gapStart: number; gapEnd: number },
  allocate: (bytes: number) => () => void,
): number {
  const size = 1024 * 1024;
  const staticEnd = gap.gapStart || size;
  const original = new Uint8Array(memory.buffer);
  const end = usedEnd(original);
  // Saved and put back around the stack gap: writing its zeroes would make 5 MiB of pages
  // that were never touched resident.
  const low = original.slice(0, Math.min(end, gap.gapStart || end));
  const high = original.slice(Math.min(end, gap.gapEnd), end);
  const before = new Uint32Array(memory.buffer, 0, staticEnd >>> 2).slice();
  const release = allocate(size);
  const hits: number[] = [];
  let probeEnd = end;
  try {
    probeEnd = usedEnd(new Uint8Array(memory.buffer));
    const now = new Uint32Array(memory.buffer, 0, staticEnd >>> 2);
    for (let i = 0; i < now.length; i++) {
      const v = now[i];
      if (v - before[i] >= size && v >= probeEnd && v - probeEnd <= 64) hits.push(i * 4);
    }
  } finally {
    release();
    const bytes = new Uint8Array(memory.buffer);
    bytes.set(low, 0);
    bytes.set(high, Math.min(end, gap.gapEnd));
    // What the probe wrote above the old end is not part of the state put back.
    if (probeEnd > end) bytes.fill(0, end, probeEnd);
  }
  return hits.length === 1 ? hits[0] : -1;
}

/** The end of the heap now: everything allocated lies below it. */
function heapTop(memory: WebAssembly.Memory, layout: MemoryLayout): number {
  const bytes = new Uint8Array(memory.buffer);
  return layout.breakWord >= 0
    ? Math.min(bytes.byteLength, new Uint32Array(memory.buffer)[layout.breakWord >>> 2])
    : usedEnd(bytes);
}

/**
 * The memory of one engine, with the snapshots taken of it. Keeps one promise between
 * restores: every byte above the restored snapshot's top is zero.
 */
export class SnapshotMemory {
  /** Bytes at or above this were zero after the last restore, and no call has written there. */
  private dirtyTop = 0;

  constructor(readonly memory: WebAssembly.Memory, readonly layout: MemoryLayout) {}

  /**
   * Copies the state of the memory as it is now. With `base` (a full snapshot taken
   * earlier, kept alive as long as this one), only what differs from it is copied: a checker
   * loaded on top of a large interpreter state (SCI's ~10 MiB) then costs its own changes.
   */
  take(base?: MemorySnapshot): MemorySnapshot {
    const bytes = new Uint8Array(this.memory.buffer);
    const { gapStart, gapEnd } = this.layout;
    const top = Math.max(heapTop(this.memory, this.layout), gapEnd);
    this.dirtyTop = Math.max(this.dirtyTop, top);
    const low = bytes.slice(0, gapStart);
    if (!base || base.base || base.gapEnd !== gapEnd) {
      const high = bytes.slice(gapEnd, top);
      return { low, high, gapEnd, top, bytes: low.byteLength + high.byteLength };
    }
    const shared = Math.min(top, base.top) - gapEnd;
    const now = new Uint32Array(this.memory.buffer, gapEnd, shared >>> 2);
    const then = new Uint32Array(base.high.buffer, base.high.byteOffset, shared >>> 2);
    const pages: number[] = [];
    for (let at = 0; at < shared; at += PAGE) {
      const end = Math.min(shared, at + PAGE) >>> 2;
      for (let w = at >>> 2; w < end; w++) {
        if (now[w] !== then[w]) {
          pages.push(at);
          break;
        }
      }
    }
    // The last page may be partial; its tail bytes are compared byte by byte below.
    const tailFrom = gapEnd + (shared & ~3);
    const tail = bytes.subarray(tailFrom, top);
    const high = new Uint8Array(pages.length * PAGE + tail.byteLength);
    pages.forEach((at, i) => high.set(bytes.subarray(gapEnd + at, gapEnd + at + PAGE), i * PAGE));
    high.set(tail, pages.length * PAGE);
    return {
      low,
      high,
      gapEnd,
      top,
      bytes: low.byteLength + high.byteLength,
      base,
      pages: Uint32Array.from(pages),
    };
  }

  /**
   * Puts the memory back in the state of `snapshot` (it may have grown since) and zeroes
   * what lies above the snapshot's top.
   */
  restore(snapshot: MemorySnapshot): void {
    const bytes = new Uint8Array(this.memory.buffer);
    // Without the break word the heap's extent is unknown: all of the rest is cleared.
    const written = this.layout.breakWord >= 0
      ? Math.max(this.dirtyTop, heapTop(this.memory, this.layout))
      : bytes.byteLength;
    if (written > snapshot.top) bytes.fill(0, snapshot.top, Math.min(written, bytes.byteLength));
    bytes.set(snapshot.low, 0);
    const { base, pages, gapEnd, top } = snapshot;
    if (base && pages) {
      // The base up to where both reach, the pages that differ, then the rest.
      const shared = Math.min(top, base.top) - gapEnd;
      bytes.set(base.high.subarray(0, shared), gapEnd);
      for (let i = 0; i < pages.length; i++) {
        const at = pages[i];
        const length = Math.min(PAGE, shared - at);
        bytes.set(snapshot.high.subarray(i * PAGE, i * PAGE + length), gapEnd + at);
      }
      bytes.set(snapshot.high.subarray(pages.length * PAGE), gapEnd + (shared & ~3));
    } else {
      bytes.set(snapshot.high, gapEnd);
    }
    this.dirtyTop = top;
  }
}
