import assert from "node:assert/strict";
import { packsToMerge } from "../../../../adapters/rooms/git/pack_merge.ts";
import type { PackIndex } from "../../../../adapters/rooms/git/pack_read.ts";

/** A pack index of `objects` entries (only its size matters to packsToMerge). */
function pack(name: string, objects: number): PackIndex {
  const starts = new Map<string, number>();
  for (let i = 0; i < objects; i++) starts.set(`${name}-${i}`, 12 + i);
  return { name, packPath: `/x/pack-${name}.pack`, starts, ends: new Map() };
}

Deno.test("packsToMerge() takes the small packs while each is under twice what is merged so far", () => {
  const packs = [pack("big", 1000), pack("a", 1), pack("c", 3), pack("b", 1), pack("d", 50)];
  assert.deepEqual(packsToMerge(packs, 0, 16).map((p) => p.name), ["a", "b", "c"]);
});

Deno.test("packsToMerge() counts loose objects as merged already", () => {
  const packs = [pack("big", 1000), pack("a", 1), pack("b", 1), pack("d", 50)];
  assert.deepEqual(packsToMerge(packs, 30, 16).map((p) => p.name), ["a", "b", "d"]);
});

Deno.test("packsToMerge() takes enough packs to leave maxPacks / 2", () => {
  const packs = Array.from({ length: 10 }, (_, i) => pack(`p${i}`, 3 ** i));
  assert.deepEqual(packsToMerge(packs, 0, 8).map((p) => p.name), [
    "p0",
    "p1",
    "p2",
    "p3",
    "p4",
    "p5",
  ]);
});
