/**
 * What main.ts evaluates before any command: cli/early_start.ts decides whether a sandbox
 * worker starts early, and only then imports cli/early_sandbox.ts, which starts it. The
 * worker's modules, the layout and image caches and the worker-process module are not in
 * main.ts's static graph: `--help` and a `check` whose load is kept (which start nothing)
 * do not load them (~10 modules, ~1 ms of every start).
 */
import assert from "node:assert/strict";
import { staticGraph } from "../helpers/static_graph.ts";

const href = (path: string) => new URL(`../../${path}`, import.meta.url).href;

Deno.test("main.ts decides on an early sandbox without loading what starts one", async () => {
  const graph = await staticGraph(new URL("../../main.ts", import.meta.url));
  // What decides: the checker's load cache (a kept load starts nothing).
  assert.ok(graph.has(href("cli/early_start.ts")));
  assert.ok(graph.has(href("sandbox/load_cache.ts")));
  for (
    const lazy of [
      "cli/early_sandbox.ts",
      "sandbox/worker_process.ts",
      "sandbox/quickjs_image_cache.ts",
      "sandbox/quickjs_image.ts",
      "sandbox/layout_cache.ts",
      "sandbox/pool_types.ts",
    ]
  ) {
    assert.ok(!graph.has(href(lazy)), lazy);
  }
});
