/**
 * Model candidates through `dvergr benchmark` against local protocol servers: a model id the
 * registry does not know (named with its provider prefix) runs with its cost unknown; a
 * rejected key is a provider fault that is not retried; a malformed 200 is a provider fault.
 */
import assert from "node:assert/strict";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { SUM_CHECKER, writeBundleTo } from "../helpers/dataset_bundle.ts";
import {
  type FakeScript,
  startFakeAnthropic,
  startFakeOpenAI,
  summingAgent,
} from "../helpers/fake_providers.ts";

function sumFiles(): Map<string, string> {
  return new Map([
    [
      "workflow.edn",
      '{:title "Sum" :task "Add up the numbers under /docs and write {:total N} to /out/answer.edn." :capture ["/out"] :timeout-ms 20000}',
    ],
    ["checker.js", SUM_CHECKER],
    ["cases/a/fixtures/docs/numbers.txt", "1 2 3"],
    ["cases/a/gold.edn", "{:total 6}"],
    ["cases/b/fixtures/docs/numbers.txt", "10 20 12"],
    ["cases/b/gold.edn", "{:total 42}"],
    [
      "calibration.edn",
      '{:case "a" :reference {"/out/answer.edn" "{:total 6}"} :damaged {:wrong {:files {"/out/answer.edn" "{:total 7}"} :loses [:total-right]}}}',
    ],
  ]);
}

/** The summing agent for cells run one at a time: four calls per attempt. */
const sequential: FakeScript = (t) => ({
  ...summingAgent()({ ...t, n: ((t.n - 1) % 4) + 1 }),
  usage: t.body.system !== undefined
    ? { input_tokens: 1000, output_tokens: 100 }
    : { prompt_tokens: 1000, completion_tokens: 100 },
});

async function benchmark(models: string, env: Record<string, string>) {
  const dir = await writeBundleTo(sumFiles(), "sum");
  const home = await Deno.makeTempDir();
  const ctx = memoryContext({ env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env } });
  const code = await runMain(
    ["benchmark", dir, "--models", models, "--parallel", "1", "--home", home, "--json"],
    ctx,
  );
  const out = ctx.out.join("");
  return { code, json: out ? JSON.parse(out) : null, err: ctx.err.join(""), home };
}

Deno.test("dvergr benchmark runs provider-prefixed model ids the registry does not know, cost unknown", async () => {
  const openai = await startFakeOpenAI(sequential, { apiKey: "ok" });
  const anthropic = await startFakeAnthropic(sequential, { apiKey: "ak" });
  try {
    const { code, json, err, home } = await benchmark(
      "openai/gpt-5.2,anthropic/claude-sonnet-5",
      {
        OPENAI_API_KEY: "ok",
        OPENAI_BASE_URL: openai.url,
        ANTHROPIC_API_KEY: "ak",
        ANTHROPIC_BASE_URL: anthropic.url,
      },
    );
    assert.equal(code, 0, err);
    // The provider got the model name without its prefix.
    assert.ok(openai.requests.every((r) => (r.body as { model: string }).model === "gpt-5.2"));
    assert.ok(
      anthropic.requests.every((r) => (r.body as { model: string }).model === "claude-sonnet-5"),
    );
    for (const c of json.scorecard.candidates) {
      assert.equal(c.passes, 2, c.candidate);
      assert.equal(c.cost.unpricedAttempts, 2);
      assert.equal(c.cost.known, false);
      assert.equal(c.cost.listPerPass, null);
      assert.equal(c.tokens.input, 8000); // tokens are counted
      assert.equal(c.tokens.output, 800);
    }
    const report = await Deno.readTextFile(json.report);
    const row = report.split("\n").find((l) => l.startsWith("| openai-gpt-5.2 | 2 |"))!;
    assert.ok(!row.includes("$0.0000"), row);
    assert.match(row, /\| 1\.000 \| cost unknown \| cost unknown \| 4400 \|/);
    assert.match(report, /The cost of .*openai-gpt-5\.2.* is unknown:/);
    assert.match(report, /<home>\/models\.edn/);

    // dvergr show gives the model's transcript and tool calls.
    const ctx = memoryContext({ env: {} });
    assert.equal(
      await runMain(
        ["show", `${json.experiment}/openai-gpt-5.2/a/0`, "--home", home, "--json"],
        ctx,
      ),
      0,
      ctx.err.join(""),
    );
    const view = JSON.parse(ctx.out.join(""));
    assert.equal(view.outcome, "passed");
    assert.equal(view.model.calls, 4);
    assert.equal(view.model.toolCalls, 3);
    const calls = view.model.transcript.flatMap((e: { toolCalls?: { name: string }[] }) =>
      (e.toolCalls ?? []).map((c) => c.name)
    );
    assert.deepEqual(calls, ["list_files", "read_file", "write_file"]);
    assert.deepEqual(view.captured, { "/out/answer.edn": "{:total 6}" });
    assert.equal(view.cost.unpriced, true);
    const text = memoryContext({ env: {} });
    await runMain(["show", `${json.experiment}/openai-gpt-5.2/a/0`, "--home", home], text);
    assert.match(text.out.join(""), /Cost {7}unknown \(the model has no prices in the registry\)/);
    assert.match(text.out.join(""), /assistant calls write_file /);
  } finally {
    await openai.close();
    await anthropic.close();
  }
});

