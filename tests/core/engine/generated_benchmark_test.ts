/**
 * A bundle with generator.js on the engine's one benchmark path: its worlds are the
 * experiment's cases, its identity (generator, split, count, seed, worlds) is in the
 * experiment's definition, the same request resumes the same experiment with the same
 * verdicts, and a generator that fails stops the benchmark before any cell (exit 2).
 */
import assert from "node:assert/strict";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { composeServices } from "../../../adapters/compose.ts";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { benchmarkBundle, prepareBenchmark } from "../../../core/engine/benchmark.ts";
import { regradeExperiment } from "../../../core/engine/regrade.ts";
import type { FileBundle } from "../../../core/bundle/file_map.ts";
import { DvergrError } from "../../../core/errors.ts";
import { exitCodeOf } from "../../../cli/render.ts";

const GENERATOR = `export function generate({ seed, split, index, params }) {
  const n = (seed % 1000) + index;
  return {
    files: { "/docs/n.txt": split + ":" + n + ":" + params.unit },
    gold: { expected: { n } },
  };
}`;

/** Passes when /out/answer.edn holds the world's n. */
const CHECKER = `export function check({ files, gold }) {
  const t = files["/out/answer.edn"];
  const a = t === undefined ? null : edn.parse(t);
  const right = a !== null && a.n === gold.expected.n;
  return { checks: { right }, reward: right ? 1 : 0 };
}`;

function generated(o: Record<string, string> = {}): FileBundle {
  return {
    name: "numbers",
    files: new Map(Object.entries({
      "workflow.edn": '{:title "Numbers" :task "Write n." :params {:unit "kg"}}',
      "checker.js": CHECKER,
      "generator.js": GENERATOR,
      "calibration.edn": '{:reference {"/out/answer.edn" "{:n -1}"} :damaged {}}',
      ...o,
    })),
  };
}

const SPECS = ["builtin:reference", "builtin:noop"].map((s) => candidateKinds.parse(s));

Deno.test("benchmarkBundle() runs generated worlds as cases, with their identity in the experiment id", async () => {
  const home = await memoryHome();
  const runner = createCheckerPool({ workers: 1 });
  const base = {
    services: composeServices(),
    specs: SPECS,
    home,
    runner,
    env: () => undefined,
    isolation: "none" as const,
  };
  try {
    const first = await benchmarkBundle({ ...base, bundle: generated(), cases: 4, split: "train" });
    assert.deepEqual(
      first.plan.definition.cases,
      ["gen-train-0000", "gen-train-0001", "gen-train-0002", "gen-train-0003"],
    );
    const g = first.plan.definition.generated!;
    assert.equal(g.file, "generator.js");
    assert.equal(g.split, "train");
    assert.equal(g.count, 4);
    assert.equal(g.seed, 20261001);
    assert.match(g.generator, /^[0-9a-f]{64}$/);
    assert.match(g.worlds, /^[0-9a-f]{64}$/);
    assert.equal(first.scorecard.complete, true);
    // builtin:reference answers each world's expected n (its gold has the case-pack shape).
    const rows = Object.fromEntries(first.scorecard.candidates.map((c) => [c.candidate, c]));
    assert.equal(rows["builtin:reference"].passes, 4);
    assert.equal(rows["builtin:noop"].passes, 0);
    // The world's params are workflow.edn's: the generated file says so.
    const world = first.bundle.cases[2];
    assert.match(world.fixtures["/docs/n.txt"], /^train:\d+:kg$/);

    // The same request: the same experiment, every cell kept.
    const again = await prepareBenchmark({
      ...base,
      bundle: generated(),
      cases: 4,
      split: "train",
    });
    assert.equal(again.plan.id, first.plan.id);
    assert.deepEqual(again.bundle.cases, first.bundle.cases);

    // Another split, count, seed or generator: another experiment.
    const ids = new Set([first.plan.id]);
    for (
      const other of [
        { bundle: generated(), cases: 4, split: "test" as const },
        { bundle: generated(), cases: 3, split: "train" as const },
        { bundle: generated(), cases: 4, split: "train" as const, seed: 5 },
        {
          bundle: generated({ "generator.js": GENERATOR + "\n// changed" }),
          cases: 4,
          split: "train" as const,
        },
      ]
    ) {
      ids.add((await prepareBenchmark({ ...base, ...other })).plan.id);
    }
    assert.equal(ids.size, 5);
  } finally {
    runner.close();
    await home.close();
  }
});

