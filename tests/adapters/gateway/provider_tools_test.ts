/**
 * The provider's own web tools, budgeted: over real HTTP to providers on 127.0.0.1 speaking
 * the Anthropic Messages and OpenAI Responses formats, with the registry's `:tool-prices`.
 * Uses are capped in the forwarded request, their fees and results reserved before it goes,
 * what cannot be reserved refused in the provider's error format, and the uses the response
 * reports metered into the attempt's cost.
 */
import assert from "node:assert/strict";
import { testRoute } from "../../helpers/model_route.ts";
import { createModelGateway, type ModelRoute } from "../../../adapters/gateway/model_gateway.ts";
import {
  boundProviderTools,
  DEFAULT_FETCH_TOKENS,
  DEFAULT_MAX_USES,
  SEARCH_RESULT_TOKENS,
  worstLoopInput,
} from "../../../adapters/gateway/provider_tools.ts";
import {
  buildRegistry,
  type ModelEntry,
  parseModelsEdn,
  SHIPPED_MODELS_EDN,
  SHIPPED_MODELS_FILE,
} from "../../../core/models/registry.ts";
import { costMicros } from "../../../core/models/cost.ts";

const SHIPPED = buildRegistry([parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE)]);
const PRICES = { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 };

/** A provider that records each body and answers it with `reply(body)` (JSON or SSE text). */
function provider(reply: (body: Record<string, unknown>) => Response) {
  const received: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    received.push(body);
    return reply(body);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, received, close: () => server.shutdown() };
}

function route(url: string, provider: ModelEntry["provider"]): ModelRoute {
  return testRoute(url, {
    prices: PRICES,
    maxTokens: 100,
    provider,
    id: provider === "anthropic" ? "claude" : "gpt",
    apiModel: "api-model",
    toolPrices: SHIPPED.toolPrices,
  });
}

function gatewayTo(r: ModelRoute, budgetMicros = 5_000_000) {
  return createModelGateway({
    route: () => r,
    budgetMicros,
    maxRequests: 10,
    unrestrictedWeb: true,
  });
}

