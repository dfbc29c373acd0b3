/**
 * Generated worlds from the command line (and the same benchmark over MCP): benchmark
 * --cases N --split train twice (the same experiment, the same verdicts), check reporting a
 * generator's problems, calibrate naming the generated world it graded, check --answer in a
 * generated world, and the refusals of generated options on other bundles.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { memoryContext } from "../../cli/context.ts";
import { runMain } from "../../main.ts";
import { readBundleDir, writeTree } from "../../adapters/files/bundle_dir.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { callOp } from "../../core/ops/registry.ts";
import { catalogBenchmark } from "../../core/ops/catalog_run.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { testOpContext } from "../helpers/op_context.ts";

const EXAMPLE = new URL("../../examples/workflows/ledger-totals", import.meta.url).pathname;

async function dvergr(...args: string[]) {
  const ctx = memoryContext({ env: { DVERGR_ISOLATION: "none" } });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

/** The example with some files replaced (null: removed), in a new directory. */
async function variant(o: Record<string, string | null>): Promise<string> {
  const { files } = await readBundleDir(EXAMPLE);
  for (const [p, t] of Object.entries(o)) t === null ? files.delete(p) : files.set(p, t);
  const dir = join(await Deno.makeTempDir(), "ledger-totals");
  await writeTree(dir, files);
  return dir;
}

interface BenchmarkJson {
  experiment: string;
  scorecard: { candidates: { candidate: string; passes: number; meanReward: number }[] };
}

Deno.test("benchmark --cases 5 --split train twice: the same experiment and verdicts", async () => {
  const home = await Deno.makeTempDir({ prefix: "dvergr-generated-" });
  const args = [
    "benchmark",
    EXAMPLE,
    "--candidate",
    "builtin:reference",
    "--candidate",
    "builtin:noop",
    "--cases",
    "5",
    "--split",
    "train",
    "--home",
    home,
    "--json",
  ];
  const first = await dvergr(...args);
  assert.equal(first.code, 0, first.out + first.err);
  const again = await dvergr(...args);
  assert.equal(again.code, 0, again.out + again.err);
  const a = JSON.parse(first.out) as BenchmarkJson;
  const b = JSON.parse(again.out) as BenchmarkJson;
  assert.equal(b.experiment, a.experiment);
  const verdicts = (j: BenchmarkJson) =>
    j.scorecard.candidates.map((c) => [c.candidate, c.passes, c.meanReward]);
  assert.deepEqual(verdicts(b), verdicts(a));
  assert.deepEqual(verdicts(a), [["builtin:reference", 5, 1], ["builtin:noop", 0, 0]]);

  // The cells are the generated worlds.
  const show = await dvergr("show", a.experiment, "--home", home, "--json");
  assert.equal(show.code, 0, show.err);
  for (let i = 0; i < 5; i++) assert.match(show.out, new RegExp(`gen-train-000${i}`));
  assert.doesNotMatch(show.out, /gen-test-/);
  // The report again from the home is the one the benchmark wrote ("All 5 cases … ran").
  const again5 = join(await Deno.makeTempDir(), "report.md");
  const report = await dvergr("report", a.experiment, "--home", home, "-o", again5);
  assert.equal(report.code, 0, report.err);
  const kept = await Deno.readTextFile((JSON.parse(first.out) as { report: string }).report);
  assert.equal(await Deno.readTextFile(again5), kept);
  assert.match(kept, /All 5 cases of the bundle ran/);
  // A generator makes as many worlds as asked: the planner puts no bound on the cases.
  const plan = await dvergr("plan", a.experiment, "--half-width", "0.2", "--home", home, "--json");
  assert.equal(plan.code, 0, plan.err);
  assert.equal((JSON.parse(plan.out) as { casesAvailable: number | null }).casesAvailable, null);

  // Another split is another experiment; the same over a fresh home resumes nothing but
  // finds the same id.
  const test = await dvergr(...args.map((x) => x === "train" ? "test" : x));
  assert.equal(test.code, 0, test.err);
  assert.notEqual((JSON.parse(test.out) as BenchmarkJson).experiment, a.experiment);
  const fresh = await dvergr(
    ...args.map((x) => x === home ? join(home, "other") : x),
  );
  assert.equal((JSON.parse(fresh.out) as BenchmarkJson).experiment, a.experiment);
});

