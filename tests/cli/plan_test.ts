import assert from "node:assert/strict";
import { dvergrWithPath as dvergr } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { casesNeeded, summarisePilot } from "../../core/bench/power_plan.ts";
import type { PilotPlan } from "../../core/engine/plan_from_pilot.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { memoryHome } from "../../adapters/store/memory/home.ts";
import { callOp } from "../../core/ops/registry.ts";
import { experimentPlan } from "../../core/ops/grading.ts";
import { NO_RUNNER, testOpContext } from "../helpers/op_context.ts";
import type { DvergrError } from "../../core/errors.ts";
import { startFakeAnthropic } from "../helpers/fake_providers.ts";

/** A pilot: builtin:reference writes case c1's word everywhere, so it passes c1 only. */
async function pilot(): Promise<{ home: string; experiment: string }> {
  const dir = await writeBundleTo(wordDataset(6));
  const home = await Deno.makeTempDir();
  const r = await dvergr([
    "benchmark",
    dir,
    "--candidate",
    "builtin:reference",
    "--candidate",
    "builtin:noop",
    "--repetitions",
    "2",
    "--home",
    home,
    "--json",
  ]);
  assert.equal(r.code, 0, r.err);
  return { home, experiment: JSON.parse(r.out).experiment };
}

Deno.test("dvergr plan prints cases × repetitions for a fixed interval and the sequential cells, from a pilot", async () => {
  const { home, experiment } = await pilot();
  const args = ["plan", experiment.slice(0, 8), "--half-width", "0.1", "--home", home];
  const json = await dvergr([...args, "--baseline", "builtin:noop", "--json"]);
  assert.equal(json.code, 0, json.err);
  const plan = JSON.parse(json.out) as PilotPlan;
  assert.equal(plan.experiment, experiment);
  assert.equal(plan.baseline, "builtin:noop");
  assert.equal(plan.casesAvailable, 6);
  const [c] = plan.comparisons;
  assert.equal(c.candidate, "builtin:reference");
  // Differences: 1 on both repetitions of c1, 0 on the other five cases.
  const expected = summarisePilot([[1, 1], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]]);
  assert.deepEqual(c.plan!.pilot, expected);
  assert.equal(c.plan!.pilot.sdWithinCases, 0);
  assert.deepEqual(
    c.plan!.fixed.map((f) => [f.repetitions, f.cases, f.cells]),
    [1, 2, 3, 5, 10].map((r) => {
      const n = casesNeeded(expected, r, 0.1, 0.05);
      return [r, n, 2 * n * r];
    }),
  );
  // More cases than the bundle has whatever the repetitions: no plan fits.
  assert.ok(c.plan!.fixed.every((f) => f.cases > 6));
  assert.equal(c.plan!.recommended, null);
  assert.equal(c.plan!.sequential.plannedPairs, c.plan!.fixed[0].pairs);
  assert.ok(c.plan!.sequential.expectedCells <= 2 * c.plan!.sequential.plannedPairs);

  const text = await dvergr([...args, "--baseline", "builtin:noop"]);
  assert.equal(text.code, 0, text.err);
  assert.match(
    text.out,
    new RegExp(`^Pilot ${experiment} \\(bundle words, 6 cases\\), baseline builtin:noop\n`),
  );
  assert.match(
    text.out,
    /^builtin:reference vs builtin:noop: 12 pairs over 6 cases, mean difference \+0\.167, sd 0\.389 \(between cases 0\.408, within cases 0\.000\)$/m,
  );
  assert.match(text.out, /^ {2}a fixed-size 95% interval of ±0\.1 needs:$/m);
  assert.match(text.out, /^ {4}1 repetition: \d+ cases \(\d+ cells\) — more than the bundle's 6$/m);
  assert.match(text.out, /none fits the bundle's 6 cases/);
  assert.match(
    text.out,
    /^ {2}with --stop-when-decided on \d+ cases × 1 \(\d+ cells\): expected \d+ cells/m,
  );

  // The default baseline is the pilot's leaderboard top; MCP gives the same plan.
  const top = JSON.parse((await dvergr([...args, "--json"])).out) as PilotPlan;
  assert.equal(top.baseline, "builtin:reference");
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr plan refuses a missing --half-width, an unknown baseline and an unknown experiment", async () => {
  const { home, experiment } = await pilot();
  const none = await dvergr(["plan", experiment, "--home", home]);
  assert.equal(none.code, 2);
  assert.match(none.err, /Cannot plan without --half-width/);
  const wide = await dvergr(["plan", experiment, "--half-width", "2", "--home", home]);
  assert.equal(wide.code, 2);
  assert.match(wide.err, /--half-width "2": expected from 0\.001 to 1/);
  const base = await dvergr([
    "plan",
    experiment,
    "--half-width",
    "0.1",
    "--baseline",
    "x",
    "--home",
    home,
  ]);
  assert.equal(base.code, 2);
  assert.match(
    base.err,
    new RegExp(
      `Cannot compare against baseline "x": it is not a candidate of experiment ${experiment}`,
    ),
  );
  const missing = await dvergr(["plan", "ffffffff", "--half-width", "0.1", "--home", home]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /No experiment "ffffffff"/);
  await Deno.remove(home, { recursive: true });
});

Deno.test("experiment_plan plans from a pilot in a room, as dvergr plan does", async () => {
  const { home: dir, experiment } = await pilot();
  const cli = JSON.parse(
    (await dvergr([
      "plan",
      experiment,
      "--half-width",
      "0.2",
      "--baseline",
      "builtin:noop",
      "--home",
      dir,
      "--json",
    ]))
      .out,
  );
  const home = await openHome(dir);
  try {
    const ctx = testOpContext(home, NO_RUNNER);
    const r = await callOp(experimentPlan, ctx, {
      room: "words",
      experiment: experiment.slice(0, 6),
      half_width: 0.2,
      baseline: "builtin:noop",
    }) as PilotPlan & { room: string };
    assert.equal(r.room, "words");
    const { format, ...plan } = cli;
    assert.equal(format, "dvergr-plan/1");
    assert.deepEqual({ ...r, room: undefined }, { ...plan, room: undefined });
    await assert.rejects(
      () => callOp(experimentPlan, ctx, { room: "words", experiment, half_width: 0 }),
      (e: DvergrError) => e.code === "USAGE" && /half_width/.test(e.message),
    );
  } finally {
    await home.close();
  }
  const empty = await memoryHome();
  await assert.rejects(
    () =>
      callOp(experimentPlan, testOpContext(empty, NO_RUNNER), {
        room: "words",
        experiment: "abcd",
        half_width: 0.1,
      }),
    (e: DvergrError) => e.code === "NOT_FOUND",
  );
  await empty.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("dvergr plan and experiment_plan take a model candidate's alias as --baseline, as benchmark does", async () => {
  // A model that answers at once without writing anything: every cell is graded.
  const server = await startFakeAnthropic(() => ({ text: "Done." }), { apiKey: "ak" });
  const dir = await writeBundleTo(wordDataset(3));
  const home = await Deno.makeTempDir();
  try {
    const env = { ANTHROPIC_API_KEY: "ak", ANTHROPIC_BASE_URL: server.url };
    const bench = await dvergr([
      "benchmark",
      dir,
      "--candidate",
      "builtin:reference",
      "--models",
      "claude-haiku-4-5",
      "--baseline",
      "haiku",
      "--home",
      home,
      "--json",
    ], env);
    assert.equal(bench.code, 0, bench.err);
    const { experiment } = JSON.parse(bench.out);
    const args = ["plan", experiment, "--half-width", "0.2", "--home", home, "--json"];
    // The registry's alias, its dated id and its model id all name the one haiku candidate.
    for (const name of ["haiku", "claude-haiku-4-5-20251001", "claude-haiku-4-5"]) {
      const r = await dvergr([...args, "--baseline", name]);
      assert.equal(r.code, 0, r.err);
      const plan = JSON.parse(r.out) as PilotPlan;
      assert.equal(plan.baseline, "claude-haiku-4-5", name);
      assert.deepEqual(plan.comparisons.map((c) => c.candidate), ["builtin:reference"]);
    }
    const sonnet = await dvergr([
      "plan",
      experiment,
      "--half-width",
      "0.2",
      "--home",
      home,
      "--baseline",
      "sonnet",
    ]);
    assert.equal(sonnet.code, 2);
    assert.match(sonnet.err, /Cannot compare against baseline "sonnet": it is not a candidate/);
    assert.match(sonnet.err, /a model candidate also by its model id or alias/);
    const h = await openHome(home);
    try {
      const room = (await h.state.getExperiment(experiment))!.room;
      const r = await callOp(experimentPlan, testOpContext(h, NO_RUNNER), {
        room,
        experiment,
        half_width: 0.2,
        baseline: "haiku",
      }) as PilotPlan;
      assert.equal(r.baseline, "claude-haiku-4-5");
    } finally {
      await h.close();
    }
  } finally {
    await server.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  }
});
