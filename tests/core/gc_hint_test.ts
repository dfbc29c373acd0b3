import assert from "node:assert/strict";
import { exposedGc, gcHint } from "../../core/gc_hint.ts";

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

Deno.test("exposedGc() is V8's gc() when exposed, else null, and gcHint() then does nothing", () => {
  const g = globalThis as { gc?: unknown };
  const had = Object.hasOwn(g, "gc");
  const before = g.gc;
  try {
    delete g.gc;
    assert.equal(exposedGc(), null);
    const hint = gcHint(1);
    for (let i = 0; i < 10; i++) hint();
    let calls = 0;
    g.gc = () => calls++;
    exposedGc()!();
    gcHint(2)(2);
    assert.equal(calls, 2);
  } finally {
    if (had) g.gc = before;
    else delete g.gc;
  }
});
