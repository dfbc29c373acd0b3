/**
 * Full benchmarks of model candidates through the engine: `--models` specs resolved by the
 * candidate parser, cells run in real worlds, graded by the checker in QuickJS, recorded in
 * Deno KV; providers are local protocol servers with rate limits and failures.
 */
import { planRecords, withRecords } from "../../../helpers/plan_records.ts";
import assert from "node:assert/strict";
import { parseBundle } from "../../../../core/bundle/parse.ts";
import { candidateKinds } from "../../../../adapters/candidates/registry.ts";
import type { CandidateRequest, CandidateSpec } from "../../../../core/ports/candidate_kind.ts";

/** The experiment's candidates as the registry resolves them. */
async function resolveCandidates(specs: CandidateSpec[], req: CandidateRequest) {
  return (await candidateKinds.resolve(specs, req)).candidates;
}
import { planExperiment } from "../../../../core/bench/experiment.ts";
import { runExperiment } from "../../../../core/engine/run_experiment.ts";
import { prepareBenchmark } from "../../../../core/engine/benchmark.ts";
import { memoryHome } from "../../../../adapters/store/memory/home.ts";
import { memoryBlobStore } from "../../../../adapters/store/memory/blob_store.ts";
import { openKvStateStore } from "../../../../adapters/store/kv/state_store.ts";
import { createCheckerPool } from "../../../../sandbox/checker_pool.ts";
import {
  type FakeScript,
  startFakeAnthropic,
  startFakeOpenAI,
  summingAgent,
} from "../../../helpers/fake_providers.ts";
import { SUM_CHECKER } from "../../../helpers/dataset_bundle.ts";
import { composeServices } from "../../../../adapters/compose.ts";

function sumBundle() {
  return parseBundle({
    name: "sum",
    files: new Map([
      [
        "workflow.edn",
        '{:title "Sum" :task "Add up the numbers in the file under /docs and write {:total N} to /out/answer.edn." :capture ["/out"] :timeout-ms 20000}',
      ],
      ["checker.js", SUM_CHECKER],
      ["cases/a/fixtures/docs/numbers.txt", "1 2 3"],
      ["cases/a/gold.edn", "{:total 6}"],
      ["cases/b/fixtures/docs/numbers.txt", "10, 20 and 12"],
      ["cases/b/gold.edn", "{:total 42}"],
      ["cases/c/fixtures/docs/numbers.txt", "7 plus 8"],
      ["cases/c/gold.edn", "{:total 15}"],
      [
        "calibration.edn",
        '{:case "a" :reference {"/out/answer.edn" "{:total 6}"} :damaged {:wrong {:files {"/out/answer.edn" "{:total 7}"} :loses [:total-right]}}}',
      ],
    ]),
  });
}

