import assert from "node:assert/strict";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { memoryHome } from "../../../core/io/home.ts";
import { planExperiment, type PlanOptions } from "../../../core/bench/experiment.ts";
import {
  finalVerdict,
  fixturesFor,
  type ProgressEvent,
  runExperiment,
  scoreExperiment,
} from "../../../core/bench/run_experiment.ts";
import { type Candidate, NO_USAGE } from "../../../core/bench/candidate.ts";
import { builtinCandidate } from "../../../core/io/candidates/builtin.ts";
import { commandCandidate } from "../../../core/io/candidates/command.ts";
import { getJson } from "../../../core/io/blob_store.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";

const env = (k: string) => Deno.env.get(k);
const pool = createCheckerPool({ workers: 2 });
// The pool's workers live for the whole file; close them after the last test.
globalThis.addEventListener("unload", () => pool.close());

function cmd(name: string, command: string): Candidate {
  return commandCandidate({ name, command }, { isolation: "none", env, killGraceMs: 100 });
}

async function run(
  bundle: Bundle,
  candidates: Candidate[],
  opts: PlanOptions & {
    parallel?: number;
    signal?: AbortSignal;
    onEvent?: (e: ProgressEvent) => void;
  } = {},
  home?: Awaited<ReturnType<typeof memoryHome>>,
) {
  const h = home ?? await memoryHome();
  const plan = planExperiment(bundle, candidates, opts);
  const result = await runExperiment({
    state: h.state,
    blobs: h.blobs,
    worldsDir: h.worldsDir,
    bundle,
    plan,
    candidates,
    runner: pool,
    room: "words",
    trust: "ad-hoc",
    parallel: opts.parallel,
    signal: opts.signal,
    onEvent: opts.onEvent,
  });
  return { home: h, plan, result };
}

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

Deno.test("runExperiment() grades every cell, then resumes without running any again", async () => {
  const bundle = wordBundle(3);
  const cands = [builtinCandidate("reference", bundle), builtinCandidate("noop", bundle)];
  const first = await run(bundle, cands, { repetitions: 2 });
  assert.equal(first.result.total, 12);
  assert.equal(first.result.attempts, 12);
  assert.equal(first.result.complete, true);
  // builtin:reference writes the calibration reference (case c1's answer) everywhere.
  const passed = first.result.records.filter((r) => r.passed).map((r) => [r.candidate, r.caseId]);
  assert.deepEqual(passed, [["builtin:reference", "c1"], ["builtin:reference", "c1"]]);
  const again = await run(bundle, cands, { repetitions: 2 }, first.home);
  assert.equal(again.result.kept, 12);
  assert.equal(again.result.attempts, 0);
  assert.deepEqual(again.result.records, first.result.records);
  const card = await scoreExperiment(first.home.state, again.plan, again.result, {
    trust: "ad-hoc",
  });
  assert.equal(card.complete, true);
  assert.deepEqual(await first.home.state.getScorecard(again.plan.id), card);
  await first.home.close();
});

Deno.test("runExperiment() keeps evidence: captured files, candidate output and the checker's verdict", async () => {
  const bundle = wordBundle(1);
  const { home, result } = await run(bundle, [
    cmd("cat", "cat docs/q.txt > out/answer.txt; echo done"),
  ]);
  const [r] = result.records;
  assert.equal(r.passed, true);
  assert.deepEqual(r.verdict, {
    checks: { answered: true, right: true, "completed?": true },
    reward: 1,
  });
  const ev = await getJson<{
    captured: { files: Record<string, string> };
    candidate: { stdoutTail: string };
    checker: { verdict: { reward: number } };
  }>(home.blobs, r.evidenceRef!);
  assert.deepEqual(ev!.captured.files, { "/out/answer.txt": "w1" });
  assert.equal(ev!.candidate.stdoutTail, "done\n");
  assert.equal(ev!.checker.verdict.reward, 1);
  // The world is gone.
  const left = [...Deno.readDirSync(home.worldsDir)];
  assert.equal(left.length, 0);
  await home.close();
});

Deno.test("runExperiment() tries a faulted cell once more in the same run", async () => {
  const marker = await Deno.makeTempDir();
  const bundle = wordBundle(1);
  const flaky = cmd(
    "flaky",
    `if [ -f ${marker}/seen ]; then cat docs/q.txt > out/answer.txt; else touch ${marker}/seen; exit 127; fi`,
  );
  const { home, plan, result } = await run(bundle, [flaky]);
  assert.equal(result.attempts, 2);
  assert.equal(result.complete, true);
  assert.equal(result.records[0].tryNo, 2);
  const history = await home.state.attemptHistory(plan.id);
  assert.deepEqual(history.map((h) => [h.tryNo, h.status, h.fault?.source ?? null]), [
    [1, "fault", "candidate"],
    [2, "completed", null],
  ]);
  await home.close();
  await Deno.remove(marker, { recursive: true });
});

