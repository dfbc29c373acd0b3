import assert from "node:assert/strict";
import { join } from "node:path";
import { dvergrIn, dvergrWithPath } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { junit10Problems } from "../helpers/junit_xsd.ts";

const dvergr = dvergrWithPath;

/** Two experiments of one bundle in one home ("good" passes every case, "bad" none). */
async function twoExperiments() {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  const bench = async (...candidates: string[]) => {
    const r = await dvergr([
      "benchmark",
      dir,
      ...candidates.flatMap((c) => ["--candidate", c]),
      "--home",
      home,
      "--json",
    ]);
    assert.equal(r.code, 0, r.err);
    return JSON.parse(r.out) as { experiment: string; report: string; reportHtml: string };
  };
  const first = await bench("good=cmd:cat docs/q.txt > out/answer.txt", "builtin:noop");
  const second = await bench("bad=cmd:echo '=HYPERLINK(1)' >&2; exit 4");
  return { home, dir, first, second };
}

Deno.test("dvergr report writes an experiment's Markdown and HTML report again, byte for byte", async () => {
  const { home, first, second } = await twoExperiments();
  // The second experiment of the bundle did not overwrite the first one's reports.
  assert.notEqual(first.report, second.report);
  const md = await dvergr(["report", first.experiment.slice(0, 8), "--home", home]);
  assert.equal(md.code, 0, md.err);
  assert.equal(md.out, await Deno.readTextFile(first.report));
  const html = await dvergr(["report", second.experiment, "--home", home, "--format", "html"]);
  assert.equal(html.out, await Deno.readTextFile(second.reportHtml));
  // -o writes the file (atomically) and says where.
  const out = join(home, "again.md");
  const written = await dvergr(["report", second.experiment, "--home", home, "-o", out]);
  assert.equal(written.code, 0, written.err);
  assert.equal(written.out, "");
  assert.equal(written.err, `Wrote ${out}\n`);
  assert.equal(await Deno.readTextFile(out), await Deno.readTextFile(second.report));
  // A baseline changes the comparison, not the experiment.
  const base = await dvergr([
    "report",
    first.experiment,
    "--home",
    home,
    "--baseline",
    "builtin:noop",
  ]);
  assert.equal(base.code, 0, base.err);
  assert.match(base.out, /against the baseline, \*\*builtin:noop\*\*/);
});

Deno.test("dvergr report --format junit and csv list every cell", async () => {
  const { home, first, second } = await twoExperiments();
  const junit = await dvergr(["report", first.experiment, "--home", home, "--format", "junit"]);
  assert.equal(junit.code, 0, junit.err);
  assert.match(junit.out, /<testsuites name="dvergr benchmark words" tests="4" failures="2"/);
  assert.match(junit.out, /<testcase classname="words.good" name="case c1 repetition 0"/);
  assert.deepEqual(junit10Problems(junit.out), []);
  const csv = await dvergr(["report", second.experiment, "--home", home, "--format", "csv"]);
  assert.equal(csv.code, 0, csv.err);
  const rows = csv.out.split("\r\n");
  assert.equal(rows.at(-1), "");
  assert.match(rows[0], /^candidate,case,repetition,try,outcome,passed,reward,cause,/);
  assert.match(rows[0], /,check:answered,check:right,check:completed\?$/);
  assert.equal(rows.length, 4);
  // The candidate's stderr is in the cause.
  assert.match(rows[1], /^bad,c1,0,1,crashed,false,0,exit status 4: =HYPERLINK\(1\),/);
});

Deno.test("dvergr report refuses a bad format, a missing experiment and a directory as -o", async () => {
  const { home, first } = await twoExperiments();
  const format = await dvergr(["report", first.experiment, "--home", home, "--format", "pdf"]);
  assert.equal(format.code, 2);
  assert.match(
    format.err,
    /Cannot write a report as "pdf"\nhint: Give --format md, html, junit, csv/,
  );
  const none = await dvergr(["report", "abcdef12", "--home", home]);
  assert.equal(none.code, 2);
  assert.match(none.err, /No experiment "abcdef12" in /);
  assert.match(none.err, /dvergr experiments/);
  const dir = await dvergr(["report", first.experiment, "--home", home, "-o", home]);
  assert.equal(dir.code, 2);
  assert.match(dir.err, /--output/);
  const short = await dvergr(["report", "ab", "--home", home]);
  assert.equal(short.code, 2);
  assert.match(short.err, /at least 4 characters/);
  const baseline = await dvergr([
    "report",
    first.experiment,
    "--home",
    home,
    "--format",
    "csv",
    "--baseline",
    "x",
  ]);
  assert.equal(baseline.code, 2);
});

Deno.test("dvergr experiments lists a home's experiments newest first", async () => {
  const { home, first, second } = await twoExperiments();
  const r = await dvergr(["experiments", "--home", home]);
  assert.equal(r.code, 0, r.err);
  const lines = r.out.trimEnd().split("\n");
  assert.match(lines[0], /^experiment {2}first run {9}bundle {2}status$/);
  assert.match(
    lines[1],
    new RegExp(
      `^${
        second.experiment.slice(0, 8)
      }  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  words   complete; 1 candidates: bad$`,
    ),
  );
  assert.match(
    lines[2],
    new RegExp(`^${first.experiment.slice(0, 8)} .* complete; 2 candidates: good, builtin:noop$`),
  );
  assert.match(lines[3], new RegExp(`dvergr show ${second.experiment.slice(0, 8)} --home ${home}`));
  const json = JSON.parse((await dvergr(["experiments", "--home", home, "--json"])).out);
  assert.deepEqual(json.homes, [home]);
  assert.deepEqual(json.experiments.map((e: { experiment: string }) => e.experiment), [
    second.experiment,
    first.experiment,
  ]);
  assert.deepEqual(json.experiments[1], {
    experiment: first.experiment,
    home,
    room: "words",
    bundle: "words",
    bundleId: json.experiments[1].bundleId,
    createdAt: json.experiments[1].createdAt,
    candidates: ["good", "builtin:noop"],
    cells: 4,
    graded: 4,
    complete: true,
  });
});

Deno.test("dvergr experiments finds the homes benchmark makes in the working directory", async () => {
  const cwd = await Deno.makeTempDir();
  const empty = await dvergrIn(cwd, "experiments");
  assert.equal(empty.code, 0, empty.err);
  assert.match(empty.out, /^No home here: /);
  const dir = await writeBundleTo(wordDataset(1));
  const ran = await dvergrIn(cwd, "benchmark", dir, "--candidate", "builtin:reference", "--json");
  assert.equal(ran.code, 0, ran.err);
  const { experiment } = JSON.parse(ran.out);
  const listed = await dvergrIn(cwd, "experiments", "--json");
  const json = JSON.parse(listed.out);
  assert.deepEqual(json.homes, [join(cwd, "workflow-runs/words")]);
  assert.equal(json.experiments[0].experiment, experiment);
  assert.equal(json.experiments[0].graded, 1);
  const report = await dvergrIn(cwd, "report", experiment.slice(0, 6));
  assert.equal(report.code, 0, report.err);
  assert.match(report.out, /^# Words/);
});