Deno.test("prepareBenchmark() refuses a failing generator and generated options without one, exit 2", async () => {
  const home = await memoryHome();
  const runner = createCheckerPool({ workers: 1, defaultTimeoutMs: 2_000 });
  const base = {
    services: composeServices(),
    specs: SPECS,
    home,
    runner,
    env: () => undefined,
    isolation: "none" as const,
  };
  type Req = Parameters<typeof prepareBenchmark>[0];
  const refused = async (
    req: Partial<Req> & { bundle: FileBundle },
    code: string,
    message: RegExp,
  ) => {
    const e = await prepareBenchmark({ ...base, ...req }).then(() => null, (e) => e);
    assert.ok(e instanceof DvergrError, String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, message);
    assert.equal(exitCodeOf(e), 2);
    return e;
  };
  try {
    const threw = await refused(
      {
        bundle: generated({
          "generator.js": `export function generate({ index }) {
  if (index === 2) throw new Error("no world 2");
  return { files: { "/docs/a": "x" }, gold: 1 };
}`,
        }),
        cases: 3,
      },
      "BUNDLE_INVALID",
      /generator\.js could not make its worlds: world gen-test-0002: generator\.js's generate threw Error: no world 2/,
    );
    const problems = threw.details!.problems as { file: string; line?: number }[];
    assert.deepEqual(problems.map((p) => [p.file, p.line]), [["generator.js", 2]]);
    await refused(
      {
        bundle: generated({
          "generator.js": `export function generate() { for (;;) {} }`,
        }),
        cases: 1,
      },
      "BUNDLE_INVALID",
      /world gen-test-0000: generator\.js did not finish within 2000ms/,
    );
    await refused(
      {
        bundle: generated({
          "generator.js":
            `export function generate() { return { files: { "/.dvergr/seed": "x" }, gold: 1 }; }`,
        }),
        cases: 1,
      },
      "BUNDLE_INVALID",
      /world gen-test-0000: generate returned a world that cannot be made: files: "\/\.dvergr\/seed" is under \/\.dvergr/,
    );
    await refused({ bundle: generated() }, "USAGE", /without the number of worlds to generate/);
    // Too many cells is refused before any world is made (a generator that would hang).
    await refused(
      {
        bundle: generated({ "generator.js": "export function generate() { for (;;) {} }" }),
        cases: 600_000,
      },
      "USAGE",
      /number of cells/,
    );
    await refused(
      { bundle: generated(), cases: 2, caseIds: ["gen-test-0000"] },
      "USAGE",
      /Cannot select cases by id/,
    );
    const oneWorld: FileBundle = {
      name: "one",
      files: new Map(Object.entries({
        "workflow.edn": '{:title "One" :task "Write n."}',
        "checker.js": CHECKER,
        "fixtures/docs/a.md": "x",
      })),
    };
    await refused({ bundle: oneWorld, cases: 2 }, "USAGE", /Cannot take 2 cases of bundle "one"/);
    await refused({ bundle: oneWorld, split: "train" }, "USAGE", /Cannot use a split/);
    await refused({ bundle: oneWorld, seed: 3 }, "USAGE", /Cannot use a seed/);
    // Nothing was planned.
    assert.deepEqual(await home.state.listExperiments(), []);
  } finally {
    runner.close();
    await home.close();
  }
});

Deno.test("regradeExperiment() grades generated worlds again with their gold; another generator's worlds are another task", async () => {
  const home = await memoryHome();
  const runner = createCheckerPool({ workers: 1 });
  const base = {
    services: composeServices(),
    home,
    runner,
    env: () => undefined,
  };
  try {
    const bench = await benchmarkBundle({
      ...base,
      specs: SPECS,
      isolation: "none",
      bundle: generated(),
      cases: 4,
      split: "train",
    });
    const meta = (await home.state.getExperiment(bench.plan.id))!;
    // A stricter checker: only worlds with an even n pass, which it reads from their gold.
    const strict = CHECKER.replace("const right = ", "const right = gold.expected.n % 2 === 0 && ");
    const regraded = await regradeExperiment({
      ...base,
      original: meta,
      bundle: generated({ "checker.js": strict }),
    });
    assert.equal(regraded.scorecard.complete, true);
    const odd = bench.bundle.cases.filter((c) =>
      (c.gold as { expected: { n: number } }).expected.n % 2 !== 0
    ).length;
    assert.ok(odd > 0 && odd < 4, `odd worlds: ${odd}`);
    assert.equal(regraded.comparison.passedToFailed, odd);
    assert.equal(regraded.comparison.compared, 8);
    assert.deepEqual(regraded.plan.definition.cases, bench.plan.definition.cases);
    assert.equal(
      regraded.plan.definition.generated!.worlds,
      bench.plan.definition.generated!.worlds,
    );
    // A generator that makes other files poses another task.
    await assert.rejects(
      regradeExperiment({
        ...base,
        original: meta,
        bundle: generated({ "generator.js": GENERATOR.replace('":"', '"/"') }),
      }),
      /poses another task \(case "gen-train-0000"'s fixtures/,
    );
  } finally {
    runner.close();
    await home.close();
  }
});
