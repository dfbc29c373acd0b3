/**
 * An answer the checker cannot grade is the candidate's failure: candidates that write an
 * answer making the checker loop past its time limit or run out of memory whenever they do
 * not know the right one rank with their honest twin, get no retried try in the run or on a
 * rerun, and the cause is named. A checker that cannot grade even the calibration's
 * reference stays a fault (tested in run_experiment_test.ts: "records a checker fault").
 */
import assert from "node:assert/strict";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { planExperiment } from "../../../core/bench/experiment.ts";
import { scoreExperiment } from "../../../core/engine/score_experiment.ts";
import { causeOf, outcomeOf } from "../../../core/bench/outcome.ts";
import { commandCandidate } from "../../../adapters/candidates/command/command.ts";
import { getJson } from "../../../core/ports/blob_store.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";
import { type CallRun, gradeAnswer } from "../../../core/engine/grade_answer.ts";
import { planRecords } from "../../helpers/plan_records.ts";
import { runInHome } from "../../helpers/engine_run.ts";

const env = (k: string) => Deno.env.get(k);

/** As WORD_CHECKER, but "loop" makes it loop for ever and "grow" makes it fill its memory. */
const HOSTAGE_CHECKER = `
export function check({ files, gold }) {
  const text = (files["/out/answer.txt"] ?? "").trim();
  if (text === "loop") for (;;) {}
  if (text === "grow") { const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length)); }
  const right = text === gold.word;
  return { checks: { "answered": text.length > 0, "right": right }, reward: right ? 1 : 0 };
}
`;

/** Knows case c<n>'s word on repetition r exactly when n + r is even; else writes `wrong`. */
function twin(name: string, wrong: string) {
  const command = "n=${DVERGR_CASE#c}; if [ $(( (n + DVERGR_REPETITION) % 2 )) = 0 ]; then " +
    `cat docs/q.txt > out/answer.txt; else echo ${wrong} > out/answer.txt; fi`;
  return commandCandidate({ name, command }, { isolation: "none", env, killGraceMs: 100 });
}

Deno.test("runExperiment() fails an answer that makes the checker loop or blow its memory, never retries it, and ranks it with its honest twin", async () => {
  const bundle = wordBundle(2, { "checker.js": HOSTAGE_CHECKER });
  // Hostages first in declared order, so a tie would favour them.
  const candidates = [twin("looper", "loop"), twin("grower", "grow"), twin("honest", "no")];
  const home = await memoryHome();
  // A short time limit keeps the looper's cells short; the honest checks take well under 1 ms.
  const pool = createCheckerPool({ workers: 2, defaultTimeoutMs: 1500, memoryBytes: 64 << 20 });
  try {
    const plan = planExperiment(bundle, candidates, { repetitions: 2 });
    const run = () =>
      runInHome(home, {
        bundle,
        plan,
        candidates,
        runner: pool,
        parallel: 2,
      });
    const first = await run();
    assert.equal(first.complete, true);
    assert.equal(first.faults, 0);
    const again = await run();
    assert.equal(again.faults, 0);

    const records = await planRecords(home.state, plan);
    assert.equal(records.length, 12);
    // One try per cell: nothing was a fault, so nothing ran again in the run or the rerun.
    assert.deepEqual(records.filter((r) => r.tryNo !== 1), []);
    for (const [name, fault] of [["looper", "timeout"], ["grower", "memory"]]) {
      const hostage = records.filter((r) => r.candidate === name && !r.passed);
      assert.equal(hostage.length, 2, name);
      for (const r of hostage) {
        assert.equal(outcomeOf(r), "failed");
        assert.equal(r.fault, null);
        assert.deepEqual(r.verdict, {
          checks: { "checker-graded?": false, "completed?": true },
          reward: 0,
        });
        assert.equal(r.failure?.kind, "checker");
        assert.ok(
          r.failure?.message.startsWith(`the checker could not grade this answer (${fault})`),
          r.failure?.message,
        );
        assert.match(causeOf(r)![1], /^checker: the checker could not grade this answer/);
      }
      // The evidence shows the answer tried twice and the reference graded in between.
      const ev = await getJson<{ checker: { tries: { fault: string }[]; control: unknown } }>(
        home.blobs,
        hostage[0].evidenceRef!,
      );
      assert.deepEqual(ev!.checker.tries.map((t) => t.fault), [fault, fault]);
      assert.deepEqual(
        (ev!.checker.control as { answer: string; run: { ok: boolean } }).answer,
        "reference",
      );
    }

    const { scorecard: card } = await scoreExperiment(home.state, plan, {
      trust: "ad-hoc",
      bundleCases: bundle.cases.length,
    });
    const byName = Object.fromEntries(card.candidates.map((c) => [c.candidate, c]));
    for (const name of ["looper", "grower", "honest"]) {
      const c = byName[name];
      assert.deepEqual([c.attempts, c.passes, c.faults], [4, 2, 0], name);
      assert.equal(c.rankedPassRate, 0.5, name);
      assert.equal(c.cost.retriedTries, 0, name);
    }
    assert.deepEqual(byName.looper.passInterval, byName.honest.passInterval);
  } finally {
    pool.close();
    await home.close();
  }
});

