/**
 * Model candidates end to end: createModelCandidate → agent loop → provider → HTTP, against
 * local protocol servers, in real worlds on disk.
 */
import assert from "node:assert/strict";
import type { AttemptContext, CandidateOutcome } from "../../../../core/bench/candidate.ts";
import { DvergrError } from "../../../../core/errors.ts";
import { createWorld } from "../../../../adapters/world/world.ts";
import { type World } from "../../../../core/ports/world_factory.ts";
import {
  createModelCandidate,
  modelCandidateName,
} from "../../../../adapters/candidates/model/model_candidate.ts";
import { DEFAULT_SYSTEM_PROMPT } from "../../../../adapters/candidates/model/agent_loop.ts";
import {
  type FakeScript,
  type FakeServer,
  startFakeAnthropic,
  startFakeOpenAI,
  summingAgent,
} from "../../../helpers/fake_providers.ts";

const FAST_RETRY = { maxTries: 3, baseDelayMs: 5, maxDelayMs: 20 };
const TASK =
  "Add up the numbers in the document under /docs and write {:total N} to /out/answer.edn.";

interface Setup {
  world: World;
  ctx: AttemptContext;
  home: string;
  cleanup(): Promise<void>;
}

async function setup(opts: Partial<AttemptContext> & { homeEdn?: string } = {}): Promise<Setup> {
  const world = await createWorld({ "/docs/numbers.txt": "12 and 30, then 100" }, {
    mkdirs: ["/out"],
  });
  const home = await Deno.makeTempDir({ prefix: "dvergr-home-" });
  if (opts.homeEdn) await Deno.writeTextFile(`${home}/models.edn`, opts.homeEdn);
  const ctx: AttemptContext = {
    task: TASK,
    caseId: null,
    repetition: 0,
    world: world.files,
    worldDir: world.dir,
    reference: null,
    timeoutMs: 30_000,
    budgetMicros: 500_000,
    profile: "developer",
    writable: ["/out"],
    signal: new AbortController().signal,
    ...opts,
  };
  return {
    world,
    ctx,
    home,
    async cleanup() {
      await world.remove();
      await Deno.remove(home, { recursive: true });
    },
  };
}