Deno.test("catalog_benchmark takes cases and split: the CLI's experiment over MCP", async () => {
  const { files } = await readBundleDir(EXAMPLE);
  const dirs: string[] = [];
  for (let i = 0; i < 2; i++) {
    const dir = await Deno.makeTempDir({ prefix: "dvergr-generated-room-" });
    const home = await openHome(dir);
    try {
      await home.rooms.createRoom("books");
      const w = new Map<string, string | null>();
      for (const [p, t] of files) w.set(`workflows/ledger/${p}`, t);
      await home.rooms.writeFiles("books", w, "Ledger bundle");
    } finally {
      await home.close();
    }
    dirs.push(dir);
  }
  const cli = await dvergr(
    "benchmark",
    "books/ledger",
    "--home",
    dirs[0],
    "--candidate",
    "builtin:reference",
    "--cases",
    "3",
    "--split",
    "train",
    "--json",
  );
  assert.equal(cli.code, 0, cli.out + cli.err);
  const home = await openHome(dirs[1]);
  const pool = createCheckerPool({ workers: 1 });
  try {
    const mcp = await callOp(catalogBenchmark, testOpContext(home, pool), {
      room: "books",
      name: "ledger",
      candidates: ["builtin:reference"],
      cases: 3,
      split: "train",
    }) as { experiment: string; complete: boolean };
    assert.equal(mcp.experiment, (JSON.parse(cli.out) as BenchmarkJson).experiment);
    assert.equal(mcp.complete, true);
    await assert.rejects(
      callOp(catalogBenchmark, testOpContext(home, pool), {
        room: "books",
        name: "ledger",
        candidates: ["builtin:reference"],
        cases: 3,
        split: "dev",
      }),
      /split/,
    );
  } finally {
    pool.close();
    await home.close();
  }
});

Deno.test("--cases, --split and --seed on a bundle without a generator: exit 2 with a hint", async () => {
  const single = new URL("../../examples/workflows/meeting-actions", import.meta.url).pathname;
  const home = await Deno.makeTempDir();
  const base = ["benchmark", single, "--candidate", "builtin:noop", "--home", home];
  const cases = await dvergr(...base, "--cases", "3");
  assert.equal(cases.code, 2, cases.err);
  assert.match(cases.err, /Cannot take 3 cases of bundle "meeting-actions": it is one world/);
  assert.match(cases.err, /hint: Leave out --cases/);
  const split = await dvergr(...base, "--split", "train");
  assert.equal(split.code, 2);
  assert.match(split.err, /only generated worlds have splits and seeds/);
  const bad = await dvergr(...base, "--split", "dev");
  assert.equal(bad.code, 2);
  assert.match(bad.err, /Cannot use --split "dev": it is not one of train, test/);
  const none = await dvergr("benchmark", EXAMPLE, "--candidate", "builtin:noop", "--home", home);
  assert.equal(none.code, 2);
  assert.match(none.err, /without the number of worlds to generate/);
  assert.match(none.err, /hint: Give --cases N \[--split train\|test\]/);
});

