import assert from "node:assert/strict";
import { calibrate } from "../../../core/calibrate/calibrate.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { RECALL_CHECKER, recallBundle } from "../../helpers/bundles.ts";

const bundle = (o: Record<string, string | null> = {}) =>
  parseBundle({ name: "recall", files: recallBundle(o) });

async function withPool<T>(f: (pool: ReturnType<typeof createCheckerPool>) => Promise<T>) {
  const pool = createCheckerPool({ workers: 1 });
  try {
    return await f(pool);
  } finally {
    pool.close();
  }
}

Deno.test("calibrate() accepts a checker whose variants lose what they damage", async () => {
  const r = await withPool((p) => calibrate(bundle(), p));
  assert.deepEqual(r.problems, []);
  assert.equal(r.ok, true);
  assert.equal(r.damaged["one-missing"].ok, true);
  assert.ok(r.reference?.ok && r.reference.verdict.reward === 1);
});

Deno.test("calibrate() fails a variant that keeps its damaged check", async () => {
  const lenient = RECALL_CHECKER.replace(
    '"found-all": found.length === gold.names.length',
    '"found-all": found.length > 0',
  );
  const r = await withPool((p) => calibrate(bundle({ "checker.js": lenient }), p));
  assert.equal(r.ok, false);
  assert.deepEqual(r.problems, ["one-missing still passes [:found-all]"]);
  assert.deepEqual(r.damaged["one-missing"].kept, ["found-all"]);
});

Deno.test("calibrate() reports a variant that does not score below the reference", async () => {
  const flat = RECALL_CHECKER.replace("reward: found.length / gold.names.length", "reward: 1");
  const r = await withPool((p) => calibrate(bundle({ "checker.js": flat }), p));
  assert.deepEqual(r.problems, [
    "empty does not score below the reference (1.000 vs 1.000)",
    "one-missing does not score below the reference (1.000 vs 1.000)",
  ]);
});

Deno.test("calibrate() names a variant with no :loses and one losing an unknown check", async () => {
  const cal = `{:reference {"/out/list.md" "Wato, Dust"}
 :damaged {:vague {:files {"/out/list.md" "Wato"} :loses []}
           :typo {:files {"/out/list.md" "Wato"} :loses [:found-al]}}}`;
  const r = await withPool((p) => calibrate(bundle({ "calibration.edn": cal }), p));
  assert.deepEqual(r.problems, [
    "typo loses [:found-al], which the checker does not report",
    "vague names no checks in :loses: say which checks this damage must fail",
  ]);
});

Deno.test("calibrate() reports a failing reference and a missing calibration", async () => {
  const cal = `{:reference {"/out/list.md" "Wato"}
 :damaged {:empty {:files {} :loses [:wrote-list]}}}`;
  const r = await withPool((p) => calibrate(bundle({ "calibration.edn": cal }), p));
  assert.equal(r.problems[0], "the reference fails [:found-all]");
  const none = await withPool((p) => calibrate(bundle({ "calibration.edn": null }), p));
  assert.equal(none.ok, false);
  assert.match(none.problems[0], /no calibration\.edn/);
  const noDamage = await withPool((p) =>
    calibrate(bundle({ "calibration.edn": '{:reference {"/out/list.md" "Wato, Dust"}}' }), p)
  );
  assert.deepEqual(noDamage.problems, [
    "calibration.edn has no :damaged variants: nothing shows the checker notices damage",
  ]);
});

Deno.test("calibrate() turns a checker fault into a problem, not a crash", async () => {
  const r = await withPool((p) =>
    calibrate(bundle({ "checker.js": "export function check() { throw new Error('boom'); }" }), p)
  );
  assert.equal(r.ok, false);
  assert.match(r.problems[0], /^the reference: the checker faulted \(threw\): .*boom/);
});