async function post(gw: ReturnType<typeof gatewayTo>, path: string, body: unknown) {
  const res = await gw.handle(
    new Request(`http://127.0.0.1:17801${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, text: await res.text() };
}

Deno.test("the shipped registry prices the providers' web tools (dollars per 1,000 uses)", () => {
  assert.deepEqual(SHIPPED.toolPrices, {
    anthropic: { "web-search": 10, "web-fetch": 0 },
    openai: { "web-search": 10, "web-search-preview": 25 },
  });
  const home = parseModelsEdn("{:tool-prices {:anthropic {:web-search 12}}}", "home/models.edn");
  const merged = buildRegistry([parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE), home]);
  assert.deepEqual(merged.toolPrices.anthropic, { "web-search": 12, "web-fetch": 0 });
  assert.throws(
    () => parseModelsEdn("{:tool-prices {:anthropic {:web-search -1}}}", "home/models.edn"),
    /home\/models\.edn.*:tool-prices :anthropic :web-search: expected dollars per 1,000 uses/,
  );
});

Deno.test("boundProviderTools() writes the caps a request lacks and bounds the tool loop's input", () => {
  const body: Record<string, unknown> = {
    tools: [
      { type: "web_search_20250305", name: "web_search" },
      { type: "web_fetch_20250910", name: "web_fetch", max_uses: 2 },
    ],
  };
  const b = boundProviderTools("anthropic-messages", body, SHIPPED.toolPrices, true);
  const tools = body.tools as Record<string, unknown>[];
  assert.equal(tools[0].max_uses, DEFAULT_MAX_USES);
  assert.deepEqual([tools[1].max_uses, tools[1].max_content_tokens], [2, DEFAULT_FETCH_TOKENS]);
  assert.deepEqual(b.uses, { webSearch: DEFAULT_MAX_USES, webFetch: 2 });
  assert.equal(b.samplings, 1 + DEFAULT_MAX_USES + 2);
  assert.equal(b.resultTokens, DEFAULT_MAX_USES * SEARCH_RESULT_TOKENS + 2 * DEFAULT_FETCH_TOKENS);
  // Every sampling reads the request; every sampling but the first may read every result.
  assert.equal(worstLoopInput(1000, b), b.samplings * 1000 + (b.samplings - 1) * b.resultTokens);
  assert.equal(b.fees.webSearch.list, 10_000_000_000n); // $0.01 a search, in picodollars
  const none = boundProviderTools("anthropic-messages", { tools: [] }, SHIPPED.toolPrices, true);
  assert.equal(worstLoopInput(1000, none), 1000);
});

Deno.test("Anthropic web search through the gateway: capped, reserved, and its searches metered at $10 per 1,000", async () => {
  const p = provider(() =>
    Response.json({
      type: "message",
      content: [{ type: "text", text: "found" }],
      usage: {
        input_tokens: 30_000,
        output_tokens: 50,
        server_tool_use: { web_search_requests: 2 },
      },
    })
  );
  const gw = gatewayTo(route(p.url, "anthropic"));
  try {
    const res = await post(gw, "/v1/messages", {
      model: "claude",
      max_tokens: 100,
      messages: [{ role: "user", content: "search" }],
      tools: [{ type: "web_search_20250305", name: "web_search" }],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((p.received[0].tools as Record<string, unknown>[])[0].max_uses, DEFAULT_MAX_USES);
    const f = await gw.settle();
    assert.deepEqual(f.toolUses, { webSearch: 2, webFetch: 0 });
    const tokens = costMicros({ input: 30_000, output: 50, cacheRead: 0, cacheWrite: 0 }, PRICES);
    assert.equal(f.billedMicros, tokens + 2 * 10_000);
    assert.equal(f.listMicros, tokens + 2 * 10_000);
    assert.deepEqual(gw.log[0].toolUsesAllowed, { webSearch: DEFAULT_MAX_USES, webFetch: 0 });
    // The reservation held every allowed search's fee and results.
    assert.ok(
      (gw.log[0].reservedMicros ?? 0) >= DEFAULT_MAX_USES * 10_000,
      `${gw.log[0].reservedMicros}`,
    );
  } finally {
    await p.close();
  }
});

Deno.test("Anthropic web search streamed: the searches of the closing message_delta are metered", async () => {
  const sse = [
    { type: "message_start", message: { usage: { input_tokens: 100, output_tokens: 1 } } },
    {
      type: "message_delta",
      usage: { input_tokens: 9000, output_tokens: 20, server_tool_use: { web_search_requests: 3 } },
    },
    { type: "message_stop" },
  ].map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  const p = provider(() => new Response(sse, { headers: { "content-type": "text/event-stream" } }));
  const gw = gatewayTo(route(p.url, "anthropic"));
  try {
    const res = await post(gw, "/v1/messages", {
      model: "claude",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "search" }],
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 4 }],
    });
    assert.equal(res.status, 200);
    const f = await gw.settle();
    assert.deepEqual(f.toolUses, { webSearch: 3, webFetch: 0 });
    const tokens = costMicros({ input: 9000, output: 20, cacheRead: 0, cacheWrite: 0 }, PRICES);
    assert.equal(f.billedMicros, tokens + 3 * 10_000);
  } finally {
    await p.close();
  }
});

Deno.test("OpenAI Responses web search: max_tool_calls written in, web_search_call items metered at the dearest search fee offered", async () => {
  const p = provider(() =>
    Response.json({
      output: [
        { type: "web_search_call", id: "ws_1", status: "completed" },
        { type: "web_search_call", id: "ws_2", status: "completed" },
        { type: "message", content: [{ type: "output_text", text: "found" }] },
      ],
      usage: { input_tokens: 2000, output_tokens: 40 },
    })
  );
  const gw = gatewayTo(route(p.url, "openai"));
  try {
    const res = await post(gw, "/v1/responses", {
      model: "gpt",
      max_output_tokens: 100,
      input: "search",
      tools: [{ type: "web_search" }, { type: "web_search_preview" }],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(p.received[0].max_tool_calls, DEFAULT_MAX_USES);
    const f = await gw.settle();
    assert.deepEqual(f.toolUses, { webSearch: 2, webFetch: 0 });
    const tokens = costMicros({ input: 2000, output: 40, cacheRead: 0, cacheWrite: 0 }, PRICES);
    assert.equal(f.billedMicros, tokens + 2 * 25_000); // web_search_preview's $25 per 1,000
  } finally {
    await p.close();
  }
});

Deno.test("a web tool whose allowed uses the budget cannot pay for is refused in the provider's format, and nothing is sent", async () => {
  const p = provider(() => Response.json({ usage: { input_tokens: 1, output_tokens: 1 } }));
  // $1: 1,000 searches would cost $10 in fees alone.
  const gw = gatewayTo(route(p.url, "anthropic"), 1_000_000);
  try {
    const res = await post(gw, "/v1/messages", {
      model: "claude",
      max_tokens: 100,
      messages: [{ role: "user", content: "search" }],
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 1000 }],
    });
    assert.equal(res.status, 400);
    const err = JSON.parse(res.text);
    assert.equal(err.type, "error");
    assert.equal(err.error.type, "invalid_request_error");
    assert.match(err.error.message, /budget .* up to 1000 web searches/);
    assert.equal(p.received.length, 0);
    // Code execution cannot be bounded at all: refused even with an open web.
    const code = await post(gw, "/v1/messages", {
      model: "claude",
      max_tokens: 100,
      messages: [{ role: "user", content: "run" }],
      tools: [{ type: "code_execution_20250825", name: "code_execution" }],
    });
    assert.equal(code.status, 400);
    assert.match(JSON.parse(code.text).error.message, /can neither bound before it runs nor meter/);
    assert.equal(p.received.length, 0);
  } finally {
    await p.close();
  }
});
