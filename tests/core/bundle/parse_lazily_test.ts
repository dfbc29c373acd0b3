/**
 * parseBundleLazily (core/bundle/parse_lazily.ts) reads the same Bundle as parseBundle, and
 * throws the same BUNDLE_INVALID problems for a bundle with a schema problem (the zod path).
 */
import assert from "node:assert/strict";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { parseBundleLazily } from "../../../core/bundle/parse_lazily.ts";
import { DvergrError } from "../../../core/errors.ts";
import { recallBundle } from "../../helpers/bundles.ts";

Deno.test("parseBundleLazily() reads the Bundle parseBundle() reads", async () => {
  const fb = { name: "recall", files: recallBundle() };
  const lazy = await parseBundleLazily(fb);
  const eager = parseBundle(fb);
  assert.equal(lazy.id, eager.id);
  assert.deepEqual(lazy.definition, eager.definition);
  assert.deepEqual(lazy.fixtures, eager.fixtures);
  assert.deepEqual(lazy.gold, eager.gold);
  assert.deepEqual(lazy.calibration, eager.calibration);
});

Deno.test("parseBundleLazily() throws parseBundle()'s problems for a schema problem", async () => {
  const fb = {
    name: "x",
    files: recallBundle({ "workflow.edn": '{:task "t" :timeout-ms "soon" :nonsense 1}' }),
  };
  const problemsOf = (e: unknown) => {
    assert.ok(e instanceof DvergrError);
    assert.equal(e.code, "BUNDLE_INVALID");
    return e.details!.problems;
  };
  let eager: unknown;
  try {
    parseBundle(fb);
  } catch (e) {
    eager = problemsOf(e);
  }
  const lazy = await parseBundleLazily(fb).then(() => null, problemsOf);
  assert.ok(Array.isArray(eager) && eager.length >= 2);
  assert.deepEqual(lazy, eager);
});