async function withServer(
  start: (
    s: FakeScript,
    o: { apiKey?: string | null; compatible?: boolean },
  ) => Promise<FakeServer>,
  script: FakeScript,
  o: { apiKey?: string | null; compatible?: boolean },
  fn: (server: FakeServer) => Promise<void>,
) {
  const server = await start(script, o);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

function env(vars: Record<string, string>) {
  return (k: string) => vars[k];
}

function sumUsage(usages: Record<string, unknown>[], field: string): number {
  return usages.reduce((n, u) => n + ((u[field] as number | undefined) ?? 0), 0);
}

async function answer(world: World): Promise<string | null> {
  return await world.files.read("/out/answer.edn").catch(() => null);
}

Deno.test("createModelCandidate() runs an Anthropic model through several tool turns that write the answer", async () => {
  const s = await setup();
  await withServer(
    startFakeAnthropic,
    summingAgent(),
    { apiKey: "sk-ant-test" },
    async (server) => {
      const cand = await createModelCandidate("haiku", {
        env: env({ ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url }),
        homeDir: s.home,
      });
      assert.equal(cand.name, "claude-haiku-4-5");
      await cand.preflight!();
      const out = await cand.run(s.ctx);
      assert.equal(out.status, "completed", out.message ?? "");
      assert.equal(await answer(s.world), "{:total 142}");
      assert.deepEqual(server.refusals, []);
      assert.equal(server.requests.length, 4);
      const first = server.requests[0];
      assert.equal(first.path, "/v1/messages");
      assert.equal(first.headers["x-api-key"], "sk-ant-test");
      assert.equal(first.headers["anthropic-version"], "2023-06-01");
      const body = first.body as Record<string, unknown>;
      assert.equal(body.model, "claude-haiku-4-5");
      assert.equal(body.system, DEFAULT_SYSTEM_PROMPT);
      assert.equal(body.max_tokens, 4096);
      // Usage is the sum of what the server reported; the bill is those tokens at haiku's prices (1 and 5 $/M).
      const input = sumUsage(server.usages, "input_tokens");
      const output = sumUsage(server.usages, "output_tokens");
      assert.deepEqual(out.usage, { input, output, cacheRead: 0, cacheWrite: 0 });
      assert.equal(out.billedMicros, input * 1 + output * 5);
      assert.equal(out.listMicros, null);
      const ev = out.evidence as Record<string, unknown>;
      assert.equal(ev.stop, "answered");
      assert.equal(ev.calls, 4);
      assert.equal(ev.toolErrors, 0);
      const transcript = ev.transcript as Record<string, unknown>[];
      assert.deepEqual(transcript.map((t) => t.role), [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
      ]);
      assert.match(
        JSON.stringify(transcript.at(-1)),
        /Done: Wrote 12 characters to \/out\/answer.edn/,
      );
    },
  );
  await s.cleanup();
});

Deno.test("createModelCandidate() bills Anthropic cache reads and writes at their rates, to the cent", async () => {
  const s = await setup();
  const usage = {
    input_tokens: 1200,
    output_tokens: 800,
    cache_read_input_tokens: 3000,
    cache_creation_input_tokens: 500,
  };
  const script: FakeScript = (t) => ({ ...summingAgent()(t), usage });
  await withServer(startFakeAnthropic, script, {}, async (server) => {
    const cand = await createModelCandidate("claude-sonnet-4-5", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "completed");
    assert.deepEqual(out.usage, {
      input: 18_800,
      output: 3200,
      cacheRead: 12_000,
      cacheWrite: 2000,
    });
    // 4 calls × (1200 × 3 + 800 × 15 + 3000 × 0.3 + 500 × 3.75) µ$ = 4 × 18375
    assert.equal(out.billedMicros, 73_500);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() runs an OpenAI model and bills cached prompt tokens at the cache rate", async () => {
  const s = await setup();
  const usage = {
    prompt_tokens: 5000,
    completion_tokens: 300,
    prompt_tokens_details: { cached_tokens: 4000 },
  };
  const script: FakeScript = (t) => ({ ...summingAgent()(t), usage });
  await withServer(startFakeOpenAI, script, { apiKey: "sk-openai" }, async (server) => {
    const cand = await createModelCandidate("gpt-4.1", {
      env: env({ OPENAI_API_KEY: "sk-openai", OPENAI_BASE_URL: `${server.url}/v1` }),
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "completed", out.message ?? "");
    assert.deepEqual(server.refusals, []);
    assert.equal(await answer(s.world), "{:total 142}");
    assert.equal(server.requests[0].path, "/v1/chat/completions");
    assert.equal(server.requests[0].headers["authorization"], "Bearer sk-openai");
    assert.deepEqual(out.usage, { input: 20_000, output: 1200, cacheRead: 16_000, cacheWrite: 0 });
    // 4 calls × (1000 × 2 + 4000 × 0.5 + 300 × 8) µ$
    assert.equal(out.billedMicros, 25_600);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() reaches a local OpenAI-compatible server by DVERGR_OPENAI_COMPAT_BASE_URL, without a key", async () => {
  const s = await setup();
  await withServer(startFakeOpenAI, summingAgent(), { compatible: true }, async (server) => {
    const cand = await createModelCandidate("local", {
      env: env({ DVERGR_OPENAI_COMPAT_BASE_URL: server.url }),
    });
    await cand.preflight!();
    assert.equal(cand.identity.baseUrl, server.url);
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "completed", out.message ?? "");
    assert.deepEqual(server.refusals, []);
    assert.equal(server.requests[0].headers["authorization"], undefined);
    assert.equal((server.requests[0].body as Record<string, unknown>).max_tokens, 4096);
    assert.equal(await answer(s.world), "{:total 142}");
    assert.equal(out.billedMicros, 0);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() takes a model's base URL and key variable from <home>/models.edn", async () => {
  await withServer(
    startFakeOpenAI,
    summingAgent(),
    { apiKey: "fw-key", compatible: true },
    async (server) => {
      const s = await setup({
        homeEdn:
          `{:models {"fireworks-llama" {:provider :openai-compatible :base-url "${server.url}"
                                            :api-model "accounts/fireworks/models/llama" :api-key-env "FIREWORKS_API_KEY"
                                            :prices {:input 0.9 :output 0.9}}}}`,
      });
      const cand = await createModelCandidate("fireworks-llama", {
        env: env({ FIREWORKS_API_KEY: "fw-key" }),
        homeDir: s.home,
      });
      const out = await cand.run(s.ctx);
      assert.equal(out.status, "completed", out.message ?? "");
      assert.equal(
        (server.requests[0].body as Record<string, unknown>).model,
        "accounts/fireworks/models/llama",
      );
      const tokens = out.usage.input + out.usage.output;
      assert.equal(out.billedMicros, Math.round(tokens * 0.9));
      const noKey = await createModelCandidate("fireworks-llama", {
        env: env({}),
        homeDir: s.home,
      });
      await assert.rejects(noKey.preflight!(), /FIREWORKS_API_KEY is not set/);
      await s.cleanup();
    },
  );
});

Deno.test("createModelCandidate() preflight fails naming the missing key, before any request", async () => {
  const s = await setup();
  await withServer(startFakeAnthropic, summingAgent(), {}, async (server) => {
    const cand = await createModelCandidate("claude-haiku-4-5", {
      env: env({ ANTHROPIC_BASE_URL: server.url }),
    });
    await assert.rejects(cand.preflight!(), (e: unknown) => {
      assert.ok(e instanceof DvergrError);
      assert.equal(e.code, "API_KEY_MISSING");
      assert.equal(e.message, 'Cannot run model "claude-haiku-4-5": ANTHROPIC_API_KEY is not set');
      assert.match(e.hint!, /Export ANTHROPIC_API_KEY/);
      return true;
    });
    const openai = await createModelCandidate("gpt-4o-mini", { env: env({}) });
    await assert.rejects(openai.preflight!(), /OPENAI_API_KEY is not set/);
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "fault");
    assert.equal(server.requests.length, 0);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() refuses an unknown model with close matches", async () => {
  await assert.rejects(
    createModelCandidate("gpt-4.1-mimi", { env: env({}) }),
    (e: unknown) => {
      assert.ok(e instanceof DvergrError);
      assert.equal(e.code, "MODEL_UNKNOWN");
      assert.match(e.hint!, /"gpt-4.1-mini"/);
      return true;
    },
  );
});

Deno.test("createModelCandidate() retries a 429 after its retry-after and completes", async () => {
  const s = await setup();
  const agent = summingAgent();
  let limited = false;
  const script: FakeScript = (t) => {
    if (t.n === 2 && !limited) {
      limited = true;
      return {
        http: 429,
        body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
        headers: { "retry-after": "1" },
      };
    }
    return agent({ ...t, n: limited ? t.n - 1 : t.n });
  };
  await withServer(startFakeAnthropic, script, {}, async (server) => {
    const cand = await createModelCandidate("haiku", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
      retry: FAST_RETRY,
    });
    const started = Date.now();
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "completed", out.message ?? "");
    assert.ok(Date.now() - started >= 1000, "waited for retry-after");
    assert.equal(await answer(s.world), "{:total 142}");
    const ev = out.evidence as Record<string, unknown>;
    assert.equal(ev.calls, 4);
    assert.equal(ev.httpTries, 5);
    // Only answered calls are billed: the 429 carried no usage.
    assert.equal(
      out.billedMicros,
      sumUsage(server.usages, "input_tokens") + 5 * sumUsage(server.usages, "output_tokens"),
    );
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() ends in a fault when the provider keeps failing with 5xx", async () => {
  const s = await setup();
  const script: FakeScript = (t) =>
    t.n === 1 ? summingAgent()(t) : {
      http: 529,
      body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    };
  await withServer(startFakeAnthropic, script, {}, async (server) => {
    const cand = await createModelCandidate("haiku", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
      retry: FAST_RETRY,
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "fault");
    assert.match(
      out.message!,
      /anthropic "claude-haiku-4-5": gave up after 3 tries; last: HTTP 529: Overloaded/,
    );
    assert.equal(server.requests.length, 4);
    // The first call's tokens were spent and are still billed.
    assert.equal(
      out.billedMicros,
      server.usages[0].input_tokens as number + 5 * (server.usages[0].output_tokens as number),
    );
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() ends in a fault on a malformed response", async () => {
  const s = await setup();
  for (
    const [reply, pattern] of [
      [{ raw: '{"content": [' }, /not JSON/],
      [
        { raw: '{"type":"message","content":[{"type":"text","text":"hi"}]}' },
        /malformed response: the body has no usage/,
      ],
    ] as const
  ) {
    await withServer(startFakeAnthropic, () => reply, {}, async (server) => {
      const cand = await createModelCandidate("haiku", {
        env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
        retry: FAST_RETRY,
      });
      const out = await cand.run(s.ctx);
      assert.equal(out.status, "fault");
      assert.match(out.message!, pattern);
      assert.equal(server.requests.length, 1, "a malformed answer is not retried");
    });
  }
  await withServer(startFakeOpenAI, () => ({ raw: '{"choices":[]}' }), {}, async (server) => {
    const cand = await createModelCandidate("gpt-4o-mini", {
      env: env({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }),
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "fault");
    assert.match(
      out.message!,
      /openai "gpt-4o-mini" at .*: malformed response: the body has no choices\[0\]/,
    );
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() tells the model about an unknown tool or broken arguments and goes on", async () => {
  const s = await setup();
  const script: FakeScript = ({ n, toolResults }) => {
    if (n === 1) {
      return {
        toolCalls: [{ name: "delete_everything", input: {} }, {
          name: "write_file",
          rawArguments: '{"path": "/out/answer.edn", ',
        }],
      };
    }
    if (n === 2) {
      return {
        text: toolResults.map((r) => r.content).join(" | "),
        toolCalls: [{
          name: "write_file",
          input: { path: "/out/answer.edn", content: "{:total 0}" },
        }],
      };
    }
    return { text: "done" };
  };
  await withServer(startFakeOpenAI, script, {}, async (server) => {
    const cand = await createModelCandidate("gpt-4o-mini", {
      env: env({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }),
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "completed");
    assert.deepEqual(server.refusals, []);
    const second = server.requests[1].body as { messages: { role: string; content: string }[] };
    const toolMsgs = second.messages.filter((m) => m.role === "tool").map((m) => m.content);
    assert.match(toolMsgs[0], /no tool "delete_everything"/);
    assert.match(toolMsgs[1], /not valid JSON/);
    assert.equal(await answer(s.world), "{:total 0}");
    assert.equal((out.evidence as Record<string, unknown>).toolErrors, 2);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() stops before a call that could exceed the budget, to the cent", async () => {
  // 1000 input + 200 output tokens per call at 1 and 5 $/M: 2000 µ$ a call. With 1000 output tokens
  // allowed per call, the next call could cost about 1300 + 5000 µ$: after two calls (4000 spent),
  // a third could pass $0.0100.
  const s = await setup({
    budgetMicros: 10_000,
    homeEdn:
      `{:models {"tight" {:provider :anthropic :api-model "claude-haiku-4-5" :max-tokens 1000 :prices {:input 1 :output 5}}}}`,
  });
  const script: FakeScript = () => ({
    toolCalls: [{ name: "list_files", input: { dir: "/docs" } }],
    usage: { input_tokens: 1000, output_tokens: 200 },
  });
  await withServer(startFakeAnthropic, script, {}, async (server) => {
    const cand = await createModelCandidate("tight", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
      homeDir: s.home,
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "budget");
    assert.equal(server.requests.length, 2);
    assert.equal(out.billedMicros, 4000);
    assert.match(
      out.message!,
      /^stopped by budget: \$0\.0040 spent of \$0\.0100, and the next call could cost up to \$0\.006/,
    );
    const budget =
      (out.evidence as { budget: { spentMicros: number; lastWorstCaseMicros: number } }).budget;
    assert.ok(budget.spentMicros + budget.lastWorstCaseMicros > 10_000);
    assert.ok(2000 + budget.lastWorstCaseMicros <= 10_000, "the second call fitted");
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() makes no call at all when even the first could exceed the budget", async () => {
  const s = await setup({ budgetMicros: 1000 });
  await withServer(startFakeAnthropic, summingAgent(), {}, async (server) => {
    const cand = await createModelCandidate("haiku", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "budget");
    assert.equal(out.billedMicros, 0);
    assert.equal(server.requests.length, 0);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() bills a subscription nothing and prices its list at the API model, budget included", async () => {
  const s = await setup({
    homeEdn:
      `{:models {"sub-sonnet" {:provider :anthropic :api-model "claude-sonnet-4-5" :list-price-of "sonnet"}}}`,
  });
  const usage = { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 2000 };
  const script: FakeScript = (t) => ({ ...summingAgent()(t), usage });
  await withServer(startFakeAnthropic, script, {}, async (server) => {
    const cand = await createModelCandidate("sub-sonnet", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
      homeDir: s.home,
    });
    const out: CandidateOutcome = await cand.run(s.ctx);
    assert.equal(out.status, "completed");
    assert.equal(out.billedMicros, 0);
    // 4 × (1000 × 3 + 100 × 15 + 2000 × 0.3) µ$
    assert.equal(out.listMicros, 20_400);
  });
  // At sonnet's list prices a call may cost about $0.065 (4096 output tokens at $15/M): a $0.07
  // budget allows the first call and stops before the second, though nothing was billed.
  await withServer(startFakeAnthropic, script, {}, async (server) => {
    const cand = await createModelCandidate("sub-sonnet", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
      homeDir: s.home,
    });
    const tight = await cand.run({ ...s.ctx, budgetMicros: 70_000 });
    assert.equal(tight.status, "budget");
    assert.equal(server.requests.length, 1);
    assert.equal(tight.billedMicros, 0);
    assert.equal(tight.listMicros, 5_100);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() ends as a timeout when the attempt's signal fires during a call", async () => {
  const ac = new AbortController();
  const s = await setup({ signal: ac.signal });
  const script: FakeScript = (t) => (t.n === 1 ? summingAgent()(t) : { hang: true });
  await withServer(startFakeAnthropic, script, {}, async (server) => {
    const cand = await createModelCandidate("haiku", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
    });
    setTimeout(() => ac.abort(), 300);
    const started = Date.now();
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "timeout");
    assert.ok(Date.now() - started < 5_000);
    assert.equal(server.requests.length, 2);
    assert.equal(
      out.billedMicros,
      server.usages[0].input_tokens as number + 5 * (server.usages[0].output_tokens as number),
    );
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() ends as a timeout at the attempt's time limit even without a signal", async () => {
  const s = await setup({ timeoutMs: 400 });
  await withServer(startFakeAnthropic, () => ({ hang: true }), {}, async (server) => {
    const cand = await createModelCandidate("haiku", {
      env: env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
    });
    const started = Date.now();
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "timeout");
    assert.ok(Date.now() - started < 3_000);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() gives a read-only profile no write_file and stops at the turn limit", async () => {
  const s = await setup({ profile: "analyst" });
  const script: FakeScript = (t) => ({
    toolCalls: [{
      name: t.tools.includes("write_file") ? "write_file" : "list_files",
      input: { dir: "/" },
    }],
  });
  await withServer(startFakeOpenAI, script, {}, async (server) => {
    const cand = await createModelCandidate("gpt-4o-mini", {
      env: env({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }),
      maxTurns: 3,
      systemPrompt: "Only look.",
    });
    const out = await cand.run(s.ctx);
    assert.equal(out.status, "completed");
    assert.equal(out.message, "stopped at the turn limit (3 model calls)");
    assert.equal(server.requests.length, 3);
    const body = server.requests[0].body as {
      messages: { content: string }[];
      tools: { function: { name: string } }[];
    };
    assert.deepEqual(body.tools.map((t) => t.function.name), ["list_files", "read_file"]);
    assert.equal(body.messages[0].content, "Only look.");
    assert.equal(await answer(s.world), null);
  });
  await s.cleanup();
});

Deno.test("createModelCandidate() gives a stable identity that names what decides the behaviour", async () => {
  const a = await createModelCandidate("haiku", { env: env({}) });
  const b = await createModelCandidate("claude-haiku-4-5", { env: env({}) });
  assert.deepEqual(a.identity, b.identity);
  assert.deepEqual(a.identity, {
    kind: "model",
    model: "claude-haiku-4-5",
    apiModel: "claude-haiku-4-5",
    provider: "anthropic",
    baseUrl: "https://api.anthropic.com",
    systemPrompt: DEFAULT_SYSTEM_PROMPT,
    tools: {
      version: 3,
      names: ["list_files", "read_file", "write_file", "web_search", "web_fetch"],
    },
    maxTurns: 30,
    maxTokens: 4096,
  });
  const c = await createModelCandidate("haiku", { env: env({}), systemPrompt: "Other." });
  assert.notDeepEqual(a.identity, c.identity);
  assert.equal(modelCandidateName("qwen3:8b/q4 x"), "qwen3-8b-q4-x");
});