/** A checker call that answers from a script: one result per call, in order. */
function scripted(...runs: CallRun[]) {
  const calls: string[] = [];
  const call = (input: string) => {
    calls.push(input);
    return Promise.resolve(runs.shift() ?? { ok: true as const, ms: 1 });
  };
  return { call, calls };
}
const control = { answer: "reference" as const, input: "reference" };
const timeout: CallRun = { ok: false, fault: "timeout", message: "did not finish", ms: 9 };

Deno.test("gradeAnswer() grades at once, and calls once more a checker that faulted on the answer", async () => {
  const once = scripted({ ok: true, ms: 1 });
  assert.equal((await gradeAnswer(once.call, "answer", control)).kind, "graded");
  assert.deepEqual(once.calls, ["answer"]);
  // A machine under load made the first call slow: the second gives the verdict.
  const slow = scripted(timeout, { ok: true, ms: 1 });
  const g = await gradeAnswer(slow.call, "answer", control);
  assert.equal(g.kind, "graded");
  assert.deepEqual(g.evidence?.tries.length, 2);
  assert.deepEqual(slow.calls, ["answer", "answer"]);
});

Deno.test("gradeAnswer() fails an answer the checker cannot grade twice while it grades the reference", async () => {
  const s = scripted(timeout, timeout, { ok: true, ms: 1 });
  const g = await gradeAnswer(s.call, "answer", control);
  assert.deepEqual(s.calls, ["answer", "answer", "reference"]);
  assert.equal(g.kind, "ungradable");
  assert.equal(
    g.kind === "ungradable" && g.message,
    "the checker could not grade this answer (timeout): did not finish",
  );
});

Deno.test("gradeAnswer() keeps a fault when the checker cannot grade the reference either, or faults whatever the answer", async () => {
  const broken = scripted(timeout, timeout, timeout);
  const g = await gradeAnswer(broken.call, "answer", control);
  assert.equal(g.kind, "fault");
  assert.equal(g.evidence?.control?.answer, "reference");
  // A syntax error is the checker's alone: no second call, no control.
  const syntax = scripted({ ok: false, fault: "syntax", message: "bad", ms: 1 });
  assert.equal((await gradeAnswer(syntax.call, "answer", control)).kind, "fault");
  assert.deepEqual(syntax.calls, ["answer"]);
});

Deno.test("gradeAnswer() makes a control given as a function only when the answer faulted twice", async () => {
  let made = 0;
  const lazy = () => {
    made++;
    return control;
  };
  assert.equal(
    (await gradeAnswer(scripted({ ok: true, ms: 1 }).call, "answer", lazy)).kind,
    "graded",
  );
  assert.equal(
    (await gradeAnswer(scripted(timeout, { ok: true, ms: 1 }).call, "answer", lazy)).kind,
    "graded",
  );
  assert.equal(made, 0);
  const s = scripted(timeout, timeout, { ok: true, ms: 1 });
  assert.equal((await gradeAnswer(s.call, "answer", lazy)).kind, "ungradable");
  assert.deepEqual(s.calls, ["answer", "answer", "reference"]);
  assert.equal(made, 1);
});
