import assert from "node:assert/strict";
import { dvergrWithPath } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

const dvergr = dvergrWithPath;

/** A benchmark whose "mine" crashes on every case and "good" passes: its home and id. */
async function benchmarked() {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  const r = await dvergr([
    "benchmark",
    dir,
    "--candidate",
    "good=cmd:cat docs/q.txt > out/answer.txt; echo wrote it",
    "--candidate",
    "mine=cmd:echo working; echo no key here >&2; exit 3",
    "--home",
    home,
    "--json",
  ]);
  assert.equal(r.code, 0, r.err);
  return { home, id: JSON.parse(r.out).experiment as string };
}

Deno.test("dvergr show lists an experiment's cells with outcome, reward and cause", async () => {
  const { home, id } = await benchmarked();
  const r = await dvergr(["show", id.slice(0, 8), "--home", home]);
  assert.equal(r.code, 0, r.err);
  const lines = r.out.split("\n");
  assert.match(lines[0], new RegExp(`^Experiment ${id}: bundle words in room words, 4 cells$`));
  assert.ok(lines.some((l) => /^good\s+c1\s+0\s+passed\s+1\.000$/.test(l)), r.out);
  assert.ok(
    lines.some((l) => /^mine\s+c2\s+0\s+crashed\s+0\.000\s+exit status 3: no key here$/.test(l)),
    r.out,
  );
  assert.match(r.out, new RegExp(`One attempt in full: dvergr show ${id.slice(0, 8)}/mine/c1/0`));
  const j = JSON.parse((await dvergr(["show", id, "--home", home, "--json"])).out);
  assert.equal(j.cells.length, 4);
  assert.deepEqual(j.cells[1], {
    candidate: "mine",
    case: "c1",
    repetition: 0,
    outcome: "crashed",
    reward: 0,
    cause: "exit status 3: no key here",
    tryNo: 1,
    elapsedMs: j.cells[1].elapsedMs,
  });
});

Deno.test("dvergr show EXP/CANDIDATE/CASE/REP shows one attempt in full", async () => {
  const { home, id } = await benchmarked();
  const crash = await dvergr(["show", `${id.slice(0, 8)}/mine/c2/0`, "--home", home]);
  assert.equal(crash.code, 0, crash.err);
  assert.match(crash.out, /^Attempt mine \/ case c2 \/ repetition 0 \(try 1\)/);
  assert.match(crash.out, /Outcome {4}crashed: exit status 3: no key here/);
  assert.match(crash.out, /Process {4}exit status 3/);
  assert.match(crash.out, /stdout \(8 bytes; the tail\):\n {4}working\n/);
  assert.match(crash.out, /stderr \(12 bytes; the tail\):\n {4}no key here\n/);
  assert.match(crash.out, /FAIL {2}:right/);

  const good = JSON.parse(
    (await dvergr(["show", `${id}/good/c1/0`, "--home", home, "--json"])).out,
  );
  assert.equal(good.outcome, "passed");
  assert.deepEqual(good.captured, { "/out/answer.txt": "w1" });
  assert.equal(good.process.stdoutTail, "wrote it\n");
  assert.equal(good.verdict.reward, 1);
  assert.equal(good.cost.unpriced, false);
});

Deno.test("dvergr show names what it cannot find: an experiment, a candidate, a case", async () => {
  const { home, id } = await benchmarked();
  const none = await dvergr(["show", "ffffffff", "--home", home]);
  assert.equal(none.code, 2, none.err);
  assert.match(none.err, /No experiment "ffffffff"/);
  const cand = await dvergr(["show", `${id}/nobody/c1/0`, "--home", home]);
  assert.equal(cand.code, 2);
  assert.match(cand.err, /has no candidate "nobody"\nhint: Its candidates: "good", "mine"/);
  const kase = await dvergr(["show", `${id}/mine/c9/0`, "--home", home]);
  assert.match(kase.err, /did not run case "c9"/);
});
