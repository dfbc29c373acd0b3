import assert from "node:assert/strict";
import { dvergrWithPath } from "../helpers/cli.ts";
import { fileURLToPath } from "node:url";
import { casesNote, HELP } from "../../cli/benchmark.ts";
import { scorecardEssentials } from "../helpers/scorecard.ts";
import { openKvStateStore } from "../../adapters/store/kv/state_store.ts";
import { dirBlobStore } from "../../adapters/store/kv/blob_store.ts";
import { gitRoomStore } from "../../adapters/rooms/git/room_store.ts";
import type { Scorecard } from "../../core/bench/scorecard.ts";
import { wordBundle, wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { DVERGR_PERMISSIONS } from "../../core/permissions.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const dvergr = dvergrWithPath;

/** Right for odd cases, wrong for even ones: a deterministic agent with mixed results. */
const AGENT =
  'agent=cmd:sleep 0.1; case "$DVERGR_CASE" in c1|c3|c5) cat docs/q.txt > out/answer.txt;; ' +
  "*) echo wrong > out/answer.txt;; esac";

Deno.test("dvergr benchmark prints the bundle, one line per candidate and the report path", async () => {
  const dir = await writeBundleTo(wordDataset(3));
  const home = await Deno.makeTempDir();
  const args = [
    "benchmark",
    dir,
    "--candidate",
    "builtin:reference",
    "--candidate",
    AGENT,
    "--repetitions",
    "2",
    "--home",
    home,
  ];
  const first = await dvergr(args);
  assert.equal(first.code, 0, first.err);
  const lines = first.out.trimEnd().split("\n");
  assert.match(lines[0], /^Bundle words [0-9a-f-]{36}$/);
  assert.equal(
    lines[1],
    `${
      "builtin:reference".padEnd(40)
    } reward 0.333  passed 2/6  billed $0.0000  list price $0.0000`,
  );
  assert.equal(
    lines[2],
    `${"agent".padEnd(40)} reward 0.667  passed 4/6  billed $0.0000  list price $0.0000`,
  );
  // Neither candidate passes c2 (the reference writes c1's word everywhere); both pass c1.
  assert.equal(
    lines[3],
    "Item analysis: 1 case possibly broken (no candidate passes): c2; " +
      "1 case saturated (every candidate passes): c1 (the report says more)",
  );
  // Each experiment has its reports: a new one of the same bundle does not overwrite them.
  const id = first.err.match(/Experiment ([0-9a-f-]{36}): /)![1];
  assert.equal(lines[4], `Report: ${home}/reports/${id}/report.md`);
  assert.equal(lines[5], `HTML report: ${home}/reports/${id}/report.html`);
  const report = await Deno.readTextFile(`${home}/reports/${id}/report.md`);
  assert.match(report, /^# Words\n/);
  assert.match(report, /## Paired comparison/);
  const html = await Deno.readTextFile(`${home}/reports/${id}/report.html`);
  assert.match(html, /^<!doctype html>/i);
  assert.match(html, /<svg/);
  assert.match(first.err, /Experiment [0-9a-f-]{36}: 12 cells\n/);
  // The bundle was committed into its room, once.
  const rooms = gitRoomStore(`${home}/rooms`);
  assert.deepEqual(await rooms.listRooms(), ["words"]);
  assert.equal((await rooms.readFiles("words", "workflows/words")).size, 10);
  const again = await dvergr(args);
  assert.equal(again.code, 0);
  assert.match(again.err, /12 cells, 12 kept from earlier runs/);
  assert.equal(again.out, first.out);
  assert.equal((await rooms.log("words")).length, 2);
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr benchmark --json prints the scorecard; a changed bundle is a new experiment", async () => {
  const files = wordDataset(2);
  const dir = await writeBundleTo(files);
  const home = await Deno.makeTempDir();
  const args = ["benchmark", dir, "--candidate", "builtin:noop", "--home", home, "--json"];
  const a = JSON.parse((await dvergr(args)).out);
  assert.equal(a.complete, true);
  assert.equal(a.scorecard.format, "dvergr-scorecard/1");
  assert.equal(a.scorecard.candidates[0].attempts, 2);
  assert.equal(a.scorecard.trust, "ad-hoc");
  await Deno.writeTextFile(`${dir}/cases/c2/gold.edn`, '{:word "changed"}');
  await Deno.remove(`${dir}/fixtures/docs/shared.txt`);
  const b = JSON.parse((await dvergr(args)).out);
  assert.notEqual(b.experiment, a.experiment);
  assert.notEqual(b.bundleId, a.bundleId);
  // The first experiment's reports are still there, beside the new one's.
  assert.equal(a.report, `${home}/reports/${a.experiment}/report.md`);
  assert.equal(b.report, `${home}/reports/${b.experiment}/report.md`);
  assert.match(await Deno.readTextFile(a.report), /builtin:noop/);
  assert.match(await Deno.readTextFile(b.reportHtml), /^<!doctype html>/i);
  // The room holds the new version, without the removed file.
  const room = await gitRoomStore(`${home}/rooms`).readFiles("words", "workflows/words");
  assert.equal(room.get("workflows/words/cases/c2/gold.edn"), '{:word "changed"}');
  assert.equal(room.has("workflows/words/fixtures/docs/shared.txt"), false);
  const state = await openKvStateStore(`${home}/state.kv`, dirBlobStore(`${home}/blobs`));
  assert.equal((await state.listExperiments("words")).length, 2);
  state.close();
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr benchmark exits 1 when cells did not finish and says how to resume", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  const r = await dvergr([
    "benchmark",
    dir,
    "--candidate",
    "x=cmd:echo boom > out/answer.txt",
    // The checker throws on this answer: a fault of the checker, tried again.
    "--param",
    "explode=true",
    "--home",
    home,
  ]);
  assert.equal(r.code, 1);
  assert.match(
    r.out,
    /2 of 2 cells did not finish \(2 faulted\); run the same command again to resume them/,
  );
  assert.match(r.err, /fault: x case c1 rep 0: checker threw: .*\(trying again\)/);
  assert.match(
    await Deno.readTextFile(r.out.match(/^Report: (.*)$/m)![1]),
    /\*\*Incomplete:\*\*/,
  );
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr benchmark of a bundle whose checker does not load stops its candidates and refuses it as check does, exit 2", async () => {
  const dir = await writeBundleTo(
    wordDataset(2, { "checker.js": "export function check({ files }) {\n  return {;\n}\n" }),
  );
  const home = await Deno.makeTempDir();
  try {
    // Without the refusal each attempt would run to the bundle's time limit (20 s) and be
    // recorded (timed out), then grading would fault.
    const r = await dvergr(["benchmark", dir, "--candidate", "x=cmd:sleep 60", "--home", home]);
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(
      r.err,
      /error\[BUNDLE_INVALID\]: Bundle "words" is not well formed: checker\.js line 2, column \d+: syntax error: /,
    );
    assert.match(r.err, /hint: Fix checker\.js/);
    // Not told as an interruption of the user's, and no scorecard of faults.
    assert.doesNotMatch(r.err, /interrupted/);
    assert.doesNotMatch(r.out, /reward|Report:/);
    // The attempts were stopped in flight: nothing of them is recorded.
    const state = await openKvStateStore(`${home}/state.kv`, dirBlobStore(`${home}/blobs`));
    try {
      for (const exp of await state.listExperiments()) {
        assert.deepEqual(await state.cellRecords(exp.id), []);
      }
    } finally {
      state.close();
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("dvergr benchmark refuses a command whose program is not there with exit 2, before any cell", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  const r = await dvergr([
    "benchmark",
    dir,
    "--candidate",
    "x=cmd:no-such-agent-for-dvergr --go",
    "--home",
    home,
  ]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /error\[CANDIDATE_INVALID\]: .*program "no-such-agent-for-dvergr" is not on/);
  assert.match(r.err, /hint: Check the program's spelling/);
  assert.doesNotMatch(r.out, /cells/);
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr benchmark refuses bad input with exit 2", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const cases: [string[], RegExp][] = [
    [["benchmark", dir], /without candidates/],
    [["benchmark"], /needs a bundle/],
    [["benchmark", `${dir}-missing`, "--candidate", "builtin:noop"], /no such directory/],
    [["benchmark", dir, "--candidate", "builtin:noop", "--cases", "0"], /--cases "0"/],
    [["benchmark", dir, "--candidate", "builtin:noop", "--case-ids", "c9"], /no such case/],
    [["benchmark", dir, "--candidate", "builtin:oracle"], /no builtin "oracle"/],
    [["benchmark", dir, "--candidate", "builtin:noop", "--baseline", "x"], /baseline "x"/],
    [
      ["benchmark", dir, "--candidate", "builtin:noop", "--budget-dollars", "lots"],
      /--budget-dollars/,
    ],
    [["benchmark", dir, "--candidate", "./agent.sh --fast"], /NAME=cmd:COMMAND/],
    // A kind's word without its colon is named, with the form it needs.
    [
      ["benchmark", dir, "--candidate", "mine=cmd"],
      /error\[CANDIDATE_INVALID\]: Cannot use candidate "mine=cmd": "cmd" needs a colon: NAME=cmd:COMMAND\nhint: Write NAME=cmd:COMMAND, e\.g\. `mine=cmd:python3 my_agent\.py`/,
    ],
    [
      ["benchmark", dir, "--candidate", "mine=cmd python3 my_agent.py"],
      /"cmd" needs a colon/,
    ],
    [["benchmark", dir, "--candidate", "cc=agent"], /"agent" needs a colon: NAME=agent:CLI:MODEL/],
    [["benchmark", dir, "--candidate", "x=frob"], /no kind of candidate reads it/],
  ];
  const home = await Deno.makeTempDir();
  for (const [args, re] of cases) {
    const r = await dvergr([...args, "--home", home]);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.err, re, args.join(" "));
  }
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr benchmark --check calibrates only and prints the EDN result", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const r = await dvergr(["benchmark", dir, "--check"]);
  assert.equal(r.code, 0);
  assert.match(r.out, /^Bundle words [0-9a-f-]{36}\n\{:ok\? true,? :problems \[\]\}\n$/);
});

Deno.test("dvergr benchmark --help lists candidates and --param K=V", () => {
  assert.match(HELP, /--candidate SPEC/);
  assert.match(HELP, /--param K=V/);
});

Deno.test({
  name:
    "dvergr benchmark killed with SIGKILL at random moments resumes to the uninterrupted scorecard",
  sanitizeResources: false,
  async fn() {
    const dir = await writeBundleTo(wordDataset(6));
    const args = (home: string) => [
      "run",
      ...DVERGR_PERMISSIONS,
      `${ROOT}main.ts`,
      "benchmark",
      dir,
      "--candidate",
      "builtin:reference",
      "--candidate",
      AGENT,
      "--repetitions",
      "3",
      "--parallel",
      "4",
      "--home",
      home,
      "--json",
    ];
    const spawn = (home: string) =>
      new Deno.Command(Deno.execPath(), {
        args: args(home),
        cwd: ROOT,
        stdout: "piped",
        stderr: "piped",
      }).spawn();

    // Uninterrupted.
    const clean = await Deno.makeTempDir();
    const whole = await spawn(clean).output();
    assert.equal(whole.code, 0, new TextDecoder().decode(whole.stderr));
    const expected = JSON.parse(new TextDecoder().decode(whole.stdout)).scorecard as Scorecard;

    // Killed mid-run three times: after the first progress line, plus a seeded random delay.
    const home = await Deno.makeTempDir();
    let seed = 20261001;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const seen: number[] = [];
    for (let k = 0; k < 3; k++) {
      const child = spawn(home);
      const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      const deadline = Date.now() + 30_000;
      while (!/progress: |kept from earlier runs/.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      await new Promise((r) => setTimeout(r, Math.floor(random() * 400)));
      try {
        child.kill("SIGKILL");
      } catch {
        // It finished first.
      }
      reader.cancel().catch(() => {});
      await child.stdout.cancel().catch(() => {});
      const status = await child.status;
      assert.ok(status.signal === "SIGKILL" || status.code === 0);
      const state = await openKvStateStore(`${home}/state.kv`, dirBlobStore(`${home}/blobs`));
      const [exp] = await state.listExperiments();
      seen.push(exp ? (await state.cellRecords(exp.id)).length : 0);
      state.close();
    }
    assert.ok(seen.some((n) => n > 0 && n < 36), `records after each kill: ${seen}`);

    const final = await spawn(home).output();
    assert.equal(final.code, 0, new TextDecoder().decode(final.stderr));
    const resumed = JSON.parse(new TextDecoder().decode(final.stdout));
    assert.deepEqual(scorecardEssentials(resumed.scorecard), scorecardEssentials(expected));
    assert.equal(resumed.experiment, expected.experimentId);

    // No cell lost or doubled: one latest record per cell, and one verdict per cell in the history.
    const state = await openKvStateStore(`${home}/state.kv`, dirBlobStore(`${home}/blobs`));
    const cells = await state.cellRecords(resumed.experiment);
    assert.equal(cells.length, 36);
    const verdicts = new Map<string, number>();
    for (const r of await state.attemptHistory(resumed.experiment)) {
      const key = `${r.candidate}|${r.caseId}|${r.repetition}`;
      if (r.verdict) verdicts.set(key, (verdicts.get(key) ?? 0) + 1);
    }
    assert.equal(verdicts.size, 36);
    assert.ok([...verdicts.values()].every((n) => n === 1));
    state.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(clean, { recursive: true });
  },
});

/** Two agents that log every attempt they make to `log` (a file outside the worlds). */
function loggingAgents(log: string): string[] {
  return ["a", "b"].flatMap((name) => [
    "--candidate",
    `${name}=cmd:sleep 0.3; echo "${name} $DVERGR_CASE $DVERGR_REPETITION" >> ${log}; ` +
    'case "$DVERGR_CASE" in c1|c3) cat docs/q.txt > out/answer.txt;; *) echo no > out/answer.txt;; esac',
  ]);
}

function spawnBenchmark(dir: string, home: string, log: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...DVERGR_PERMISSIONS,
      `${ROOT}main.ts`,
      "benchmark",
      dir,
      ...loggingAgents(log),
      "--repetitions",
      "2",
      "--parallel",
      "4",
      "--home",
      home,
      "--json",
    ],
    cwd: ROOT,
    env: { DVERGR_ISOLATION: "none" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** How many times each cell's agent ran, from the agents' log. */
async function runsPerCell(log: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const line of (await Deno.readTextFile(log)).trim().split("\n")) {
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return counts;
}

Deno.test({
  name: "dvergr benchmark twice at once on one home runs every cell once between the two",
  sanitizeResources: false,
  async fn() {
    const dir = await writeBundleTo(wordDataset(4));
    const home = await Deno.makeTempDir();
    const log = `${home}/agent-runs.log`;
    const [one, two] = await Promise.all(
      [0, 1].map(() => spawnBenchmark(dir, home, log).output()),
    );
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    assert.equal(one.code, 0, text(one.stderr));
    assert.equal(two.code, 0, text(two.stderr));
    const a = JSON.parse(text(one.stdout));
    const b = JSON.parse(text(two.stdout));
    assert.equal(a.complete, true);
    assert.deepEqual(scorecardEssentials(a.scorecard), scorecardEssentials(b.scorecard));
    assert.equal(a.scorecard.gradedCells, 16);
    // 2 agents × 4 cases × 2 repetitions: each agent ran once per cell, in one process or the other.
    const runs = await runsPerCell(log);
    assert.equal(runs.size, 16);
    assert.deepEqual([...runs.values()].filter((n) => n !== 1), []);
    const state = await openKvStateStore(`${home}/state.kv`, dirBlobStore(`${home}/blobs`));
    const history = await state.attemptHistory(a.experiment);
    assert.equal(history.length, 16);
    assert.ok(history.every((r) => r.tryNo === 1 && r.verdict !== null));
    state.close();
    await Deno.remove(home, { recursive: true });
  },
});

Deno.test({
  name:
    "dvergr benchmark finishes every cell when the other process on its home is killed with SIGKILL mid-run",
  sanitizeResources: false,
  async fn() {
    const dir = await writeBundleTo(wordDataset(4));
    const home = await Deno.makeTempDir();
    const log = `${home}/agent-runs.log`;
    const first = spawnBenchmark(dir, home, log);
    const second = spawnBenchmark(dir, home, log);
    // Kill the first once it has recorded some cells (a progress line), with more in flight.
    const reader = first.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    const deadline = Date.now() + 60_000;
    while (!/progress: /.test(seen) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    assert.match(seen, /progress: /);
    first.kill("SIGKILL");
    reader.cancel().catch(() => {});
    await first.stdout.cancel().catch(() => {});
    assert.equal((await first.status).signal, "SIGKILL");

    const t0 = performance.now();
    const out = await second.output();
    const waitedMs = performance.now() - t0;
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, err);
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(result.complete, true);
    assert.equal(result.scorecard.gradedCells, 16);
    // The dead process ran on this host: its cells were taken at once, without waiting for
    // their 30 s leases to run out.
    assert.ok(waitedMs < 25_000, `${waitedMs} ms: it waited for a dead process's leases`);
    const state = await openKvStateStore(`${home}/state.kv`, dirBlobStore(`${home}/blobs`));
    const verdicts = new Map<string, number>();
    for (const r of await state.attemptHistory(result.experiment)) {
      const key = `${r.candidate}|${r.caseId}|${r.repetition}`;
      if (r.verdict) verdicts.set(key, (verdicts.get(key) ?? 0) + 1);
    }
    assert.equal(verdicts.size, 16);
    assert.ok([...verdicts.values()].every((n) => n === 1));
    // Only the attempts in flight when the first process died ran twice.
    const twice = [...(await runsPerCell(log)).values()].filter((n) => n > 1).length;
    assert.ok(twice <= 4, `${twice} cells ran twice`);
    state.close();
    await Deno.remove(home, { recursive: true });
  },
});

Deno.test("dvergr benchmark --cases N says so when the bundle has fewer cases", async () => {
  const dir = await writeBundleTo(wordDataset(3));
  const home = await Deno.makeTempDir();
  const r = await dvergr([
    "benchmark",
    dir,
    "--candidate",
    "builtin:noop",
    "--cases",
    "9",
    "--home",
    home,
  ]);
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.err,
    /^note: --cases 9 asks for more cases than bundle words has: it has 3, so all 3 run$/m,
  );
  assert.match(r.err, /Experiment [0-9a-f-]{36}: 3 cells/);
  const fewer = await dvergr([
    "benchmark",
    dir,
    "--candidate",
    "builtin:noop",
    "--cases",
    "2",
    "--home",
    home,
  ]);
  assert.doesNotMatch(fewer.err, /note:/);
  assert.equal(
    casesNote(
      wordBundle(0, {
        "gold.edn": '{:word "w1"}',
        "calibration.edn": '{:reference {"/out/answer.txt" "w1"} :damaged {}}',
      }),
      4,
    ),
    null, // refused before it is planned (tests/cli/generator_cli_test.ts)
  );
  assert.equal(casesNote(wordBundle(2), undefined), null);
});
