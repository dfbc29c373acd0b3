import assert from "node:assert/strict";
import { finalVerdict, fixturesFor } from "../../../core/engine/attempt.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";

Deno.test("fixturesFor() overlays the case's fixtures on the shared ones", () => {
  const bundle = wordBundle(2, { "cases/c2/fixtures/docs/shared.txt": "case wins" });
  assert.deepEqual(fixturesFor(bundle, "c1"), {
    "/docs/shared.txt": "shared",
    "/docs/q.txt": "w1",
  });
  assert.deepEqual(fixturesFor(bundle, "c2"), {
    "/docs/shared.txt": "case wins",
    "/docs/q.txt": "w2",
  });
  assert.deepEqual(fixturesFor(bundle, null), { "/docs/shared.txt": "shared" });
});

Deno.test("finalVerdict() adds completed? and forces reward 0 for timeout and crash only", () => {
  const v = { checks: { right: true }, reward: 1 };
  assert.deepEqual(finalVerdict(v, "completed"), {
    checks: { right: true, "completed?": true },
    reward: 1,
  });
  assert.deepEqual(finalVerdict(v, "timeout"), {
    checks: { right: true, "completed?": false },
    reward: 0,
  });
  assert.deepEqual(finalVerdict(v, "crashed").reward, 0);
  assert.deepEqual(finalVerdict(v, "budget"), {
    checks: { right: true, "completed?": false },
    reward: 1,
  });
});
