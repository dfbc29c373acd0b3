import assert from "node:assert/strict";
import {
  createModelGateway,
  type ModelGatewayOptions,
  type ModelRoute,
  offeredToolNames,
} from "../../../adapters/gateway/model_gateway.ts";
import type { ModelEntry } from "../../../core/models/registry.ts";
import { costMicros } from "../../../core/models/cost.ts";
import { gatewayOutcome } from "../../../adapters/gateway/attempt_gateway.ts";

const PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

function entry(id: string, provider: ModelEntry["provider"]): ModelEntry {
  return {
    id,
    provider,
    apiModel: `${id}-api`,
    aliases: [],
    prices: PRICES,
    listPriceOf: null,
    maxTokens: 1000,
    baseUrl: null,
    apiKeyEnv: null,
    doc: null,
    sources: [],
    priced: true,
  };
}

interface Upstream {
  url: string;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A gateway whose upstream is a function; every forwarded request is recorded. */
function gateway(
  answer: (u: Upstream) => Response | Promise<Response>,
  opts: Partial<ModelGatewayOptions> = {},
  routeOf: (model: string | undefined) => ModelRoute | { problem: string } = (m) =>
    m === "claude"
      ? {
        entry: entry("claude", "anthropic"),
        baseUrl: "https://anthropic.test",
        apiKey: "REAL-A",
        bill: PRICES,
        list: PRICES,
      }
      : m === "gpt"
      ? {
        entry: entry("gpt", "openai"),
        baseUrl: "https://openai.test",
        apiKey: "REAL-O",
        bill: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        list: PRICES,
      }
      : { problem: `no model ${m}` },
) {
  const seen: Upstream[] = [];
  const gw = createModelGateway({
    route: routeOf,
    budgetMicros: 1_000_000,
    maxRequests: 10,
    fetchImpl: async (input, init) => {
      const u = {
        url: String(input),
        headers: new Headers(init?.headers),
        body: JSON.parse(String(init?.body)),
      };
      seen.push(u);
      return await answer(u);
    },
    ...opts,
  });
  return { gw, seen };
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`http://127.0.0.1:17801${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "dummy", ...headers },
    body: JSON.stringify(body),
  });
}

const anthropicJson = (usage: Record<string, number>) =>
  new Response(JSON.stringify({ content: [], usage }), {
    headers: { "content-type": "application/json", "content-encoding": "gzip" },
  });

Deno.test("createModelGateway() answers HEAD / itself and refuses paths off the allow-list", async () => {
  const { gw, seen } = gateway(() => new Response("{}"));
  assert.equal((await gw.handle(new Request("http://x/", { method: "HEAD" }))).status, 200);
  for (
    const [method, path] of [["POST", "/v1/models"], ["GET", "/v1/messages"], ["POST", "/admin"]]
  ) {
    const res = await gw.handle(
      new Request(`http://x${path}`, { method, body: method === "POST" ? "{}" : undefined }),
    );
    assert.equal(res.status, 404, `${method} ${path}`);
    await res.body?.cancel();
  }
  assert.equal(seen.length, 0);
});

Deno.test("createModelGateway() swaps the dummy key for the real one and forwards only known headers, betas and response headers", async () => {
  const { gw, seen } = gateway(() =>
    new Response(JSON.stringify({ content: [], usage: { input_tokens: 1, output_tokens: 1 } }), {
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "request-id": "req_1",
        "anthropic-ratelimit-requests-remaining": "49",
        "retry-after": "3",
        "set-cookie": "session=host-secret",
        "openai-organization": "the-key-holders-org",
        "x-envoy-upstream-service-time": "12",
      },
    })
  );
  const res = await gw.handle(
    post("/v1/messages?beta=true", { model: "claude", messages: [], max_tokens: 10 }, {
      "anthropic-beta":
        "mcp-client-2025-04-04, claude-code-20250219,context-1m-2025-08-07,files-api-2025-04-14",
      "openai-beta": "assistants=v2",
      "x-leak": "host-detail",
      authorization: "Bearer dummy",
    }),
  );
  assert.equal(res.status, 200);
  assert.deepEqual([...res.headers.keys()].sort(), [
    "anthropic-ratelimit-requests-remaining",
    "content-type",
    "request-id",
    "retry-after",
  ]);
  await res.text();
  const up = seen[0];
  // The query string is not forwarded.
  assert.equal(up.url, "https://anthropic.test/v1/messages");
  assert.equal(up.headers.get("x-api-key"), "REAL-A");
  assert.equal(up.headers.get("authorization"), null);
  // Betas that reach the network, the key holder's files or other prices are dropped.
  assert.equal(up.headers.get("anthropic-beta"), "claude-code-20250219");
  assert.equal(up.headers.get("openai-beta"), null);
  assert.equal(up.headers.get("x-leak"), null);
  assert.equal(up.body.model, "claude-api");

  const o = gateway(() => new Response(JSON.stringify({ usage: { input_tokens: 1 } })));
  await (await o.gw.handle(post("/responses", { model: "gpt", input: [] }))).text();
  assert.equal(o.seen[0].url, "https://openai.test/v1/responses");
  assert.equal(o.seen[0].headers.get("authorization"), "Bearer REAL-O");
  assert.equal(o.seen[0].headers.get("x-api-key"), null);
});

