import assert from "node:assert/strict";
import { type MemorySnapshot, SNAPSHOT_PAGE, SnapshotMemory } from "../../sandbox/wasm_snapshot.ts";

const PAGE = SNAPSHOT_PAGE;
const GAP_START = 64 * 1024;
const GAP_END = 128 * 1024;

/** A memory whose heap ends where its first word says (the break word at 0). */
function memory(): { mem: WebAssembly.Memory; snaps: SnapshotMemory } {
  const mem = new WebAssembly.Memory({ initial: 64 });
  return {
    mem,
    snaps: new SnapshotMemory(mem, { gapStart: GAP_START, gapEnd: GAP_END, breakWord: 0 }),
  };
}

let seed = 11;
function scribble(mem: WebAssembly.Memory, from: number, to: number): void {
  const bytes = new Uint8Array(mem.buffer);
  for (let i = from; i < to; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    bytes[i] = (seed >>> 16) & 0xff;
  }
}

function setTop(mem: WebAssembly.Memory, top: number): void {
  new Uint32Array(mem.buffer)[0] = top;
}

/** The memory outside the stack gap, up to `end`. */
function state(mem: WebAssembly.Memory, end: number): Uint8Array[] {
  const bytes = new Uint8Array(mem.buffer);
  return [bytes.slice(0, GAP_START), bytes.slice(GAP_END, end)];
}

const END = 2 * 1024 * 1024;

function restoredEquals(
  mem: WebAssembly.Memory,
  snaps: SnapshotMemory,
  s: MemorySnapshot,
  expected: Uint8Array[],
  what: string,
): void {
  // Everything changes after the snapshot, the heap growing past it.
  scribble(mem, 4, END);
  setTop(mem, END);
  snaps.restore(s);
  const now = state(mem, END);
  assert.ok(now[0].every((b, i) => b === expected[0][i]), `${what}: below the gap`);
  assert.ok(now[1].every((b, i) => b === expected[1][i]), `${what}: above the gap`);
}

Deno.test("SnapshotMemory: a snapshot taken as pages that differ from a base restores byte for byte (runs of pages, a partial last page, growth past the base's top, a top below it)", () => {
  const { mem, snaps } = memory();
  const baseTop = 1024 * 1024 + 1000;
  scribble(mem, 4, baseTop);
  setTop(mem, baseTop);
  const baseState = state(mem, END);
  const base = snaps.take();

  // Pages that differ: the first, a run of three, one a page after it, a run, a lone one, a
  // run at the shared end (whose
  // last page is partial), and bytes past the base's top.
  const changed = [0, 3, 4, 5, 7, 10, 11, 20];
  for (const p of changed) scribble(mem, GAP_END + p * PAGE + 100, GAP_END + p * PAGE + 200);
  const lastPage = Math.floor((baseTop - GAP_END) / PAGE) * PAGE;
  scribble(mem, GAP_END + lastPage - PAGE + 5, GAP_END + lastPage + 7);
  const grownTop = baseTop + 3 * PAGE + 123;
  scribble(mem, baseTop, grownTop);
  setTop(mem, grownTop);
  const grownState = state(mem, END);
  const grown = snaps.take(base);
  assert.deepEqual(
    [...grown.pages!].map((at) => at / PAGE),
    [...changed, lastPage / PAGE - 1, lastPage / PAGE],
  );

  // A top below the base's, with a page that differs near it.
  restoredEquals(mem, snaps, base, baseState, "the base");
  const shrunkTop = baseTop - 5 * PAGE - 17;
  scribble(mem, GAP_END + 7 * PAGE, GAP_END + 9 * PAGE);
  scribble(mem, shrunkTop - 50, shrunkTop);
  new Uint8Array(mem.buffer).fill(0, shrunkTop, baseTop);
  setTop(mem, shrunkTop);
  const shrunkState = state(mem, END);
  const shrunk = snaps.take(base);

  for (let round = 0; round < 2; round++) {
    restoredEquals(mem, snaps, grown, grownState, "grown");
    restoredEquals(mem, snaps, shrunk, shrunkState, "shrunk");
    restoredEquals(mem, snaps, base, baseState, "the base");
  }
});
