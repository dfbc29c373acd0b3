import assert from "node:assert/strict";
import { gcHint } from "../../../core/io/gc_hint.ts";

Deno.test("gcHint() collects once per `every` units of work, counting batches", () => {
  let collections = 0;
  const hint = gcHint(1000, () => collections++);
  for (let i = 0; i < 999; i++) hint();
  assert.equal(collections, 0);
  hint();
  assert.equal(collections, 1);
  hint(500);
  hint(499);
  assert.equal(collections, 1);
  hint(2500);
  assert.equal(collections, 2, "a large batch is one collection, then the count starts again");
});

Deno.test("gcHint() does nothing when V8 exposes no gc()", () => {
  const hint = gcHint(1, null);
  for (let i = 0; i < 10; i++) hint();
});
