import assert from "node:assert/strict";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { planExperiment } from "../../../core/bench/experiment.ts";
import type { ProgressEvent } from "../../../core/engine/run_experiment.ts";
import { scoreExperiment } from "../../../core/engine/score_experiment.ts";
import { type Candidate, type CandidateOutcome, NO_USAGE } from "../../../core/bench/candidate.ts";
import type { StoppingRule } from "../../../core/bench/sequential.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";
import { planRecords } from "../../helpers/plan_records.ts";
import { runInHome } from "../../helpers/engine_run.ts";

const pool = createCheckerPool({ workers: 2 });
globalThis.addEventListener("unload", () => pool.close());

const RULE: StoppingRule = { baseline: "wrong", alpha: 0.05, delta: 0.02 };

function completed(): CandidateOutcome {
  return {
    status: "completed",
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    evidence: {},
  };
}

/** A scripted candidate: copies the word asked for (right) or writes "nope" (wrong). */
function scripted(name: string, right: boolean, faultOnce = new Set<string>()): Candidate {
  const tried = new Set<string>();
  return {
    name,
    identity: { kind: "scripted", right },
    async run(ctx) {
      const key = `${ctx.caseId}/${ctx.repetition}`;
      if (faultOnce.has(key) && !tried.has(key)) {
        tried.add(key);
        return { ...completed(), status: "fault", message: "could not start (scripted)" };
      }
      const word = (await ctx.world.read("/docs/q.txt")).trim();
      await ctx.world.write("/out/answer.txt", right ? word : "nope");
      return completed();
    },
  };
}

async function run(
  home: Awaited<ReturnType<typeof memoryHome>>,
  bundle: Bundle,
  candidates: Candidate[],
  opts: {
    stopping?: StoppingRule;
    signal?: AbortSignal;
    parallel?: number;
    onEvent?: (e: ProgressEvent) => void;
  } = {},
) {
  const plan = planExperiment(bundle, candidates, { repetitions: 10 });
  const result = await runInHome(home, {
    bundle,
    plan,
    candidates,
    runner: pool,
    parallel: opts.parallel ?? 2,
    signal: opts.signal,
    stopping: opts.stopping,
    onEvent: opts.onEvent,
  });
  const { scorecard } = await scoreExperiment(home.state, plan, {
    trust: "ad-hoc",
    bundleCases: bundle.cases.length,
    stopping: opts.stopping,
  });
  return { plan, result, scorecard };
}

Deno.test("runExperiment() with a stopping rule leaves out the cells a decided comparison does not need", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(5);
  const cands = [scripted("right", true), scripted("wrong", false)];
  const events: ProgressEvent[] = [];
  const first = await run(home, bundle, cands, { stopping: RULE, onEvent: (e) => events.push(e) });
  const { result, scorecard } = first;
  assert.equal(result.total, 100);
  assert.equal(result.complete, true);
  assert.ok(result.notNeeded >= 40, `not needed: ${result.notNeeded}`);
  assert.equal(result.graded + result.notNeeded, 100);
  assert.equal(result.faults, 0);
  assert.equal(result.attempts, result.graded);
  const [c] = scorecard.sequential!.comparisons;
  assert.equal(c.status, "decided");
  assert.equal(c.higher, true);
  assert.ok(c.pairs < 50 && c.sequence[0] > 0, JSON.stringify(c));
  assert.equal(scorecard.complete, true);
  assert.equal(scorecard.sequential!.notNeeded, result.notNeeded);
  const byName = new Map(scorecard.candidates.map((s) => [s.candidate, s]));
  assert.equal(byName.get("right")!.notNeeded! + byName.get("wrong")!.notNeeded!, result.notNeeded);
  assert.equal(byName.get("right")!.unfinished, 0);
  // Not needed cells are no failures: the ranked reward is over the cells each needed.
  assert.equal(byName.get("right")!.rankedReward, 1);
  assert.deepEqual(scorecard.leaderboard, ["right", "wrong"]);
  const stops = events.filter((e) => e.type === "stopped");
  assert.equal(stops.length, 1);
  // Pairs complete early: the cells of one (case, repetition) run next to each other, so
  // the run stopped a few cells after the sequence's last pair.
  assert.ok(result.graded <= 2 * c.pairs + 4, `${result.graded} graded, ${c.pairs} pairs`);

  // A rerun finds the same decision in the records and runs nothing.
  const again = await run(home, bundle, cands, { stopping: RULE });
  assert.equal(again.result.attempts, 0);
  assert.equal(again.result.notNeeded, result.notNeeded);
  assert.deepEqual(again.scorecard.sequential, scorecard.sequential);

  // Without the rule the same experiment runs just the cells that were not needed.
  const full = await run(home, bundle, cands);
  assert.equal(full.result.attempts, result.notNeeded);
  assert.equal(full.result.graded, 100);
  assert.equal(full.scorecard.sequential, undefined);
  await home.close();
});

Deno.test("runExperiment() interrupted and resumed with a stopping rule concludes as an uninterrupted run", async () => {
  const bundle = wordBundle(5);
  const cands = () => [scripted("right", true), scripted("wrong", false)];
  const whole = await memoryHome();
  const uninterrupted = await run(whole, bundle, cands(), { stopping: RULE, parallel: 3 });
  await whole.close();

  const home = await memoryHome();
  const stop = new AbortController();
  const cut = await run(home, bundle, cands(), {
    stopping: RULE,
    signal: stop.signal,
    onEvent: (e) => {
      if (e.type === "attempt" && e.done >= 7) stop.abort();
    },
  });
  assert.equal(cut.result.complete, false);
  assert.equal(cut.result.notNeeded, 0);
  const resumed = await run(home, bundle, cands(), { stopping: RULE, parallel: 1 });
  assert.ok(resumed.result.kept >= 7);
  assert.equal(resumed.result.complete, true);
  assert.deepEqual(
    resumed.scorecard.sequential!.comparisons,
    uninterrupted.scorecard.sequential!.comparisons,
  );
  await home.close();
});

Deno.test("runExperiment() holds a comparison at a faulted pair and retries that cell first", async () => {
  const bundle = wordBundle(5);
  const clean = await memoryHome();
  const expected = await run(clean, bundle, [scripted("right", true), scripted("wrong", false)], {
    stopping: RULE,
  });
  await clean.close();

  const home = await memoryHome();
  const faulty = scripted("right", true, new Set(["c2/0", "c4/1"]));
  const events: ProgressEvent[] = [];
  const { result, scorecard, plan } = await run(
    home,
    bundle,
    [faulty, scripted("wrong", false)],
    { stopping: RULE, parallel: 1, onEvent: (e) => events.push(e) },
  );
  assert.equal(result.complete, true);
  assert.equal(result.faults, 0);
  assert.deepEqual(scorecard.sequential!.comparisons, expected.scorecard.sequential!.comparisons);
  const records = await planRecords(home.state, plan);
  const retried = records.filter((r) => r.tryNo === 2).map((r) => `${r.caseId}/${r.repetition}`);
  assert.deepEqual(retried.sort(), ["c2/0", "c4/1"]);
  // The retry ran as soon as the fault's record landed (the one cell started meanwhile
  // aside), not after the cells leased ahead.
  const order = events.flatMap((e) =>
    e.type === "attempt" ? [`${e.record.candidate} ${e.record.caseId}/${e.record.repetition}`] : []
  );
  const at = order.indexOf("right c2/0");
  const retryAt = order.indexOf("right c2/0", at + 1);
  assert.ok(retryAt > at && retryAt <= at + 2, `fault at ${at}, retry at ${retryAt}`);
  await home.close();
});
