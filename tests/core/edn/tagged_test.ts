import assert from "node:assert/strict";
import { keywordized, toTagged } from "../../../core/edn/tagged.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { Keyword } from "../../../core/edn/values.ts";

Deno.test("toTagged() keeps what plain JSON loses: keywords, symbols, sets, lists, #inst, #uuid, tags", () => {
  const v = readEdn(
    '{:a/b [1 2.0 "s" \\c nil true] (x) #{:k} :at #inst "2026-01-02T03:04:05Z" :id #uuid "00000000-0000-4000-8000-000000000000" :t #my/tag {"k" sym} :big 12345678901234567890}',
  );
  assert.deepEqual(toTagged(v), [
    "m",
    ["k", "a", "b"],
    ["v", 1, 2, "s", "c", null, true],
    ["l", ["y", null, "x"]],
    ["s", ["k", null, "k"]],
    ["k", null, "at"],
    ["i", Date.UTC(2026, 0, 2, 3, 4, 5)],
    ["k", null, "id"],
    ["u", "00000000-0000-4000-8000-000000000000"],
    ["k", null, "t"],
    ["t", "my/tag", ["m", "k", ["y", null, "sym"]]],
    ["k", null, "big"],
    12345678901234567890,
  ]);
});

Deno.test("toTagged() makes plain objects maps with string keys and arrays vectors", () => {
  assert.deepEqual(toTagged({ "/out/a.edn": "x", n: [1] }), ["m", "/out/a.edn", "x", "n", [
    "v",
    1,
  ]]);
  assert.equal(toTagged(undefined), null);
});

Deno.test("keywordized() turns JSON object keys into keywords, recursively", () => {
  const v = keywordized({ mode: "late", nested: { n: [1, { k: 2 }] } }) as Map<unknown, unknown>;
  assert.equal(v.get(Keyword.of("mode")), "late");
  const nested = v.get(Keyword.of("nested")) as Map<unknown, unknown>;
  const arr = nested.get(Keyword.of("n")) as unknown[];
  assert.equal((arr[1] as Map<unknown, unknown>).get(Keyword.of("k")), 2);
});
