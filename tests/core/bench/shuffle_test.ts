import assert from "node:assert/strict";
import {
  CASE_SHUFFLE_SEED,
  javaRandom,
  javaShuffle,
  selectCases,
} from "../../../core/bench/shuffle.ts";
import { DvergrError } from "../../../core/errors.ts";

// Expected values below were produced by java.util.Random / Collections.shuffle on a JVM
// (OpenJDK), or are the verified vectors of docs/compatibility.md §7.2.

function bankBookingIds(): string[] {
  const ids: string[] = [];
  for (let i = 1; i <= 261; i++) {
    if (i === 6 || i === 11) continue;
    ids.push(`B${String(i).padStart(4, "0")}`);
  }
  return ids;
}

Deno.test("javaRandom().nextInt(10) with seed 20261001 draws 4 0 0 5 7", () => {
  const r = javaRandom(CASE_SHUFFLE_SEED);
  assert.deepEqual([0, 1, 2, 3, 4].map(() => r.nextInt(10)), [4, 0, 0, 5, 7]);
});

Deno.test("javaRandom().nextInt() takes the high bits for a power-of-two bound", () => {
  const r = javaRandom(20261001);
  assert.deepEqual([0, 1, 2, 3, 4].map(() => r.nextInt(16)), [9, 11, 12, 8, 14]);
});

Deno.test("javaRandom().nextInt() rejects draws from the partial bucket as Java does", () => {
  // Bound 2^30 + 1 rejects about half of all draws; a negative seed checks the long XOR.
  const r = javaRandom(-7);
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map(() => r.nextInt(1073741825)),
    [577934662, 314447087, 677675436, 184135245, 425474944, 988357177],
  );
});

Deno.test("javaRandom().next(32) returns signed 32-bit ints like Random.nextInt()", () => {
  const r = javaRandom(42);
  assert.deepEqual(
    [0, 1, 2, 3].map(() => r.next(32)),
    [-1170105035, 234785527, -1360544799, 205897768],
  );
});

Deno.test("javaRandom().nextInt() refuses a bound that is not a positive int", () => {
  const r = javaRandom(1);
  assert.throws(() => r.nextInt(0), RangeError);
  assert.throws(() => r.nextInt(2.5), RangeError);
});

Deno.test("javaShuffle() orders [a b c d e] as Collections.shuffle with seed 20261001", () => {
  assert.deepEqual(javaShuffle(["a", "b", "c", "d", "e"], CASE_SHUFFLE_SEED), [
    "a",
    "d",
    "b",
    "c",
    "e",
  ]);
});

Deno.test("javaShuffle() matches Collections.shuffle of 0..19 with seed 1 and leaves its input", () => {
  const input = [...Array(20).keys()];
  const out = javaShuffle(input, 1);
  assert.deepEqual(out, [2, 17, 6, 15, 11, 13, 19, 8, 7, 12, 14, 10, 9, 0, 4, 3, 16, 1, 18, 5]);
  assert.deepEqual(input, [...Array(20).keys()]);
});

Deno.test("selectCases() picks bank-booking's five cases of the earlier system", () => {
  const ids = bankBookingIds();
  assert.equal(ids.length, 259);
  assert.deepEqual(selectCases(ids, 5), ["B0022", "B0194", "B0199", "B0230", "B0239"]);
});

Deno.test("selectCases() does not depend on the order the ids come in", () => {
  const ids = bankBookingIds();
  const reversed = [...ids].reverse();
  assert.deepEqual(selectCases(reversed, 30), selectCases(ids, 30));
  assert.equal(new Set(selectCases(ids, 30)).size, 30);
});

Deno.test("selectCases() takes a prefix of one shuffle: N + 1 cases include the first N", () => {
  const ids = bankBookingIds();
  const five = selectCases(ids, 5);
  const six = selectCases(ids, 6);
  assert.equal(six.length, 6);
  for (const id of five) assert.ok(six.includes(id), id);
});

Deno.test("selectCases() gives every case, sorted, when N exceeds the count", () => {
  assert.deepEqual(selectCases(["c", "a", "b"], 10), ["a", "b", "c"]);
  assert.deepEqual(selectCases(["c", "a", "b"], 0), []);
});

Deno.test("selectCases() refuses a negative or fractional N with a usage error", () => {
  for (const n of [-1, 1.5]) {
    assert.throws(() => selectCases(["a"], n), (e: unknown) => {
      assert.ok(e instanceof DvergrError);
      assert.equal(e.code, "USAGE");
      assert.match(e.message, /--cases/);
      assert.ok(e.hint);
      return true;
    });
  }
});