Deno.test("createModelGateway() refuses provider-side tools that reach the network unless the web is unrestricted, and state kept at the provider or unbudgetable tools always", async () => {
  const ok = () => anthropicJson({ input_tokens: 1, output_tokens: 1 });
  const refused: [string, Record<string, unknown>][] = [
    ["/v1/messages", {
      model: "claude",
      tools: [{ type: "web_search_20250305", name: "web_search" }],
    }],
    ["/v1/messages", {
      model: "claude",
      tools: [{ type: "web_fetch_20250910", name: "web_fetch" }],
    }],
    ["/v1/messages", {
      model: "claude",
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "url", url: "https://x.test/a.png" } }],
      }],
    }],
    ["/v1/responses", { model: "gpt", tools: [{ type: "web_search_preview" }] }],
    ["/v1/responses", { model: "gpt", tools: [{ type: "computer_use_preview" }] }],
  ];
  const always: [string, Record<string, unknown>][] = [
    // Provider tools whose cost the gateway can neither bound nor meter.
    ["/v1/messages", { model: "claude", tools: [{ type: "code_execution_20250825", name: "c" }] }],
    ["/v1/messages", {
      model: "claude",
      mcp_servers: [{ type: "url", url: "https://x.test/mcp" }],
    }],
    ["/v1/responses", {
      model: "gpt",
      tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }],
    }],
    ["/v1/responses", { model: "gpt", tools: [{ type: "code_interpreter" }] }],
    ["/v1/responses", { model: "gpt", tools: [{ type: "mcp", server_url: "https://x.test" }] }],
    ["/v1/responses", { model: "gpt", tools: [{ type: "image_generation" }] }],
    ["/v1/chat/completions", { model: "gpt", web_search_options: {} }],
    ["/v1/responses", { model: "gpt", previous_response_id: "resp_of_someone_else" }],
    ["/v1/responses", { model: "gpt", conversation: "conv_1" }],
    ["/v1/responses", { model: "gpt", background: true }],
    ["/v1/chat/completions", { model: "gpt", service_tier: "priority" }],
    ["/v1/messages", {
      model: "claude",
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "1h" } }],
    }],
    ["/v1/responses", { model: "gpt", tools: [{ type: "some_future_tool" }] }],
    ["/v1/messages", {
      model: "claude",
      messages: [{
        role: "user",
        content: [{ type: "document", source: { type: "file", file_id: "f" } }],
      }],
    }],
    ["/v1/responses", {
      model: "gpt",
      input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }],
    }],
  ];
  const closed = gateway(ok);
  for (const [path, body] of [...refused, ...always]) {
    const res = await closed.gw.handle(post(path, { max_tokens: 5, ...body }));
    assert.equal(res.status, 400, JSON.stringify(body));
    const err = await res.json();
    assert.equal((err.error as { type: string }).type, "invalid_request_error");
  }
  assert.equal(closed.seen.length, 0);
  assert(closed.gw.log.every((e) => e.refused === "not-forwarded" || e.refused === "content"));

  // With a live web that refuses no host, the provider's web tools go up; state never does.
  const open = gateway(ok, { unrestrictedWeb: true, maxRequests: 100 });
  for (const [path, body] of refused) {
    const res = await open.gw.handle(post(path, { max_tokens: 5, ...body }));
    assert.equal(res.status, 200, JSON.stringify(body));
    await res.text();
  }
  for (const [path, body] of always) {
    const res = await open.gw.handle(post(path, { max_tokens: 5, ...body }));
    assert.equal(res.status, 400, JSON.stringify(body));
    await res.text();
  }
  assert.equal(open.seen.length, refused.length);
  // Client tools always go up: functions, Codex's MCP namespace, Anthropic's custom tools.
  const plain = gateway(ok);
  for (
    const [path, body] of [
      ["/v1/messages", {
        model: "claude",
        tools: [{ name: "mcp__world__read_file", input_schema: {} }],
      }],
      ["/v1/responses", {
        model: "gpt",
        tools: [{ type: "function", name: "f" }, {
          type: "namespace",
          name: "mcp__world",
          tools: [],
        }],
      }],
      ["/v1/chat/completions", {
        model: "gpt",
        tools: [{ type: "function", function: { name: "f" } }],
      }],
    ] as const
  ) {
    const res = await plain.gw.handle(post(path, { max_tokens: 5, ...body }));
    assert.equal(res.status, 200, JSON.stringify(body));
    await res.text();
  }
});

