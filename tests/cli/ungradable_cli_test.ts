/**
 * An answer that makes the checker run out of memory is the candidate's failure, and the
 * cause is named where a user looks: the end-of-run JSON, the report and `dvergr show`.
 */
import assert from "node:assert/strict";
import { dvergrWithPath as dvergr } from "../helpers/cli.ts";
import { WORD_CHECKER, wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

/** WORD_CHECKER, except that the answer "grow" makes it fill its memory. */
const GROWING_CHECKER = WORD_CHECKER.replace(
  "const right",
  'if (text === "grow") { const a = []; for (;;) a.push(new Array(100000).fill(a.length)); }\n  const right',
);

Deno.test("dvergr benchmark, report and show name an answer the checker could not grade", async () => {
  const dir = await writeBundleTo(wordDataset(1, { "checker.js": GROWING_CHECKER }));
  const home = await Deno.makeTempDir();
  try {
    const r = await dvergr([
      "benchmark",
      dir,
      "--candidate",
      "grower=cmd:echo grow > out/answer.txt",
      "--home",
      home,
      "--json",
    ]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    const card = j.scorecard.candidates[0];
    assert.deepEqual([card.attempts, card.faults, card.outcomes.failed], [1, 0, 1]);
    const cause = /^checker: the checker could not grade this answer \(memory\): /;
    assert.match(j.failureCauses.grower[0].cause, cause);
    const [reports] = [...Deno.readDirSync(`${home}/reports`)];
    const report = await Deno.readTextFile(`${home}/reports/${reports.name}/report.md`);
    assert.match(report, /\| grower \| failed \| checker: the checker could not grade this answer/);
    const list = await dvergr(["show", j.experiment, "--home", home]);
    assert.match(list.out, /grower\s+c1\s+0\s+failed\s+0\.000\s+checker: the checker could not/);
    const one = await dvergr(["show", `${j.experiment}/grower/c1/0`, "--home", home]);
    assert.match(one.out, /Failure {4}checker: the checker could not grade this answer \(memory\)/);
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  }
});
