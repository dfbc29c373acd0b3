import assert from "node:assert/strict";
import { caseOf } from "../../../core/bundle/case_of.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";

Deno.test("caseOf() finds a bundle's case by id, and nothing for null or an unknown id", () => {
  const bundle = wordBundle(50);
  assert.equal(caseOf(bundle, "c37"), bundle.cases.find((c) => c.id === "c37"));
  assert.equal(caseOf(bundle, "c37")?.id, "c37");
  assert.equal(caseOf(bundle, null), undefined);
  assert.equal(caseOf(bundle, "c51"), undefined);
  // Another bundle (its own case list) has its own index.
  const other = wordBundle(3);
  assert.equal(caseOf(other, "c37"), undefined);
  assert.equal(caseOf(other, "c2"), other.cases[1]);
});