Deno.test("createModelGateway() meters JSON and SSE bodies into tokens, bill and list price", async () => {
  const { gw } = gateway(({ body }) =>
    body.model === "claude-api"
      ? anthropicJson({ input_tokens: 100, cache_read_input_tokens: 50, output_tokens: 20 })
      : new Response(
        'data: {"choices":[]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":4}}\n\ndata: [DONE]\n\n',
        { headers: { "content-type": "text/event-stream" } },
      )
  );
  await (await gw.handle(post("/v1/messages", { model: "claude", messages: [] }))).text();
  const chat = await gw.handle(post("/v1/chat/completions", { model: "gpt", stream: true }));
  await chat.text();
  const f = await gw.settle();
  assert.deepEqual(f.byModel, {
    claude: { input: 150, output: 20, cacheRead: 50, cacheWrite: 0 },
    gpt: { input: 40, output: 4, cacheRead: 0, cacheWrite: 0 },
  });
  assert.equal(f.requests, 2);
  const claudeCost = costMicros(f.byModel.claude, PRICES);
  assert.equal(f.billedMicros, claudeCost); // gpt bills nothing here
  assert.equal(f.listMicros, claudeCost + costMicros(f.byModel.gpt, PRICES));
});

Deno.test("createModelGateway() asks a streamed chat completion for its usage", async () => {
  const { gw, seen } = gateway(() => new Response("data: [DONE]\n\n"));
  await (await gw.handle(post("/v1/chat/completions", { model: "gpt", stream: true }))).text();
  assert.deepEqual(seen[0].body.stream_options, { include_usage: true });
  assert.equal((await gw.settle()).unmetered, 1);
});

Deno.test("createModelGateway() refuses with a 400 in the provider's format at the request cap and when the budget is spent", async () => {
  const { gw, seen } = gateway(
    () => anthropicJson({ input_tokens: 1000, output_tokens: 1000 }),
    { maxRequests: 2, budgetMicros: 1_000_000 },
  );
  for (let i = 0; i < 2; i++) {
    await (await gw.handle(post("/v1/messages", { model: "claude" }))).text();
  }
  const capped = await gw.handle(post("/v1/messages", { model: "claude" }));
  assert.equal(capped.status, 400);
  const err = await capped.json();
  assert.equal(err.type, "error");
  assert.equal(err.error.type, "invalid_request_error");
  assert.match(err.error.message, /limit of 2 model requests/);
  assert.equal(seen.length, 2);
  assert.equal((await gw.settle()).stopped, "request-cap");

  // The worst case of a request is held before it is forwarded: (its bytes + 2048) input
  // tokens at $3.75/M and its max_tokens of output at $15/M. A budget of $0.03 pays for
  // the first (about $0.023), which then costs $0.018; what is left cannot pay for 1024
  // output tokens more, so the second is refused before it reaches the provider.
  const b = gateway(
    () => new Response(JSON.stringify({ usage: { input_tokens: 1000, output_tokens: 1000 } })),
    { budgetMicros: 30_000 },
  );
  await (await b.gw.handle(post("/v1/responses", { model: "gpt", max_output_tokens: 1000 })))
    .text();
  const refused = await b.gw.handle(
    post("/v1/responses", { model: "gpt", max_output_tokens: 1000 }),
  );
  assert.equal(refused.status, 400);
  const oerr = await refused.json();
  assert.equal(oerr.error.type, "invalid_request_error");
  assert.match(
    oerr.error.message,
    /budget of \$0\.0300 \(list price\) cannot pay for this request/,
  );
  assert.equal(b.seen.length, 1);
  const f = await b.gw.settle();
  assert.equal(f.stopped, "budget");
  assert.equal(f.listMicros, 18_000);
});

