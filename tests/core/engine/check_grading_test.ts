/**
 * loadCheckGrading() (core/engine/check.ts): a checker.js bundle's answer is graded in one
 * sandbox call where loadCheck() and gradeAnswer() made two, with the same outcome: the
 * same verdict, the same load problems, and the bundle's problems before an answer's error.
 */
import assert from "node:assert/strict";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { gradeAnswer, loadCheck, loadCheckGrading } from "../../../core/engine/check.ts";
import type { CheckerRunner } from "../../../core/checker.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import { RECALL_CHECKER, recallBundle } from "../../helpers/bundles.ts";

/** `runner` with its check() calls counted. */
function counted(runner: CheckerRunner): CheckerRunner & { calls: number } {
  const c = {
    calls: 0,
    check: (...args: Parameters<CheckerRunner["check"]>) => {
      c.calls++;
      return runner.check(...args);
    },
    judgeRequests: runner.judgeRequests.bind(runner),
    generate: runner.generate.bind(runner),
    close: runner.close.bind(runner),
  };
  return c;
}

const ANSWER = { files: { "/out/list.md": "Wato" }, caseId: null };

/** Both ways on a fresh count: loadCheck() then gradeAnswer(), and loadCheckGrading(). */
async function bothWays(pool: CheckerRunner, files: Map<string, string>) {
  const fb = { name: "recall", files };
  const before = counted(pool);
  const shape = await loadCheck(before, fb);
  const verdict = shape.ok ? await gradeAnswer(shape.bundle, before, ANSWER) : undefined;
  const now = counted(pool);
  const got = await loadCheckGrading(
    now,
    fb,
    {},
    (bundle: Bundle) => gradeAnswer(bundle, now, ANSWER),
  );
  return { shape, verdict, before: before.calls, got, now: now.calls };
}

/** The run without its time, which differs between calls. */
const runOf = (v?: { run: { ms: number } }) => v && { ...v.run, ms: 0 };

Deno.test("loadCheckGrading: one call for a checker that loads, the same verdict and load problems as loadCheck() and gradeAnswer()", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const ok = await bothWays(pool, recallBundle());
    assert.equal(ok.before, 2);
    assert.equal(ok.now, 1);
    assert.ok(ok.got.shape.ok);
    assert.deepEqual(runOf(ok.got.graded), runOf(ok.verdict));
    assert.equal(ok.got.graded!.run.ok, true);

    for (
      const bad of ["export function check( {", 'throw new Error("at load");\n' + RECALL_CHECKER]
    ) {
      const r = await bothWays(pool, recallBundle({ "checker.js": bad }));
      assert.equal(r.shape.ok, false);
      assert.deepEqual(r.got.shape, r.shape);
      assert.equal(r.got.graded, undefined);
      assert.equal(r.now, 1);
    }
  } finally {
    pool.close();
  }
});

Deno.test("loadCheckGrading: a run that failed after loading asks the load call too, and an answer's error comes after the bundle's problems", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const throws = "export function check() { throw new Error('in check'); }";
    const r = await bothWays(pool, recallBundle({ "checker.js": throws }));
    assert.ok(r.got.shape.ok);
    assert.equal(r.now, 2);
    assert.equal(r.got.graded!.run.ok, false);
    assert.deepEqual(runOf(r.got.graded), runOf(r.verdict));

    const fail = () => Promise.reject(new Error("no answer"));
    const broken = { name: "recall", files: recallBundle({ "checker.js": "export function (" }) };
    const got = await loadCheckGrading(pool, broken, {}, fail);
    assert.deepEqual(got.shape, await loadCheck(pool, broken));
    const fine = { name: "recall", files: recallBundle() };
    await assert.rejects(loadCheckGrading(pool, fine, {}, fail), /no answer/);
  } finally {
    pool.close();
  }
});
