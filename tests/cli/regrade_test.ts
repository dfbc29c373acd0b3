/**
 * `dvergr regrade`: an experiment benchmarked with a lenient checker (any answer passes) is
 * graded again with a strict one from its kept evidence. The model candidate's provider (a
 * local Anthropic server) counts its requests: none during the re-grade, so no candidate
 * ran. One attempt's evidence blob is removed: that cell is listed, not graded. Another task
 * is refused (exit 2). A scripted judge counts its requests: the same requests are reused.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { readBundleDir, writeTree } from "../../adapters/files/bundle_dir.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { cellKey } from "../../core/bench/records.ts";
import { type FakeScript, startFakeAnthropic } from "../helpers/fake_providers.ts";
import { ANY_ANSWER_CHECKER, cityFiles, RIGHT_CHECKER } from "../helpers/city_bundle.ts";
import { startPostgres } from "../helpers/postgres.ts";

const RIVALS = new URL("../../examples/workflows/tool-rivals", import.meta.url).pathname;

/** A model that writes a wrong city (and a long note: its evidence is a blob file), then ends. */
const bergen: FakeScript = (t) =>
  t.n % 2 === 1
    ? {
      toolCalls: [{
        name: "write_file",
        input: {
          path: "/out/answer.edn",
          content: `{:city "Bergen" :population 709037 :note "${"x".repeat(40_000)}"}`,
        },
      }],
      usage: { input_tokens: 500, output_tokens: 50 },
    }
    : { text: "Done.", usage: { input_tokens: 600, output_tokens: 5 } };

