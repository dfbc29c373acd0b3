import assert from "node:assert/strict";
import { fillTask } from "../../../core/bundle/task.ts";

Deno.test("fillTask() puts each parameter's value in place of its {name}", () => {
  assert.equal(
    fillTask(
      "Find {product} in at most {max-searches} searches, {max-searches} at most; {fields}",
      {
        product: "Simmis",
        "max-searches": 8,
        fields: ["a", "b"],
      },
    ),
    'Find Simmis in at most 8 searches, 8 at most; ["a" "b"]',
  );
  assert.equal(fillTask("{unknown} {a}", { a: 1 }), "{unknown} 1");
  assert.equal(fillTask("{a.b} {a*}", { "a.b": "x", "a*": "y" }), "x y");
});

Deno.test("fillTask() substitutes once: a value holding {b} stays literal, in either order", () => {
  assert.equal(fillTask("{a} and {b}", { a: "{b}", b: "B" }), "{b} and B");
  assert.equal(fillTask("{a} and {b}", { b: "B", a: "{b}" }), "{b} and B");
  assert.equal(fillTask("{a}", { a: "{a}" }), "{a}");
  assert.equal(fillTask("{a}{b}", { a: "{", b: "}" }), "{}");
});