Deno.test("runExperiment() leaves cells that keep faulting unfinished, and runs them again on resume", async () => {
  const bundle = wordBundle(2);
  const broken = cmd("broken", "no-such-agent-for-dvergr");
  const first = await run(bundle, [broken]);
  assert.equal(first.result.complete, false);
  assert.equal(first.result.faults, 2);
  assert.equal(first.result.attempts, 4);
  const again = await run(bundle, [broken], {}, first.home);
  assert.equal(again.result.kept, 0);
  assert.deepEqual(again.result.records.map((r) => r.tryNo), [4, 4]);
  const card = await scoreExperiment(first.home.state, again.plan, again.result, {
    trust: "ad-hoc",
  });
  assert.equal(card.complete, false);
  assert.equal(await first.home.state.getScorecard(again.plan.id), null);
  await first.home.close();
});

Deno.test("runExperiment() records a checker fault as a fault of the checker", async () => {
  const bundle = wordBundle(1);
  const { home, result } = await run(bundle, [cmd("boom", "echo boom > out/answer.txt")], {
    params: { explode: true },
  });
  const [r] = result.records;
  assert.equal(r.verdict, null);
  assert.equal(r.fault?.source, "checker");
  assert.equal(r.fault?.kind, "threw");
  assert.match(r.fault?.message ?? "", /checker exploded/);
  assert.equal(r.tryNo, 2);
  await home.close();
});

Deno.test("runExperiment() grades a timed-out or crashed attempt with reward 0 and completed? false", async () => {
  const bundle = wordBundle(1);
  const { home, result } = await run(bundle, [
    cmd("slow", "cat docs/q.txt > out/answer.txt; sleep 30"),
    cmd("crash", "cat docs/q.txt > out/answer.txt; exit 2"),
  ], { timeoutMs: 500 });
  const [slow, crash] = result.records;
  assert.equal(slow.status, "timeout");
  assert.deepEqual(slow.verdict, {
    checks: { answered: true, right: true, "completed?": false },
    reward: 0,
  });
  assert.equal(slow.passed, false);
  assert.ok(slow.elapsedMs < 5000);
  assert.equal(crash.status, "crashed");
  assert.equal(crash.verdict?.reward, 0);
  assert.equal(crash.verdict?.checks["completed?"], false);
  assert.equal(result.complete, true);
  await home.close();
});

Deno.test("runExperiment() runs at most --parallel attempts at once", async () => {
  const bundle = wordBundle(4);
  let now = 0;
  let peak = 0;
  const counting: Candidate = {
    name: "counting",
    identity: { kind: "test", name: "counting" },
    async run(ctx) {
      now++;
      peak = Math.max(peak, now);
      await new Promise((r) => setTimeout(r, 30));
      await ctx.world.write("/out/answer.txt", await ctx.world.read("/docs/q.txt"));
      now--;
      return {
        status: "completed",
        usage: { ...NO_USAGE },
        billedMicros: 0,
        listMicros: null,
        isolated: true,
        evidence: {},
      };
    },
  };
  const { home, result } = await run(bundle, [counting], { repetitions: 3, parallel: 3 });
  assert.equal(result.complete, true);
  assert.equal(peak, 3);
  assert.equal(result.records.filter((r) => r.passed).length, 12);
  await home.close();
});

Deno.test("runExperiment() records nothing for the attempts a cancelled run interrupts", async () => {
  const bundle = wordBundle(4);
  const ctl = new AbortController();
  const events: ProgressEvent[] = [];
  const slow = cmd("slow", "sleep 0.3; cat docs/q.txt > out/answer.txt");
  const { home, plan, result } = await run(bundle, [slow], {
    parallel: 2,
    signal: ctl.signal,
    onEvent: (e) => {
      events.push(e);
      if (e.type === "attempt" && e.done === 2) ctl.abort();
    },
  });
  assert.equal(result.cancelled, true);
  assert.equal(result.complete, false);
  const history = await home.state.attemptHistory(plan.id);
  assert.equal(history.length, 2);
  assert.ok(history.every((h) => h.verdict !== null));
  assert.deepEqual(events.at(-1), { type: "end", done: 2, faults: 0, total: 4, cancelled: true });
  const resumed = await run(bundle, [slow], { parallel: 2 }, home);
  assert.equal(resumed.result.kept, 2);
  assert.equal(resumed.result.attempts, 2);
  assert.equal(resumed.result.complete, true);
  await home.close();
});

Deno.test("runExperiment() starts a new experiment beside the old one when the bundle changes", async () => {
  const home = await memoryHome();
  const a = wordBundle(2);
  const b = wordBundle(2, { "cases/c2/gold.edn": '{:word "other"}' });
  const ra = await run(a, [builtinCandidate("noop", a)], {}, home);
  const rb = await run(b, [builtinCandidate("noop", b)], {}, home);
  assert.notEqual(ra.plan.id, rb.plan.id);
  assert.equal(rb.result.kept, 0);
  assert.deepEqual(
    (await home.state.listExperiments()).map((e) => e.id).sort(),
    [ra.plan.id, rb.plan.id].sort(),
  );
  assert.equal((await home.state.cellRecords(ra.plan.id)).length, 2);
  await home.close();
});