async function dvergr(env: Record<string, string>, ...args: string[]) {
  const ctx = memoryContext({ env, cwd: await Deno.makeTempDir() });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

async function bundleDir(files: Map<string, string>, name = "city"): Promise<string> {
  const dir = join(await Deno.makeTempDir(), name);
  await writeTree(dir, files);
  return dir;
}

Deno.test("dvergr regrade grades kept evidence with a stricter checker and runs no candidate", async () => {
  const server = await startFakeAnthropic(bergen, { apiKey: "ak" });
  try {
    const env = { ANTHROPIC_API_KEY: "ak", ANTHROPIC_BASE_URL: server.url };
    const home = await Deno.makeTempDir();
    const lenient = await bundleDir(cityFiles(ANY_ANSWER_CHECKER));
    const bench = await dvergr(
      env,
      "benchmark",
      lenient,
      "--candidate",
      "builtin:reference",
      "--candidate",
      "builtin:noop",
      "--models",
      "anthropic/claude-test",
      "--repetitions",
      "2",
      "--parallel",
      "1",
      "--home",
      home,
      "--json",
    );
    assert.equal(bench.code, 0, bench.err);
    const original = JSON.parse(bench.out);
    const model = "anthropic-claude-test";
    const passes = (sc: { candidates: { candidate: string; passes: number }[] }, c: string) =>
      sc.candidates.find((x) => x.candidate === c)!.passes;
    assert.equal(passes(original.scorecard, model), 2, "the lenient checker passes Bergen");
    const asked = server.requests.length;
    assert.equal(asked, 4);

    // One attempt's evidence (a blob file: it is over 32 KiB) is removed.
    const h = await openHome(home);
    const gone = await h.state.cellRecord(original.experiment, cellKey(model, null, 1));
    await h.close();
    const ref = gone!.evidenceRef!;
    await Deno.remove(join(home, "blobs", ref.slice(0, 2), ref));

    const strict = await bundleDir(cityFiles(RIGHT_CHECKER));
    const r = await dvergr({}, "regrade", original.experiment, "--bundle", strict, "--home", home);
    assert.equal(r.code, 1, r.out + r.err); // a cell is left without a verdict
    assert.equal(server.requests.length, asked, "no candidate ran");
    assert.match(r.out, /cells re-graded from [0-9a-f-]+; no candidate ran/);
    assert.match(
      r.out,
      /^Changed verdicts: 1 passed → failed, 0 failed → passed, 0 reward changed, 4 unchanged, 1 not re-graded$/m,
    );
    assert.match(
      r.out,
      new RegExp(
        `^  ${model} / - / 0: passed \\(1\\.000\\) → failed \\(0\\.500\\)  checks: answered, city, population$`,
        "m",
      ),
    );
    assert.match(
      r.out,
      /^Not re-graded \(no verdict, counted as unfinished, not as failures\): 1 evidence gone$/m,
    );
    assert.match(
      r.out,
      new RegExp(
        `^  ${model} / - / 1: Not re-graded: the original attempt's evidence \\(blob ${ref}\\) is gone`,
        "m",
      ),
    );

    const again = await dvergr(
      {},
      "regrade",
      original.experiment,
      "--bundle",
      strict,
      "--home",
      home,
      "--json",
    );
    assert.equal(again.code, 1, again.err);
    const j = JSON.parse(again.out);
    assert.notEqual(j.experiment, original.experiment, "a new experiment");
    assert.equal(j.comparison.passedToFailed, 1);
    assert.deepEqual(j.comparison.notRegraded, { "evidence-gone": 1 });
    assert.equal(passes(j.scorecard, model), 0);
    assert.equal(passes(j.scorecard, "builtin:reference"), 2);
    // The re-graded cells keep the original attempts' usage and cost.
    const tokens = (sc: { candidates: { candidate: string; tokens: { input: number } }[] }) =>
      sc.candidates.find((x) => x.candidate === model)!.tokens.input;
    assert.equal(tokens(j.scorecard), tokens(original.scorecard));
    const report = await Deno.readTextFile(j.report);
    assert.match(report, /## Re-grading/);
    assert.match(report, /no candidate ran again/);
    assert.match(report, /they are not failures/);

    // `dvergr show` of a re-graded cell says where it came from.
    const cell = await dvergr({}, "show", `${j.experiment}/${model}/0`, "--home", home);
    assert.equal(cell.code, 0, cell.err);
    assert.match(
      cell.out,
      new RegExp(
        `^Re-graded {2}from experiment ${original.experiment} \\(try 1\\): the candidate did not run again`,
        "m",
      ),
    );

    // `dvergr report` of the re-grade compares the verifiers too.
    const rep = await dvergr({}, "report", j.experiment, "--home", home);
    assert.equal(rep.code, 0, rep.err);
    assert.match(
      rep.out,
      /## Re-grading[\s\S]*\| anthropic-claude-test \| – \| 0 \| passed \(1\.000\) \| failed \(0\.500\) \| answered, city, population \|/,
    );

    // Another task is refused, naming what differs.
    const other = cityFiles(RIGHT_CHECKER);
    other.set("workflow.edn", '{:title "City" :task "Write the capital of Sweden."}');
    other.set("fixtures/docs/q.md", "Stockholm.");
    const refused = await dvergr(
      {},
      "regrade",
      original.experiment,
      "--bundle",
      await bundleDir(other),
      "--home",
      home,
    );
    assert.equal(refused.code, 2, refused.out + refused.err);
    assert.match(
      refused.err,
      /it poses another task \(the task text \(workflow\.edn :task with its :params\); the fixtures \(fixtures\/docs\/q\.md\)\)/,
    );
  } finally {
    await server.close();
  }
});

function promptOf(t: Parameters<FakeScript>[0]): string {
  const m = (t.body.messages as { content: string | { text: string }[] }[])[0].content;
  return typeof m === "string" ? m : m.map((c) => c.text).join("");
}

const judge: FakeScript = (t) => ({
  text: promptOf(t).includes("Pizza Planet") ? "No." : "Yes.",
  usage: { input_tokens: 300, output_tokens: 8 },
});

/** tool-rivals with `edit` applied to its checker. */
async function rivals(edit: (checker: string) => string): Promise<string> {
  const dir = join(await Deno.makeTempDir(), "tool-rivals");
  const { files } = await readBundleDir(RIVALS);
  files.set("checker.js", edit(files.get("checker.js")!));
  await writeTree(dir, files);
  return dir;
}

Deno.test("dvergr regrade reuses the judge's answers to the same requests and asks only new ones", async () => {
  const server = await startFakeAnthropic(judge, { apiKey: "ak" });
  try {
    const env = { ANTHROPIC_API_KEY: "ak", ANTHROPIC_BASE_URL: server.url };
    const home = await Deno.makeTempDir();
    const bench = await dvergr(
      env,
      "benchmark",
      RIVALS,
      "--candidate",
      "builtin:reference",
      "--repetitions",
      "2",
      "--home",
      home,
      "--json",
    );
    const id = JSON.parse(bench.out).experiment;
    const first = server.requests.length;
    assert.ok(first >= 2, `the judge was asked (${first})`);

    // Another reward, the same judge requests: every answer is reused, none asked.
    const reweighted = await rivals((c) => c.replace("0.4 * (found", "0.5 * (found"));
    const r = await dvergr(env, "regrade", id, "--bundle", reweighted, "--home", home, "--json");
    assert.equal(server.requests.length, first, "no judge request was asked again");
    assert.equal(r.code, 0, r.out + r.err);
    const j = JSON.parse(r.out);
    assert.deepEqual(j.comparison.judge, { reused: first, asked: 0, billedMicros: 0 });

    // Without the key (the same judge at the same endpoint) it still works: nothing is asked.
    const other = await rivals((c) => c.replace("0.4 * (found", "0.45 * (found"));
    const keyless = await dvergr(
      { ANTHROPIC_BASE_URL: server.url },
      "regrade",
      id,
      "--bundle",
      other,
      "--home",
      home,
    );
    assert.equal(keyless.code, 0, keyless.out + keyless.err);
    assert.equal(server.requests.length, first);
    assert.match(keyless.out, /cells re-graded/, keyless.err);

    // A changed prompt is a new request: asked anew, through the judge.
    const reworded = await rivals((c) => c.replace("then one short reason.", "nothing else."));
    const n = await dvergr(env, "regrade", id, "--bundle", reworded, "--home", home, "--json");
    assert.equal(server.requests.length, 2 * first);
    const k = JSON.parse(n.out);
    assert.equal(k.comparison.judge.reused, 0);
    assert.equal(k.comparison.judge.asked, first);
    assert.equal(n.code, 0, n.out + n.err);
  } finally {
    await server.close();
  }
});

const cluster = await startPostgres();
Deno.test.afterAll(async () => await cluster?.stop());

Deno.test({
  name:
    "dvergr regrade --store re-grades an experiment of a PostgreSQL store on a machine without its room",
  ignore: cluster === null,
  async fn() {
    const url = await cluster!.database();
    const lenient = await bundleDir(cityFiles(ANY_ANSWER_CHECKER));
    const bench = await dvergr(
      {},
      "benchmark",
      lenient,
      "--candidate",
      "builtin:reference",
      "--candidate",
      "builtin:noop",
      "--home",
      await Deno.makeTempDir(),
      "--store",
      url,
      "--json",
    );
    assert.equal(bench.code, 0, bench.err);
    const id = JSON.parse(bench.out).experiment;
    const strict = await bundleDir(cityFiles(RIGHT_CHECKER));
    const r = await dvergr(
      {},
      "regrade",
      id.slice(0, 8),
      "--bundle",
      strict,
      "--home",
      await Deno.makeTempDir(),
      "--store",
      url,
      "--json",
    );
    assert.equal(r.code, 0, r.out + r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.original, id);
    assert.equal(j.comparison.unchanged, 2);
    const shown = await dvergr({}, "show", j.experiment.slice(0, 8), "--store", url, "--json");
    assert.equal(shown.code, 0, shown.err);
  },
});