Deno.test("runExperiment() benchmarks API models end to end, with costs to the microdollar and a resume that asks no model twice", async () => {
  const bundle = sumBundle();
  const anthropicUsage = { input_tokens: 1000, output_tokens: 100 };
  let anthropicCalls = 0;
  // Anthropic: every 3rd request is rate limited once (retry-after 0), the rest follow the summing agent.
  const anthropicScript: FakeScript = (t) => {
    anthropicCalls++;
    if (anthropicCalls % 3 === 0) {
      return {
        http: 429,
        body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
        headers: { "retry-after": "0" },
      };
    }
    return { ...summingAgent()({ ...t, n: step(t) }), usage: anthropicUsage };
  };
  // OpenAI: overloaded whenever the case's file says "10, 20 and 12", until healed.
  let healed = false;
  const openaiUsage = {
    prompt_tokens: 2000,
    completion_tokens: 100,
    prompt_tokens_details: { cached_tokens: 1500 },
  };
  const openaiScript: FakeScript = (t) => {
    if (!healed && t.toolResults.some((r) => r.content.includes("10, 20 and 12"))) {
      return {
        http: 503,
        body: '{"error":{"message":"overloaded"}}',
        headers: { "retry-after": "0" },
      };
    }
    return { ...summingAgent()({ ...t, n: step(t) }), usage: openaiUsage };
  };
  const anthropic = await startFakeAnthropic(anthropicScript, { apiKey: "ak" });
  const openai = await startFakeOpenAI(openaiScript, { apiKey: "ok" });
  const blobs = memoryBlobStore();
  const state = await openKvStateStore(":memory:", blobs);
  const runner = createCheckerPool({ workers: 1 });
  const worldsDir = await Deno.makeTempDir({ prefix: "dvergr-worlds-" });
  try {
    const env = (k: string) =>
      ({
        ANTHROPIC_API_KEY: "ak",
        ANTHROPIC_BASE_URL: anthropic.url,
        OPENAI_API_KEY: "ok",
        OPENAI_BASE_URL: openai.url,
      } as Record<string, string>)[k];
    const candidates = await resolveCandidates(
      ["haiku", "gpt-4.1-mini"].map(candidateKinds.model),
      {
        bundle,
        env,
        isolation: "none",
        named: new Map(),
      },
    );
    assert.deepEqual(candidates.map((c) => c.name), ["claude-haiku-4-5", "gpt-4.1-mini"]);
    const plan = planExperiment(bundle, candidates, { budgetMicros: 500_000 });
    const run = async (cands = candidates) =>
      await withRecords(
        state,
        plan,
        await runExperiment({
          services: composeServices(),
          state,
          blobs,
          worldsDir,
          bundle,
          plan,
          candidates: cands,
          runner,
          room: "test",
          trust: "ad-hoc",
          parallel: 2,
        }),
      );

    const first = await run();
    assert.equal(first.total, 6);
    assert.equal(first.complete, false);
    assert.equal(first.faults, 1);
    const byCell = (records: typeof first.records, cand: string, kase: string) =>
      records.find((r) => r.candidate === cand && r.caseId === kase)!;
    for (const kase of ["a", "b", "c"]) {
      const r = byCell(first.records, "claude-haiku-4-5", kase);
      assert.equal(r.status, "completed");
      assert.equal(r.passed, true, `haiku on ${kase}`);
      // 4 answered calls × (1000 × $1/M + 100 × $5/M); the 429s are not billed.
      assert.equal(r.billedMicros, 6000);
      assert.equal(r.listMicros, null);
      assert.deepEqual(r.usage, { input: 4000, output: 400, cacheRead: 0, cacheWrite: 0 });
    }
    assert.ok(anthropic.requests.length > 12, "some requests were rate limited and retried");
    const faulted = byCell(first.records, "gpt-4.1-mini", "b");
    assert.equal(faulted.status, "fault");
    assert.equal(faulted.verdict, null);
    assert.equal(faulted.tryNo, 2, "the engine retried the faulted cell once within the run");
    assert.match(faulted.fault!.message, /gave up after 6 tries; last: HTTP 503: overloaded/);
    const ok = byCell(first.records, "gpt-4.1-mini", "a");
    assert.equal(ok.passed, true);
    // 4 calls × (500 × 0.4 + 1500 × 0.1 + 100 × 1.6) µ$
    assert.equal(ok.billedMicros, 2040);

    // The rerun asks no model again for a finished cell: only case b of gpt-4.1-mini runs.
    healed = true;
    const anthropicBefore = anthropic.requests.length;
    const openaiBefore = openai.requests.length;
    const second = await run();
    assert.equal(second.complete, true);
    assert.equal(second.kept, 5);
    assert.equal(anthropic.requests.length, anthropicBefore);
    assert.equal(openai.requests.length - openaiBefore, 4);
    const healedCell = byCell(second.records, "gpt-4.1-mini", "b");
    assert.equal(healedCell.passed, true);
    assert.equal(healedCell.tryNo, 3);
    assert.equal(second.records.reduce((n, r) => n + r.billedMicros, 0), 3 * 6000 + 3 * 2040);

    // A third run with everything finished sends nothing at all.
    const third = await run();
    assert.equal(third.kept, 6);
    assert.equal(anthropic.requests.length, anthropicBefore);
    assert.equal(openai.requests.length - openaiBefore, 4);
  } finally {
    runner.close();
    state.close();
    await anthropic.close();
    await openai.close();
    await Deno.remove(worldsDir, { recursive: true });
  }
});

