/**
 * Automatic calibration against checkers of known weakness: one that rewards any
 * non-empty answer, one that reads the answer's text instead of its data, one that is
 * right; and a Clojure checker that asks for a vector where a list is the same data.
 */
import assert from "node:assert/strict";
import { calibrate } from "../../../core/calibrate/calibrate.ts";
import { judgeMutations, type MutationResult } from "../../../core/calibrate/auto.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import type { CheckerRun } from "../../../core/checker.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import {
  ANY_ANSWER_CHECKER,
  cityFiles,
  RIGHT_CHECKER,
  TEXT_CHECKER,
} from "../../helpers/city_bundle.ts";

async function autoCalibrate(checker: string, file = "checker.js") {
  const pool = createCheckerPool({ workers: 1 });
  try {
    return await calibrate(parseBundle({ name: "city", files: cityFiles(checker, file) }), pool, {
      auto: {},
    });
  } finally {
    pool.close();
  }
}

Deno.test("calibrate() with auto fails a checker that rewards any non-empty answer: no margin", async () => {
  const r = await autoCalibrate(ANY_ANSWER_CHECKER);
  assert.equal(r.ok, false);
  assert.equal(r.auto!.margin, 0);
  assert.equal(r.auto!.closest, "task-as-answer");
  assert.deepEqual(r.auto!.brittle, []);
  assert.deepEqual(r.problems, [
    "margin 0.000 is under the minimum 0.200: task-as-answer (the task text as every answer file) still earns 1.000, the reference 1.000",
  ]);
});

Deno.test("calibrate() with auto fails a whitespace-sensitive checker: brittle mutations", async () => {
  const r = await autoCalibrate(TEXT_CHECKER);
  assert.equal(r.ok, false);
  assert.deepEqual(r.auto!.brittle, [
    "whitespace",
    "key-order",
    "trailing-newline",
    "integer-as-float",
  ]);
  assert.ok(r.auto!.margin! >= 0.5, "it does notice damage");
  assert.ok(
    r.problems.includes(
      "brittle mutation whitespace (other whitespace and indentation (EDN: one entry per line; text: lines indented)): the reward moved from 1.000 to 0.000",
    ),
    r.problems.join("\n"),
  );
});

Deno.test("calibrate() with auto passes a right checker, without hand-written damage", async () => {
  const r = await autoCalibrate(RIGHT_CHECKER);
  assert.deepEqual(r.problems, []);
  assert.equal(r.ok, true);
  assert.equal(r.auto!.margin, 0.5);
  const graded = r.auto!.mutations.filter((m) => m.notApplicable === undefined);
  assert.ok(graded.every((m) => m.ok === true), JSON.stringify(graded));
  assert.deepEqual(
    r.auto!.mutations.filter((m) => m.notApplicable !== undefined).map((m) => m.name),
    ["entry-dropped", "entry-duplicated", "other-case", "vectors-as-lists"],
  );
});

Deno.test("calibrate() with auto runs a checker.clj and names its brittle vector? test", async () => {
  const clj = `(ns city.checker (:require [clojure.edn :as edn]))
(defn check [{:keys [files gold]}]
  (let [a (try (edn/read-string (get files "/out/answer.edn" "")) (catch :default _ nil))
        ok (and (vector? (:tags a)) (= (:city a) (:city gold)) (== (:population a) (:population gold)))]
    {:checks {:right ok} :reward (if ok 1 0)}))`;
  const pool = createCheckerPool({ workers: 1 });
  try {
    const bundle = parseBundle({
      name: "city",
      files: new Map([
        ["workflow.edn", '{:title "City" :task "Write the capital of Norway."}'],
        ["checker.clj", clj],
        ["gold.edn", '{:city "Oslo" :population 709037}'],
        ["fixtures/docs/q.md", "Oslo."],
        [
          "calibration.edn",
          '{:reference {"/out/answer.edn" "{:city \\"Oslo\\" :population 709037 :tags [\\"capital\\"]}"}}',
        ],
      ]),
    });
    const r = await calibrate(bundle, pool, { auto: {} });
    assert.equal(r.auto!.referenceReward, 1);
    assert.deepEqual(r.auto!.brittle, ["vectors-as-lists"], JSON.stringify(r.auto!.mutations));
    assert.equal(r.ok, false);
  } finally {
    pool.close();
  }
});

const verdict = (reward: number): CheckerRun => ({
  ok: true,
  verdict: { checks: { a: reward === 1 }, reward },
  ms: 1,
});
const graded = (
  name: string,
  kind: "damaging" | "invariance",
  run: CheckerRun,
): MutationResult => ({
  name,
  kind,
  description: name,
  run,
});

Deno.test("judgeMutations() measures the margin to the highest damaging reward, rounding aside", () => {
  // 1 − (0.5·0.75 + 0.3·0.75 + 0.2) is 0.19999999999999996 in doubles: a margin of 0.2.
  const close = 0.5 * 0.75 + 0.3 * 0.75 + 0.2;
  const r = judgeMutations(verdict(1), [
    graded("cut", "damaging", verdict(0)),
    graded("dropped", "damaging", verdict(close)),
    graded("spaces", "invariance", verdict(0.1 + 0.2 + 0.7)),
  ], 0.2);
  assert.deepEqual(r.problems, []);
  assert.equal(r.closest, "dropped");
  assert.ok(Math.abs(r.margin! - 0.2) < 1e-9);
  const strict = judgeMutations(verdict(1), [graded("dropped", "damaging", verdict(close))], 0.3);
  assert.match(strict.problems[0], /^margin 0\.200 is under the minimum 0\.300: dropped/);
});

Deno.test("judgeMutations() with minimum 0 still fails a damage that does not lower the reward", () => {
  const r = judgeMutations(verdict(1), [graded("task", "damaging", verdict(1))], 0);
  assert.equal(r.ok, false);
  assert.equal(r.mutations[0].ok, false);
  assert.match(r.problems[0], /^margin 0\.000 is under the minimum 0\.000/);
});

Deno.test("judgeMutations() reports a checker fault on a mutation as a problem", () => {
  const fault: CheckerRun = { ok: false, fault: "threw", message: "boom", ms: 1 };
  const r = judgeMutations(verdict(1), [
    graded("cut", "damaging", fault),
    graded("empty", "damaging", verdict(0)),
  ]);
  assert.deepEqual(r.problems, ["mutation cut: the checker faulted (threw): boom"]);
  assert.equal(r.margin, 1);
});

Deno.test("judgeMutations() names a reference that no damaging mutation applies to", () => {
  const r = judgeMutations(verdict(1), [
    { name: "no-answer", kind: "damaging", description: "no answer file", notApplicable: "none" },
  ]);
  assert.equal(r.ok, false);
  assert.equal(r.margin, null);
  assert.deepEqual(r.problems, [
    "no damaging mutation applies to the reference: nothing shows the checker notices damage",
  ]);
});
