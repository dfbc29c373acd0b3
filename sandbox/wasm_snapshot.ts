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
 * Memory above a snapshot's top is not cleared on restore: the restored allocator regards
 * it as unused, QuickJS never lets a script read memory it has not written (array buffers
 * are zeroed on allocation), and a fresh runtime in the same module saw the same leftovers.
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

/** The state of a memory at one moment, restorable with `restoreSnapshot`. */
export interface MemorySnapshot {
  /** The bytes below the layout's gap. */
  low: Uint8Array;
  /** The bytes from the gap's end up to the highest byte in use. */
  high: Uint8Array;
  gapEnd: number;
  /** Total bytes held. */
  bytes: number;
}

/** Index one past the highest non-zero byte of `bytes`, or 0. */
function usedEnd(bytes: Uint8Array): number {
  const words = new BigUint64Array(bytes.buffer, 0, bytes.byteLength >>> 3);
  let i = words.length - 1;
  while (i >= 0 && words[i] === 0n) i--;
  return (i + 1) * 8;
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
  staticEnd: number,
  allocate: (bytes: number) => () => void,
): number {
  const size = 1024 * 1024;
  const original = new Uint8Array(memory.buffer);
  const saved = original.slice(0, usedEnd(original));
  const before = new Uint32Array(memory.buffer, 0, staticEnd >>> 2).slice();
  const release = allocate(size);
  const hits: number[] = [];
  try {
    const end = usedEnd(new Uint8Array(memory.buffer));
    const now = new Uint32Array(memory.buffer, 0, staticEnd >>> 2);
    for (let i = 0; i < now.length; i++) {
      const v = now[i];
      if (v - before[i] >= size && v >= end && v - end <= 64) hits.push(i * 4);
    }
  } finally {
    release();
    new Uint8Array(memory.buffer).set(saved, 0);
  }
  return hits.length === 1 ? hits[0] : -1;
}

/** Copies the state of `memory` as it is now. */
export function takeSnapshot(memory: WebAssembly.Memory, layout: MemoryLayout): MemorySnapshot {
  const bytes = new Uint8Array(memory.buffer);
  const heapTop = layout.breakWord >= 0
    ? Math.min(bytes.byteLength, new Uint32Array(memory.buffer)[layout.breakWord >>> 2])
    : usedEnd(bytes);
  const top = Math.max(heapTop, layout.gapEnd);
  const low = bytes.slice(0, layout.gapStart);
  const high = bytes.slice(layout.gapEnd, top);
  return { low, high, gapEnd: layout.gapEnd, bytes: low.byteLength + high.byteLength };
}

/** Puts `memory` back in the state of `snapshot` (the memory may have grown since). */
export function restoreSnapshot(memory: WebAssembly.Memory, snapshot: MemorySnapshot): void {
  const bytes = new Uint8Array(memory.buffer);
  bytes.set(snapshot.low, 0);
  bytes.set(snapshot.high, snapshot.gapEnd);
}
