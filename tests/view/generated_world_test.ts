/**
 * The viewer compares an attempt's files with the world it was given: for a generated world,
 * the generator's files for that case, made again from the experiment's seed (not only the
 * bundle's shared fixtures), and says so; without a runner, or when the generator cannot make
 * the world again, it says it compares with the shared fixtures only.
 */
import assert from "node:assert/strict";
import { memoryHome } from "../../adapters/store/memory/home.ts";
import { composeServices } from "../../adapters/compose.ts";
import { candidateKinds } from "../../adapters/candidates/registry.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { benchmarkBundle } from "../../core/engine/benchmark.ts";
import type { CheckerRunner } from "../../core/checker.ts";
import { viewHandler } from "../../view/server.ts";

const TOKEN = "fedcba9876543210".repeat(4);

// Each world's /out/n.txt is its own; the noop candidate leaves it as it was given.
const GENERATOR = `export function generate({ seed, split, index }) {
  return { files: { "/out/n.txt": split + ":" + (seed + index) }, gold: { n: seed + index } };
}`;
const CHECKER = `export function check({ files, gold }) {
  return { checks: { kept: files["/out/n.txt"] !== undefined }, reward: 1 };
}`;

Deno.test("the viewer shows a generated world's files against that world, made again", async () => {
  const home = await memoryHome();
  const runner = createCheckerPool({ workers: 1 });
  try {
    const run = await benchmarkBundle({
      services: composeServices(),
      specs: [candidateKinds.parse("builtin:noop")],
      home,
      runner,
      env: () => undefined,
      isolation: "none",
      bundle: {
        name: "numbers",
        files: new Map(Object.entries({
          "workflow.edn": '{:title "Numbers" :task "Keep n." :capture ["/out"]}',
          "checker.js": CHECKER,
          "generator.js": GENERATOR,
          "calibration.edn": '{:reference {"/out/n.txt" "x"} :damaged {}}',
        })),
      },
      cases: 2,
      split: "test",
      seed: 40,
    });
    assert.equal(run.scorecard.complete, true);
    const page = async (r: CheckerRunner | undefined, caseId: string) => {
      const handle = viewHandler({ homes: [{ label: "h", home }], token: TOKEN, runner: r });
      const res = await handle(
        new Request(
          `http://127.0.0.1:17890/attempt?id=${run.plan.id}&candidate=builtin:noop&case=${caseId}` +
            `&rep=0&token=${TOKEN}`,
          { headers: { host: "127.0.0.1:17890" } },
        ),
      );
      assert.equal(res.status, 200);
      return await res.text();
    };
    const seen = await page(runner, "gen-test-0001");
    assert.match(seen, /Against the world generator\.js made for gen-test-0001 \(seed 40\)/);
    assert.match(seen, /<h3>\/out\/n\.txt<\/h3><p>Unchanged from the fixture\.<\/p>/);

    // Without a runner: the shared fixtures only, said so (the file reads as the attempt's).
    const bare = await page(undefined, "gen-test-0001");
    assert.match(bare, /Against the shared fixtures only: generator\.js is not run here\./);
    assert.match(bare, /Not in the fixtures: the attempt wrote it\./);

    // A generator that fails now: said so, not an error page.
    const failing: CheckerRunner = {
      ...runner,
      generate: () => Promise.resolve({ ok: false, fault: "threw", message: "boom", ms: 1 }),
    };
    assert.match(
      await page(failing, "gen-test-0000"),
      /generator\.js could not make gen-test-0000 again \(world gen-test-0000: boom\)/,
    );
  } finally {
    runner.close();
    await home.close();
  }
});