Deno.test("check reports a generator's problems in the problem list, exit 2", async () => {
  const ok = await dvergr("check", EXAMPLE);
  assert.equal(ok.code, 0, ok.out + ok.err);
  assert.match(ok.out, /Cases {2}generated by generator\.js/);
  const cases: [string, RegExp][] = [
    [
      "export function generate() {\n  return JSON.parse('{');\n}",
      /generator\.js line 2(, column \d+)?: world gen-train-0000: generator\.js's generate threw SyntaxError/,
    ],
    [
      `export function generate() {
  const t0 = Date.now();
  while (Date.now() === t0) {}
  return { files: { "/docs/t.txt": String(Date.now()) }, gold: { expected: { rows: 1, total: 1 } } };
}`,
      /generator\.js: world gen-train-0000: generate answered the same request twice with different worlds \(file "\/docs\/t\.txt" differs\)/,
    ],
    [
      `export function generate() { return { files: { "/run/x": "y" }, gold: 1 }; }`,
      /generator\.js: world gen-train-0000: generate returned a world that cannot be made: files: "\/run\/x" is under \/run/,
    ],
    [
      `export function generate() { return { files: { "/docs/a": "y" } }; }`,
      /generator\.js: world gen-train-0000: generator\.js's generate returned no world: gold: missing/,
    ],
    ["export const generate = 1;", /generator\.js exports `generate` but it is a number/],
  ];
  for (const [source, problem] of cases) {
    const r = await dvergr("check", await variant({ "generator.js": source }));
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(r.out, problem);
    // Both splits are tried: a generator failing on each is listed for each.
    if (!/different worlds/.test(String(problem))) assert.match(r.out, /gen-test-0000/);
  }
  const json = await dvergr(
    "check",
    await variant({ "generator.js": "export function generate() { throw 1; }" }),
    "--json",
  );
  assert.equal(json.code, 2);
  const report = JSON.parse(json.out) as { problems: { file: string; message: string }[] };
  assert.deepEqual(report.problems.map((p) => p.file), ["generator.js", "generator.js"]);
});

Deno.test("calibrate grades against the generated world calibration.edn names, and says which", async () => {
  const cal = await dvergr("calibrate", EXAMPLE);
  assert.equal(cal.code, 0, cal.out + cal.err);
  assert.match(cal.out, /^ {2}world gen-test-0000 \(made by generator\.js\)$/m);
  const json = await dvergr("calibrate", EXAMPLE, "--json");
  assert.equal((JSON.parse(json.out) as { case: string }).case, "gen-test-0000");

  // The same reference against another world does not hold, and the output names that world.
  const { files } = await readBundleDir(EXAMPLE);
  const other = await variant({
    "calibration.edn": files.get("calibration.edn")!.replaceAll("gen-test-0000", "gen-train-0002"),
  });
  const wrong = await dvergr("calibrate", other);
  assert.equal(wrong.code, 1, wrong.out + wrong.err);
  assert.match(wrong.out, /world gen-train-0002 \(made by generator\.js\)/);
  assert.match(wrong.out, /the reference fails/);

  // check --answer grades in the generated world it names.
  const answer = await Deno.makeTempDir();
  await writeTree(answer, new Map([["out/answer.edn", "{:rows 16 :total 645.78}"]]));
  const right = await dvergr("check", EXAMPLE, "--answer", answer);
  assert.equal(right.code, 0, right.out + right.err);
  assert.match(right.out, /case gen-test-0000/);
  assert.match(right.out, /reward 1\.000/);
  const elsewhere = await dvergr("check", EXAMPLE, "--answer", answer, "--case", "gen-train-0001");
  assert.equal(elsewhere.code, 0);
  assert.match(elsewhere.out, /case gen-train-0001/);
  assert.doesNotMatch(elsewhere.out, /reward 1\.000/);
  const unknown = await dvergr("check", EXAMPLE, "--answer", answer, "--case", "invoice-1");
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /"invoice-1" names no generated world/);
});

Deno.test("generator.clj: check and calibrate the Clojure example, and its problems at their line", async () => {
  const clj = new URL("../../examples/workflows/ledger-totals-clj", import.meta.url).pathname;
  const check = await dvergr("check", clj);
  assert.equal(check.code, 0, check.out + check.err);
  assert.match(check.out, /Cases {2}generated by generator\.clj/);
  const cal = await dvergr("calibrate", clj);
  assert.equal(cal.code, 0, cal.out + cal.err);
  assert.match(cal.out, /^ {2}world gen-test-0000 \(made by generator\.clj\)$/m);
  const { files } = await readBundleDir(clj);
  files.set("generator.clj", '(ns g)\n(defn generate [_]\n  (throw (ex-info "no ledger" {})))');
  const dir = join(await Deno.makeTempDir(), "ledger-clj");
  await writeTree(dir, files);
  const broken = await dvergr("check", dir);
  assert.equal(broken.code, 2, broken.out + broken.err);
  assert.match(
    broken.out,
    /generator\.clj line 3, column \d+: world gen-train-0000: generator\.clj's generate threw: no ledger/,
  );
});
