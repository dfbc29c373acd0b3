/**
 * `dvergr calibrate` loads the automatic mutations (core/calibrate/auto.ts and its
 * mutations) only with --auto, and the generated worlds' module only for a bundle with
 * generator.js: neither is in the static graph of cli/calibrate.ts (~2.6 ms of its start).
 */
import assert from "node:assert/strict";
import { staticGraph } from "../helpers/static_graph.ts";

Deno.test("dvergr calibrate's modules leave out the automatic mutations and generated worlds", async () => {
  const graph = await staticGraph(new URL("../../cli/calibrate.ts", import.meta.url));
  assert.ok(graph.has(new URL("../../core/calibrate/calibrate.ts", import.meta.url).href));
  for (
    const lazy of [
      "core/calibrate/auto.ts",
      "core/calibrate/mutations.ts",
      "core/bundle/generated_cases.ts",
    ]
  ) {
    assert.ok(!graph.has(new URL(`../../${lazy}`, import.meta.url).href), lazy);
  }
});
