import assert from "node:assert/strict";
import { fleissKappa } from "../../../core/calibrate/fleiss_kappa.ts";

Deno.test("fleissKappa() gives 0.210 on the worked example of 10 subjects, 14 raters, 5 categories", () => {
  // The worked example of Fleiss' kappa (Wikipedia, "Fleiss' kappa"): P̄ = 0.378,
  // P̄e = 0.213, κ = 0.210.
  const table = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
  ];
  assert.equal(fleissKappa(table)!.toFixed(3), "0.210");
});

Deno.test("fleissKappa() is 1 for perfect agreement and negative for a judge that flips", () => {
  assert.equal(fleissKappa([[3, 0], [0, 3], [3, 0]]), 1);
  // Every subject answered 2:1 with the categories balanced: P̄ = 1/3, P̄e = 1/2.
  const flips = fleissKappa([[2, 1], [1, 2]])!;
  assert.ok(Math.abs(flips - -1 / 3) < 1e-12, String(flips));
});

Deno.test("fleissKappa() is null when undefined and refuses ragged tables", () => {
  assert.equal(fleissKappa([]), null);
  assert.equal(fleissKappa([[3], [3]]), null, "one category: nothing beyond chance");
  assert.throws(() => fleissKappa([[2, 1], [1, 1]]), RangeError);
  assert.throws(() => fleissKappa([[1, 0]]), RangeError);
});
