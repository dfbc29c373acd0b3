/**
 * examples/workflows/tool-rivals (fetched pages, a judge, a frozen web) with its checker
 * rewritten in Clojure: it calibrates, and grades every calibration answer and asks the
 * same judge requests as the checker.js it replaces.
 */
import assert from "node:assert/strict";
import { readBundleDir } from "../../../core/io/bundle_dir.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { checkerInputFor } from "../../../core/bundle/checker_input.ts";
import { calibrate } from "../../../core/calibrate/calibrate.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import type { AnswerFacts } from "../../../core/bundle/clojure_input.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";

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
  } finally {
    pool.close();
  }
});
