import assert from "node:assert/strict";
import { dvergrWithPath } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { parse, type TestSuites } from "junit2json";

const dvergr = dvergrWithPath;

/**
 * A dataset whose case c3 has a wrong gold word (no candidate can pass it), and candidates
 * that work, crash (a script the sandbox cannot see; exit 7), hang past the time limit and
 * write garbage.
 */
async function run(json: boolean) {
  const dir = await writeBundleTo(wordDataset(3, { "cases/c3/gold.edn": '{:word "zzz"}' }));
  const home = await Deno.makeTempDir();
  const args = [
    "benchmark",
    dir,
    "--candidate",
    "good=cmd:cat docs/q.txt > out/answer.txt",
    "--candidate",
    "mine=cmd:sh my_agent.sh",
    "--candidate",
    "seven=cmd:echo step one >&2; echo bad input >&2; exit 7",
    "--candidate",
    "hang=cmd:sleep 30",
    "--candidate",
    "garbage=cmd:echo garbage > out/answer.txt",
    "--timeout-ms",
    "1500",
    "--home",
    home,
    "--junit",
    `${home}/junit.xml`,
    ...(json ? ["--json"] : []),
  ];
  return { ...(await dvergr(args)), home };
}

Deno.test("dvergr benchmark says in one line when every attempt of a candidate crashed", async () => {
  const { code, out, err, home } = await run(false);
  assert.equal(code, 0, err);
  const lines = out.split("\n");
  const mine = lines.find((l) => l.startsWith("mine: "));
  assert.ok(mine, out);
  assert.match(
    mine!,
    /^mine: every attempt \(3\) crashed; first cause: exit status 2: .*my_agent\.sh: No such file\. Hint: /,
  );
  assert.match(lines.find((l) => l.startsWith("seven: "))!, /exit status 7: bad input/);
  assert.match(lines.find((l) => l.startsWith("hang "))!, /\(3 timed out\)$/);
  assert.ok(!lines.some((l) => l.startsWith("good: ")), out);
  assert.ok(
    lines.includes(
      "Item analysis: 1 case possibly broken (no candidate passes): c3 (the report says more)",
    ),
    out,
  );

  const report = await Deno.readTextFile(out.match(/^Report: (.*)$/m)![1]);
  assert.match(report, /## What went wrong/);
  assert.match(report, /\| seven \| crashed \| exit status 7: bad input \| 3 \|/);
  assert.match(report, /\| hang \| timed out \| Stopped after 1500 ms \| 3 \|/);
  assert.match(report, /\| garbage \| failed \| checks failed: :right \| 3 \|/);
  assert.match(report, /```text\nstep one\nbad input\n```/);
  assert.match(report, /Case `c3`: no candidate passed it/);
  assert.match(report, /\| c3 \| 0\.000 \(0\/1\) \|/);

  // --junit: one test case per cell, read back by a JUnit parser.
  const junit = await parse(await Deno.readTextFile(`${home}/junit.xml`)) as TestSuites;
  assert.equal(junit.tests, 15);
  assert.equal(junit.errors, 0);
  assert.equal(junit.failures, 13); // good passes c1 and c2; every other cell fails
  const hang = junit.testsuite!.find((s) => s.name === "words hang")!;
  assert.equal(hang.testcase![0].failure![0].type, "timed-out");
});

Deno.test("dvergr benchmark --json carries outcomes, causes, per-case results and items", async () => {
  const { code, out, err } = await run(true);
  assert.equal(code, 0, err);
  const j = JSON.parse(out);
  const byName = Object.fromEntries(
    j.scorecard.candidates.map((c: { candidate: string }) => [c.candidate, c]),
  );
  assert.equal(byName.mine.outcomes.crashed, 3);
  assert.equal(byName.hang.outcomes["timed-out"], 3);
  assert.equal(byName.good.outcomes.passed, 2);
  assert.equal(byName.good.outcomes.failed, 1);
  assert.equal(j.failureCauses.seven[0].count, 3);
  assert.equal(j.failureCauses.seven[0].example.exitCode, 7);
  assert.equal(j.failureCauses.seven[0].example.stderrTail, "step one\nbad input");
  assert.deepEqual(j.failureCauses.good.map((c: { cause: string }) => c.cause), [
    "checks failed: :right",
  ]);
  assert.deepEqual(j.broken.map((b: { candidate: string }) => b.candidate), ["mine", "seven"]);
  assert.equal(j.cases, 3);
  assert.deepEqual(j.caseIds, ["c1", "c2", "c3"]);
  assert.equal(j.bundleCases, 3);
  const c3 = j.items.find((i: { caseId: string }) => i.caseId === "c3");
  assert.equal(c3.flag, "broken");
  assert.equal(c3.passRate, 0);
  const c1 = j.caseResults.find((r: { caseId: string }) => r.caseId === "c1");
  assert.deepEqual(c1.cells[0], { candidate: "good", reward: 1, passes: 1, graded: 1, faults: 0 });
});