Deno.test("createModelGateway() makes a first request without the world's tools a fault", async () => {
  const { gw, seen } = gateway(() => anthropicJson({ input_tokens: 1, output_tokens: 1 }), {
    requireToolPrefix: "mcp__world__",
  });
  const res = await gw.handle(post("/v1/messages", { model: "claude", tools: [{ name: "Read" }] }));
  assert.equal(res.status, 400);
  await res.text();
  const f = await gw.settle();
  assert.match(f.fault ?? "", /did not offer the world's MCP tools .*tools offered: Read/);
  assert.equal(seen.length, 0);

  const ok = gateway(() => anthropicJson({ input_tokens: 1, output_tokens: 1 }), {
    requireToolPrefix: "mcp__world__",
  });
  const body = {
    model: "gpt",
    tools: [{
      type: "namespace",
      name: "mcp__world",
      tools: [{ type: "function", name: "read_file" }],
    }],
  };
  await (await ok.gw.handle(post("/v1/responses", body))).text();
  assert.equal((await ok.gw.settle()).fault, null);
  assert.equal(ok.gw.log.find((e) => e.path === "/v1/responses")?.worldTools, true);
});

Deno.test("offeredToolNames() flattens Responses namespaces and Chat function tools", () => {
  assert.deepEqual(
    offeredToolNames({
      tools: [
        { type: "function", function: { name: "a" } },
        { type: "namespace", name: "mcp__world", tools: [{ name: "read_file" }] },
        { name: "b" },
      ],
    }),
    ["a", "mcp__world", "mcp__world__read_file", "b"],
  );
});

Deno.test("createModelGateway() refuses unknown models and a model behind another provider's path", async () => {
  const { gw, seen } = gateway(() => new Response("{}"));
  const unknown = await gw.handle(post("/v1/messages", { model: "nope" }));
  assert.equal(unknown.status, 400);
  assert.match((await unknown.json()).error.message, /no model nope/);
  const wrong = await gw.handle(post("/v1/messages", { model: "gpt" }));
  assert.equal(wrong.status, 400);
  assert.match((await wrong.json()).error.message, /served by openai/);
  const notJson = await gw.handle(
    new Request("http://x/v1/messages", { method: "POST", body: "[" }),
  );
  assert.equal(notJson.status, 400);
  await notJson.text();
  assert.equal(seen.length, 0);
});

Deno.test("createModelGateway() answers 502 when the provider cannot be reached after its retries and remembers it", async () => {
  const { gw, seen } = gateway(() => Promise.reject(new TypeError("connection refused")), {
    retryWait: () => 0,
  });
  const res = await gw.handle(post("/v1/messages", { model: "claude" }));
  assert.equal(res.status, 502);
  await res.text();
  assert.match((await gw.settle()).upstreamProblem ?? "", /connection refused/);
  assert.equal(seen.length, 2);

  const flaky = gateway(() => new Response("busy", { status: 529 }), { retryWait: () => 0 });
  await (await flaky.gw.handle(post("/v1/messages", { model: "claude" }))).text();
  assert.match((await flaky.gw.settle()).upstreamProblem ?? "", /answered 529/);
  assert.equal(flaky.gw.log[0].tries, 2);
});

Deno.test("createModelGateway() refuses a model that is not the attempt's, sends nothing, and the attempt fails for it", async () => {
  const { gw, seen } = gateway(
    () => anthropicJson({ input_tokens: 1, output_tokens: 1 }),
    {},
    (m) =>
      m === "claude"
        ? {
          entry: entry("claude", "anthropic"),
          baseUrl: "https://anthropic.test",
          apiKey: "REAL-A",
          bill: PRICES,
          list: PRICES,
        }
        : {
          problem: `model "${m}" is not one of this attempt's models (claude)`,
          notTheAttempts: true,
        },
  );
  await (await gw.handle(post("/v1/messages", { model: "claude", max_tokens: 5 }))).text();
  const res = await gw.handle(post("/v1/chat/completions", { model: "local", max_tokens: 5 }));
  assert.equal(res.status, 400);
  assert.match((await res.json()).error.message, /"local" is not one of this attempt's models/);
  assert.equal(seen.length, 1);
  const f = await gw.settle();
  assert.match(f.notTheAttempts ?? "", /^model "local"/);
  assert.equal(gw.log.at(-1)?.refused, "not-the-attempts-model");
  const ev = { mcpCalls: [], mcpToolLists: 0, modelRequests: gw.log, figures: f };
  const base = {
    status: "completed" as const,
    usage: f.usage,
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    evidence: {},
  };
  const out = gatewayOutcome(base, ev);
  assert.equal(out.status, "crashed");
  assert.match(out.message ?? "", /^Refused a model request: model "local"/);
  // Even one whose provider then failed fails for it: never a fault.
  assert.equal(
    gatewayOutcome(base, { ...ev, figures: { ...f, upstreamProblem: "x answered 503" } }).status,
    "crashed",
  );
});
