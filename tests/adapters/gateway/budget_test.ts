/**
 * The model gateway's budget against requests in parallel, over real HTTP: the attempt's
 * gateway on host loopback ports in front of a provider on 127.0.0.1 that speaks the
 * Anthropic Messages format and bills every request all the output it was allowed.
 */
import assert from "node:assert/strict";
import { testRoute } from "../../helpers/model_route.ts";
import { startAttemptGateway } from "../../../adapters/gateway/attempt_gateway.ts";
import type { ModelRoute } from "../../../adapters/gateway/model_gateway.ts";
import { costMicros } from "../../../core/models/cost.ts";

const PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/**
 * A provider that holds every response until `hold` requests are in (or 300 ms passed:
 * the outcome asserted never depends on it), then bills each its max_tokens of output.
 */
function greedyProvider(hold: number) {
  const received: Record<string, unknown>[] = [];
  let release!: () => void;
  const allIn = new Promise<void>((r) => release = r);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    received.push(body);
    if (received.length >= hold) release();
    await Promise.race([allIn, new Promise((r) => setTimeout(r, 300))]);
    return Response.json({
      type: "message",
      content: [{ type: "text", text: "ok" }],
      usage: { input_tokens: 50, output_tokens: body.max_tokens },
    });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, received, close: () => server.shutdown() };
}

function route(baseUrl: string): ModelRoute {
  return testRoute(baseUrl, { prices: PRICES, maxTokens: 4096 });
}

Deno.test("the model gateway holds a budget of $0.10 against 30 requests in parallel that each ask for $0.96", async () => {
  const provider = greedyProvider(30);
  const gw = await startAttemptGateway({ signal: new AbortController().signal }, {
    transport: "tcp",
    toolset: { tools: [], run: () => Promise.resolve({ content: "", isError: true }) },
    model: { route: () => route(provider.url), budgetMicros: 100_000, maxRequests: 100 },
  });
  try {
    const answers = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const res = await fetch(`${gw.env.ANTHROPIC_BASE_URL}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": gw.env.ANTHROPIC_API_KEY },
          // 64,000 output tokens at $15/M: $0.96 each, $28.80 for all of them.
          body: JSON.stringify({
            model: "claude",
            max_tokens: 64_000,
            messages: [{ role: "user", content: "spend" }],
          }),
        });
        return { status: res.status, body: await res.json() };
      }),
    );
    const ev = await gw.finish();
    const f = ev.figures;
    const forwarded = answers.filter((a) => a.status === 200).length;
    // deno-lint-ignore no-console -- the measured figures, for the record
    console.error(
      `30 requests in parallel: ${forwarded} forwarded, billed $${f.billedMicros / 1e6}`,
    );
    assert(f.billedMicros <= 100_000, `billed ${f.billedMicros} µ$ of a 100,000 µ$ budget`);
    assert.equal(f.listMicros, f.billedMicros);
    assert(forwarded >= 1, "no request was forwarded");
    assert.equal(provider.received.length, forwarded);
    assert.equal(f.requests, forwarded);
    // What the provider billed is what the gateway metered, to the token.
    const output = provider.received.reduce((n, b) => n + (b.max_tokens as number), 0);
    assert.deepEqual(f.usage, { input: 50 * forwarded, output, cacheRead: 0, cacheWrite: 0 });
    assert.equal(f.billedMicros, costMicros(f.usage, PRICES));
    // Each forwarded request's output limit was cut to what the budget could pay.
    for (const b of provider.received) assert((b.max_tokens as number) < 64_000);
    for (const a of answers.filter((a) => a.status !== 200)) {
      assert.equal(a.status, 400);
      assert.equal(a.body.type, "error");
      assert.match(a.body.error.message, /cannot pay for this request/);
    }
    assert.equal(f.stopped, "budget");
  } finally {
    await gw.finish();
    await provider.close();
  }
});

Deno.test("the model gateway keeps the hold of a stream cut off before its usage, and fills in a missing output limit", async () => {
  let cutStream!: ReadableStreamDefaultController<Uint8Array>;
  const seen: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push(await req.json());
    const start = `event: message_start\ndata: ${
      JSON.stringify({
        type: "message_start",
        message: { usage: { input_tokens: 10, output_tokens: 1 } },
      })
    }\n\n`;
    return new Response(
      new ReadableStream({
        start(c) {
          cutStream = c;
          c.enqueue(new TextEncoder().encode(start));
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  const gw = await startAttemptGateway({ signal: new AbortController().signal }, {
    transport: "tcp",
    toolset: { tools: [], run: () => Promise.resolve({ content: "", isError: true }) },
    model: {
      route: () => route(`http://127.0.0.1:${server.addr.port}`),
      budgetMicros: 1_000_000,
      maxRequests: 10,
    },
  });
  try {
    const res = await fetch(`${gw.env.ANTHROPIC_BASE_URL}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "claude", stream: true, messages: [] }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    // No max_tokens: the registry's :max-tokens of the model is asked and held.
    assert.equal(seen[0].max_tokens, 4096);
    cutStream.error(new Error("connection lost"));
    await reader.read().catch(() => {});
    const ev = await gw.finish();
    const held = ev.modelRequests[0].reservedMicros!;
    assert(held > 4096 * 15, `held ${held}`);
    assert.equal(ev.figures.billedMicros, held);
    assert.equal(ev.figures.usage.input, 10);
  } finally {
    await gw.finish();
    await server.shutdown();
  }
});

Deno.test("the model gateway forwards the number of Chat answers it reserved, whatever `n` held", async () => {
  // An OpenAI-compatible server that reads `n` and `max_tokens` laxly (a numeric string is a
  // number, as pydantic-based servers read them) and bills every answer its output limit.
  const seen: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    seen.push(body);
    const n = Number(body.n ?? 1);
    const out = n * Number(body.max_tokens);
    return Response.json({
      id: "c",
      object: "chat.completion",
      choices: Array.from({ length: n }, (_, index) => ({
        index,
        message: { role: "assistant", content: "ok" },
        finish_reason: "stop",
      })),
      usage: { prompt_tokens: 20, completion_tokens: out, total_tokens: 20 + out },
    });
  });
  const r = route(`http://127.0.0.1:${server.addr.port}`);
  const lax: ModelRoute = { ...r, entry: { ...r.entry, provider: "openai-compatible" } };
  const gw = await startAttemptGateway({ signal: new AbortController().signal }, {
    transport: "tcp",
    toolset: { tools: [], run: () => Promise.resolve({ content: "", isError: true }) },
    model: { route: () => lax, budgetMicros: 1_000_000, maxRequests: 10 },
  });
  try {
    for (const n of ["30", 2.5, null]) {
      const res = await fetch(`${gw.env.OPENAI_BASE_URL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "claude",
          n,
          max_tokens: 1000,
          messages: [{ role: "user", content: "spend" }],
        }),
      });
      await res.body?.cancel();
    }
    const ev = await gw.finish();
    assert.deepEqual(seen.map((b) => b.n), [1, 1, 1]);
    // Three answers of 1,000 tokens at $15/M and their input: $0.045 (n "30" billed $0.45).
    assert(ev.figures.billedMicros <= 50_000, `billed ${ev.figures.billedMicros} µ$`);
  } finally {
    await gw.finish();
    await server.shutdown();
  }
});