Deno.test("dvergr benchmark says cost unknown in the end-of-run line of an unpriced model", async () => {
  const openai = await startFakeOpenAI(sequential, { apiKey: "ok" });
  try {
    const dir = await writeBundleTo(sumFiles(), "sum");
    const home = await Deno.makeTempDir();
    const ctx = memoryContext({
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        OPENAI_API_KEY: "ok",
        OPENAI_BASE_URL: openai.url,
      },
    });
    const code = await runMain(
      ["benchmark", dir, "--models", "openai/gpt-5.2", "--parallel", "1", "--home", home],
      ctx,
    );
    assert.equal(code, 0, ctx.err.join(""));
    const line = ctx.out.join("").split("\n").find((l) => l.startsWith("openai-gpt-5.2"))!;
    assert.ok(line.endsWith("passed 2/2  cost unknown (no prices in the model registry)"), line);
  } finally {
    await openai.close();
  }
});

Deno.test("dvergr benchmark makes a rejected key (401) a provider fault it does not retry", async () => {
  const anthropic = await startFakeAnthropic(sequential, { apiKey: "right" });
  try {
    const { code, json } = await benchmark("haiku", {
      ANTHROPIC_API_KEY: "wrong",
      ANTHROPIC_BASE_URL: anthropic.url,
    });
    assert.equal(code, 1);
    // One request per cell: neither the HTTP layer nor the engine tried again.
    assert.equal(anthropic.requests.length, 2);
    const causes = json.failureCauses["claude-haiku-4-5"];
    assert.equal(causes.length, 1);
    assert.equal(causes[0].outcome, "fault");
    assert.equal(causes[0].count, 2);
    assert.match(causes[0].cause, /^provider auth: .*HTTP 401: invalid x-api-key/);
    assert.match(causes[0].example.message, /rejected the key in ANTHROPIC_API_KEY/);
  } finally {
    await anthropic.close();
  }
});

Deno.test("dvergr benchmark calls a malformed 200 answer a provider fault, not could-not-run", async () => {
  const openai = await startFakeOpenAI(() => ({ raw: '{"nonsense": true}' }), { apiKey: "ok" });
  try {
    const { code, json } = await benchmark("gpt-4.1-mini", {
      OPENAI_API_KEY: "ok",
      OPENAI_BASE_URL: openai.url,
    });
    assert.equal(code, 1);
    const causes = json.failureCauses["gpt-4.1-mini"];
    assert.equal(causes.length, 1);
    assert.match(causes[0].cause, /^provider malformed-response: /);
    assert.ok(!JSON.stringify(json).includes("could-not-run"));
  } finally {
    await openai.close();
  }
});

Deno.test("dvergr benchmark reports a model stopped by its budget as 'stopped by budget'", async () => {
  const anthropic = await startFakeAnthropic(sequential, { apiKey: "ak" });
  try {
    const dir = await writeBundleTo(sumFiles(), "sum");
    const home = await Deno.makeTempDir();
    const ctx = memoryContext({
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        ANTHROPIC_API_KEY: "ak",
        ANTHROPIC_BASE_URL: anthropic.url,
      },
    });
    // $0.0001 cannot pay for one call's worst case (4,096 output tokens at $5/M = $0.02).
    const args = ["benchmark", dir, "--models", "haiku", "--budget-dollars", "0.0001"];
    const code = await runMain([...args, "--parallel", "1", "--home", home, "--json"], ctx);
    assert.equal(code, 0, ctx.err.join(""));
    const json = JSON.parse(ctx.out.join(""));
    assert.equal(json.scorecard.candidates[0].outcomes.budget, 2);
    const causes = json.failureCauses["claude-haiku-4-5"];
    assert.equal(causes.length, 1);
    assert.equal(causes[0].outcome, "budget");
    assert.equal(causes[0].count, 2);
    assert.match(causes[0].cause, /^stopped by budget: \$0\.0000 spent of \$0\.0001/);
    assert.equal(anthropic.requests.length, 0);
    const report = await Deno.readTextFile(json.report);
    assert.match(report, /\| claude-haiku-4-5 \| stopped by budget \| stopped by budget: /);
  } finally {
    await anthropic.close();
  }
});
