/**
 * regradeExperiment() on the engine's one path: it makes no world and resolves no candidate,
 * finds the bundle a room ran in the room's history once the room moved on, and a re-grade
 * interrupted after its first cell resumes where it stopped. MCP experiment_regrade does the
 * same from a room.
 */
import assert from "node:assert/strict";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { composeServices } from "../../../adapters/compose.ts";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { benchmarkBundle } from "../../../core/engine/benchmark.ts";
import { regradeExperiment } from "../../../core/engine/regrade.ts";
import { readRoomBundle } from "../../../core/ops/room_bundles.ts";
import { callOp } from "../../../core/ops/registry.ts";
import { experimentRegrade } from "../../../core/ops/grading.ts";
import { jobList, jobStatus } from "../../../core/ops/jobs.ts";
import { createJobRunner } from "../../../adapters/jobs/job_runner.ts";
import type { Services } from "../../../core/ports/services.ts";
import { ANY_ANSWER_CHECKER, cityFiles, RIGHT_CHECKER } from "../../helpers/city_bundle.ts";
import { testOpContext } from "../../helpers/op_context.ts";

const pool = createCheckerPool({ workers: 1 });
globalThis.addEventListener("unload", () => pool.close());

/** Services under which any world or candidate would fail the test. */
function noCandidates(): Services {
  const refuse = () => {
    throw new Error("a re-grade made a world or resolved a candidate");
  };
  return composeServices({
    worlds: { create: refuse, memory: refuse },
    candidates: { ...composeServices().candidates, resolve: refuse },
  });
}

async function cityRoomExperiment() {
  const home = await memoryHome();
  await home.rooms.createRoom("r");
  const put = (checker: string) =>
    home.rooms.replaceDir("r", "workflows/city", cityFiles(checker), "city");
  await put(ANY_ANSWER_CHECKER);
  const bench = await benchmarkBundle({
    services: composeServices(),
    bundle: await readRoomBundle(home.rooms, "r", "city"),
    room: "r",
    specs: ["builtin:reference", "builtin:noop"].map(candidateKinds.parse),
    repetitions: 3,
    home,
    runner: pool,
    env: () => undefined,
    isolation: "none",
  });
  // The room moves on: the strict checker replaces the lenient one.
  await put(RIGHT_CHECKER);
  const meta = (await home.state.getExperiment(bench.plan.id))!;
  return { home, meta };
}

Deno.test("regradeExperiment() makes no world, resumes after an interruption, finds the bundle in the room's history", async () => {
  const { home, meta } = await cityRoomExperiment();
  const strict = await readRoomBundle(home.rooms, "r", "city");
  const stop = new AbortController();
  const first = await regradeExperiment({
    services: noCandidates(),
    home,
    original: meta,
    bundle: strict,
    env: () => undefined,
    runner: pool,
    parallel: 1,
    signal: stop.signal,
    onEvent: (e) => {
      if (e.type === "attempt") stop.abort();
    },
  });
  assert.equal(first.result.cancelled, true);
  assert.ok(first.result.graded >= 1 && first.result.graded < 6, String(first.result.graded));
  const again = await regradeExperiment({
    services: noCandidates(),
    home,
    original: meta,
    bundle: strict,
    env: () => undefined,
    runner: pool,
  });
  assert.equal(again.plan.id, first.plan.id);
  assert.equal(again.result.kept, first.result.graded);
  assert.equal(again.result.attempts, 6 - first.result.graded);
  assert.equal(again.scorecard.complete, true);
  assert.equal(again.comparison.unchanged, 6);
  assert.equal(again.plan.definition.regradeOf, meta.id);
  assert.equal(again.originalBundle.id, meta.bundleId);
  const records = await home.state.cellRecords(again.plan.id);
  assert.ok(records.every((r) => r.regradedFrom?.experimentId === meta.id));
  await home.close();
});

Deno.test("experiment_regrade re-grades an experiment of a room with the room's changed bundle", async () => {
  const { home, meta } = await cityRoomExperiment();
  const out = await callOp(experimentRegrade, testOpContext(home, pool), {
    room: "r",
    experiment: meta.id.slice(0, 8),
    name: "city",
  });
  assert.equal(out.original, meta.id);
  assert.equal(out.complete, true);
  assert.equal(out.cells, 6);
  assert.equal(out.comparison!.compared, 6);
  assert.deepEqual(out.leaderboard!.map((r) => [r.candidate, r.passes]), [
    ["builtin:reference", 3],
    ["builtin:noop", 0],
  ]);
  await home.close();
});

Deno.test("experiment_regrade over a job runner returns its job at once; job_status gives the result", async () => {
  const { home, meta } = await cityRoomExperiment();
  const jobs = createJobRunner(home.state);
  try {
    const ctx = testOpContext(home, pool, jobs);
    const started = await callOp(experimentRegrade, ctx, {
      room: "r",
      experiment: meta.id.slice(0, 8),
      name: "city",
    });
    assert.equal(started.status, "running");
    assert.equal(started.original, meta.id);
    assert.equal(started.cells, 6);
    assert.equal(started.comparison, undefined, "the comparison is the job's result");
    let ended = await callOp(jobStatus, ctx, { job: started.job!, wait_ms: 20_000 });
    for (let i = 0; i < 30 && ended.status === "running"; i++) {
      ended = await callOp(jobStatus, ctx, { job: started.job!, wait_ms: 20_000 });
    }
    assert.equal(ended.status, "succeeded");
    const result = ended.result as {
      experiment: string;
      complete: boolean;
      comparison: { compared: number };
    };
    assert.equal(result.experiment, started.experiment);
    assert.equal(result.complete, true);
    assert.equal(result.comparison.compared, 6);
    // A bundle that poses another task (another fixture) fails the call itself, before any job.
    await home.rooms.writeFiles("r", new Map([["workflows/city/fixtures/extra.txt", "x"]]), "more");
    await assert.rejects(
      () => callOp(experimentRegrade, ctx, { room: "r", experiment: meta.id, name: "city" }),
      (e) => {
        assert.match((e as Error).message, /extra\.txt|fixtures/);
        return true;
      },
    );
    assert.equal((await callOp(jobList, ctx, {})).jobs.length, 1, "no second job");
  } finally {
    await jobs.close();
    await home.close();
  }
});
