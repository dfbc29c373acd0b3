/**
 * examples/workflows/tool-rivals (fetched pages, a judge, a frozen web) with its checker
 * rewritten in Clojure: it calibrates, and grades every calibration answer and every
 * automatic mutation of the reference, and asks the same judge requests, as the checker.js
 * it replaces.
 */
import assert from "node:assert/strict";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { checkerInputFor } from "../../../core/bundle/checker_input.ts";
import { calibrate } from "../../../core/calibrate/calibrate.ts";
import { referenceMutations } from "../../../core/calibrate/mutations.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import type { AnswerFacts } from "../../../core/bundle/clojure_input.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { judgeAttempt } from "../../../core/engine/attempt_effects.ts";
import type { Judge } from "../../../core/ports/judge.ts";
import { NO_USAGE } from "../../../core/bench/candidate.ts";

const EXAMPLE = new URL("../../../examples/workflows/tool-rivals", import.meta.url).pathname;
const CHECKER = new URL("../../fixtures/clojure/rivals_checker.clj", import.meta.url);

Deno.test("tool-rivals with a Clojure checker calibrates and grades like its checker.js", async () => {
  const js = parseBundle(await readBundleDir(EXAMPLE));
  const fb = await readBundleDir(EXAMPLE);
  fb.files.delete("checker.js");
  fb.files.set("checker.clj", await Deno.readTextFile(CHECKER));
  const clj = parseBundle(fb);
  assert.equal(clj.checkerFile, "checker.clj");
  const pool = createCheckerPool({ workers: 1 });
  try {
    const cal = await calibrate(clj, pool);
    assert.deepEqual(cal.problems, []);
    const c = clj.calibration!;
    const answers: AnswerFacts[] = [
      { files: c.reference!, fetched: c.fetched, judgements: c.judgements },
      ...Object.values(c.damaged).map((d) => ({
        files: d.files,
        fetched: d.fetched ?? c.fetched,
        judgements: d.judgements ?? c.judgements,
      })),
      { files: { "/out/rivals.edn": "not edn [" } },
      // The automatic mutations too: duplicated finds, lists for vectors, reordered keys…
      ...referenceMutations(js).flatMap((m) =>
        m.applies ? [{ files: m.files, fetched: c.fetched, judgements: c.judgements }] : []
      ),
    ];
    const grade = async (b: Bundle, a: AnswerFacts) => {
      const run = await pool.check(b.checker, checkerInputFor(b, a));
      assert.ok(run.ok, JSON.stringify(run));
      return run.verdict;
    };
    for (const a of answers) {
      const [want, got] = [await grade(js, a), await grade(clj, a)];
      assert.deepEqual(got.checks, want.checks);
      assert.ok(Math.abs(got.reward - want.reward) < 1e-9, `${got.reward} vs ${want.reward}`);
    }
    const asked = async (b: Bundle) => {
      const r = await pool.judgeRequests(
        b.checker,
        checkerInputFor(b, { files: c.reference!, fetched: c.fetched }),
      );
      assert.ok(r.ok, JSON.stringify(r));
      return r.requests;
    };
    const want = await asked(js);
    assert.equal(want.length, 2);
    assert.deepEqual(await asked(clj), want);

    // As a run does it: the judge is asked the checker's requests, then the checker grades
    // with the judge's answers added to the same input.
    const judge: Judge = {
      identity: { model: "scripted" },
      preflight() {},
      ask: (prompt) =>
        Promise.resolve({
          ok: true,
          answer: prompt.includes("Bolt") ? "Yes, drills." : "No.",
          usage: NO_USAGE,
          billedMicros: 0,
          listMicros: null,
        }),
    };
    const graded = async (b: Bundle) => {
      const input = checkerInputFor(b, { files: c.reference!, fetched: c.fetched });
      const { judgements: _, ...forJudge } = input;
      const control = { answer: "reference" as const, input: forJudge };
      const judged = await judgeAttempt(b, judge, pool, forJudge, { control });
      assert.ok(judged.ok === true, JSON.stringify(judged));
      input.judgements = judged.judgements;
      const run = await pool.check(b.checker, input);
      assert.ok(run.ok, JSON.stringify(run));
      return { judgements: judged.judgements, verdict: run.verdict };
    };
    const jsRun = await graded(js);
    assert.deepEqual(jsRun.judgements, { "bolt hardware": "Yes, drills.", "nail co": "No." });
    assert.equal(jsRun.verdict.checks["all-relevant?"], false);
    assert.deepEqual(await graded(clj), jsRun);
  } finally {
    pool.close();
  }
});