Deno.test("prepareBenchmark() refuses a model benchmark without its key, before any cell", async () => {
  const bundle = sumBundle();
  const anthropic = await startFakeAnthropic(summingAgent(), {});
  const home = await memoryHome();
  try {
    const env = (k: string) => ({ ANTHROPIC_BASE_URL: anthropic.url } as Record<string, string>)[k];
    await assert.rejects(
      prepareBenchmark({
        services: composeServices(),
        bundle: { name: bundle.name, files: bundle.files },
        specs: ["haiku"].map(candidateKinds.model),
        home,
        env,
        isolation: "none",
      }),
      /ANTHROPIC_API_KEY is not set/,
    );
    assert.equal(anthropic.requests.length, 0);
    const candidates = await resolveCandidates(["haiku"].map(candidateKinds.model), {
      bundle,
      env,
      isolation: "none",
      named: new Map(),
    });
    assert.deepEqual(await home.state.cellRecords(planExperiment(bundle, candidates).id), []);
  } finally {
    await home.close();
    await anthropic.close();
  }
});

Deno.test("runExperiment() scores a budget-stopped model attempt as it stands", async () => {
  const bundle = sumBundle();
  // The first call writes the right answer, later ones only look; a budget for two calls stops it.
  const script: FakeScript = (t) => ({
    toolCalls: [
      step(t) === 1
        ? { name: "write_file", input: { path: "/out/answer.edn", content: "{:total 6}" } }
        : { name: "list_files", input: { dir: "/docs" } },
    ],
    usage: { input_tokens: 1000, output_tokens: 200 },
  });
  const anthropic = await startFakeAnthropic(script, {});
  const home = await Deno.makeTempDir({ prefix: "dvergr-home-" });
  await Deno.writeTextFile(
    `${home}/models.edn`,
    '{:models {"tight" {:provider :anthropic :max-tokens 1000 :prices {:input 1 :output 5}}}}',
  );
  const blobs = memoryBlobStore();
  const state = await openKvStateStore(":memory:", blobs);
  const runner = createCheckerPool({ workers: 1 });
  const worldsDir = await Deno.makeTempDir({ prefix: "dvergr-worlds-" });
  try {
    const env = (k: string) =>
      ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: anthropic.url } as Record<string, string>)[k];
    const candidates = await resolveCandidates(["tight"].map(candidateKinds.model), {
      bundle,
      env,
      isolation: "none",
      named: new Map(),
      homeDir: home,
    });
    const plan = planExperiment(bundle, candidates, { caseIds: ["a"], budgetMicros: 10_000 });
    const result = await runExperiment({
      services: composeServices(),
      state,
      blobs,
      worldsDir,
      bundle,
      plan,
      candidates,
      runner,
      room: "test",
      trust: "ad-hoc",
    });
    assert.equal(result.complete, true);
    const [r] = await planRecords(state, plan);
    assert.equal(r.status, "budget");
    assert.equal(r.billedMicros, 4000);
    assert.notEqual(r.verdict, null, "a budget stop is graded, not a fault");
    assert.equal(r.verdict!.checks["completed?"], false);
    assert.equal(r.verdict!.checks["total-right"], true);
    assert.equal(r.verdict!.reward, 1);
    assert.equal(anthropic.requests.length, 2);
  } finally {
    runner.close();
    state.close();
    await anthropic.close();
    await Deno.remove(worldsDir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});

/** The summing agent's step for this conversation: 1 + the number of tool rounds so far. */
function step(t: Parameters<FakeScript>[0]): number {
  const msgs = t.body.messages as { role: string; content: unknown }[];
  if (t.body.system !== undefined) {
    // Anthropic: tool results are user messages with tool_result blocks.
    return 1 +
      msgs.filter((m) =>
        Array.isArray(m.content) &&
        (m.content as { type: string }[]).some((b) => b.type === "tool_result")
      ).length;
  }
  return 1 + msgs.filter((m) => m.role === "assistant").length;
}
