/**
 * Local protocol servers for model APIs: an Anthropic Messages server and an OpenAI Chat
 * Completions server (also standing in for llama.cpp, vLLM or Ollama), on 127.0.0.1 with a
 * port of the system's choosing. Each checks requests as the real API does (headers, key,
 * message order, every tool call answered by its id) and answers 400/401 when they are
 * wrong; what the "model" says is a script: a function of the request that returns a turn
 * (text, tool calls, usage), an HTTP error, a malformed body, or a hang.
 */

export interface FakeToolCall {
  name: string;
  /** The arguments as an object (Anthropic input; OpenAI arguments as its JSON text). */
  input?: unknown;
  /** OpenAI only: the arguments string verbatim (e.g. broken JSON). */
  rawArguments?: string;
}

/** A model turn. */
export interface FakeTurn {
  text?: string;
  toolCalls?: FakeToolCall[];
  /** Wire-format usage, verbatim (null: none); default: derived from the request and reply sizes. */
  usage?: Record<string, unknown> | null;
  stopReason?: string;
}

export type FakeReply =
  | FakeTurn
  | { http: number; body: string; headers?: Record<string, string> }
  | { raw: string }
  | { hang: true };

export interface FakeTurnInput {
  /** 1-based count of well-formed requests. */
  n: number;
  body: Record<string, unknown>;
  headers: Headers;
  /** The tool results in the newest message, in order. */
  toolResults: { id: string; content: string; isError: boolean }[];
  /** Tool names offered. */
  tools: string[];
  system: string;
}

export type FakeScript = (turn: FakeTurnInput) => FakeReply;

export interface FakeServer {
  url: string;
  /** Every request received, well-formed or not. */
  requests: { path: string; headers: Record<string, string>; body: unknown }[];
  /** The usage objects sent back, in order. */
  usages: Record<string, unknown>[];
  /** Requests refused as malformed (400/401/404) and why. */
  refusals: string[];
  close(): Promise<void>;
}

export interface FakeServerOptions {
  /** The key the server requires (Anthropic x-api-key, OpenAI Bearer); null: any or none. */
  apiKey?: string | null;
  /** OpenAI flavour only: true expects `max_tokens` (compatible servers), false `max_completion_tokens`. */
  compatible?: boolean;
}

type Handler = (
  req: Request,
  body: Record<string, unknown>,
) => { input: FakeTurnInput } | { refuse: Response; message: string };

function json(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function serve(
  path: string,
  check: Handler,
  render: (
    reply: FakeTurn,
    input: FakeTurnInput,
  ) => { body: unknown; usage: Record<string, unknown> | null },
  script: FakeScript,
): Promise<FakeServer> {
  const requests: FakeServer["requests"] = [];
  const usages: Record<string, unknown>[] = [];
  const refusals: string[] = [];
  const hanging = new Set<() => void>();
  let n = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = await req.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    requests.push({ path: url.pathname, headers: Object.fromEntries(req.headers), body });
    const refuse = (status: number, message: string) => {
      refusals.push(message);
      return json(status, { type: "error", error: { type: "invalid_request_error", message } });
    };
    if (req.method !== "POST" || url.pathname !== path) {
      return refuse(404, `no route ${req.method} ${url.pathname}`);
    }
    if (typeof body !== "object" || body === null) {
      return refuse(400, "the body is not a JSON object");
    }
    const checked = check(req, body as Record<string, unknown>);
    if ("refuse" in checked) {
      refusals.push(checked.message);
      return checked.refuse;
    }
    const input = { ...checked.input, n: ++n };
    const reply = script(input);
    if ("http" in reply) {
      return new Response(reply.body, { status: reply.http, headers: reply.headers });
    }
    if ("raw" in reply) {
      return new Response(reply.raw, {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    }
    if ("hang" in reply) {
      // Answers only when the server closes, or after 10 s at most.
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, 10_000);
        function done() {
          clearTimeout(t);
          hanging.delete(done);
          resolve();
        }
        hanging.add(done);
      });
      return json(504, { error: { message: "hung" } });
    }
    const out = render(reply, input);
    if (out.usage) usages.push(out.usage);
    return json(200, out.body);
  });
  return Promise.resolve({
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    usages,
    refusals,
    close() {
      for (const release of [...hanging]) release();
      return server.shutdown();
    },
  });
}

function sizeTokens(v: unknown): number {
  return Math.ceil(JSON.stringify(v).length / 4);
}

function bad(message: string, status = 400): { refuse: Response; message: string } {
  return {
    message,
    refuse: json(status, {
      type: "error",
      error: { type: status === 401 ? "authentication_error" : "invalid_request_error", message },
    }),
  };
}

/** An Anthropic Messages API server (`POST /v1/messages`). */
export function startFakeAnthropic(
  script: FakeScript,
  opts: FakeServerOptions = {},
): Promise<FakeServer> {
  const check: Handler = (req, b) => {
    if (opts.apiKey != null && req.headers.get("x-api-key") !== opts.apiKey) {
      return bad("invalid x-api-key", 401);
    }
    if (!req.headers.get("anthropic-version")) return bad("anthropic-version: header is required");
    if (typeof b.model !== "string") return bad("model: Field required");
    if (typeof b.max_tokens !== "number" || b.max_tokens < 1) {
      return bad("max_tokens: Field required");
    }
    const msgs = b.messages as Record<string, unknown>[];
    if (!Array.isArray(msgs) || msgs.length === 0) {
      return bad("messages: at least one message is required");
    }
    const tools = Array.isArray(b.tools) ? b.tools as Record<string, unknown>[] : [];
    for (const t of tools) {
      if (typeof t.name !== "string" || typeof t.input_schema !== "object") {
        return bad("tools: each tool needs name and input_schema");
      }
    }
    let pendingToolUses: string[] = [];
    for (const [i, m] of msgs.entries()) {
      const want = i % 2 === 0 ? "user" : "assistant";
      if (m.role !== want) {
        return bad(`messages.${i}.role: expected ${want}, roles must alternate starting with user`);
      }
      const content = typeof m.content === "string"
        ? [{ type: "text", text: m.content }]
        : m.content as Record<string, unknown>[];
      if (!Array.isArray(content) || content.length === 0) {
        return bad(`messages.${i}: content must be a non-empty list`);
      }
      if (m.role === "user") {
        const results = content.filter((c) => c.type === "tool_result").map((c) =>
          c.tool_use_id as string
        );
        const missing = pendingToolUses.filter((id) => !results.includes(id));
        if (missing.length > 0) {
          return bad(
            `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${
              missing.join(", ")
            }`,
          );
        }
        const stray = results.filter((id) => !pendingToolUses.includes(id));
        if (stray.length > 0) {
          return bad(
            `messages.${i}.content: unexpected tool_use_id found in tool_result blocks: ${
              stray.join(", ")
            }`,
          );
        }
        for (const c of content) {
          if (
            c.type === "tool_result" && typeof c.content !== "string" && !Array.isArray(c.content)
          ) return bad(`messages.${i}: tool_result content must be text`);
        }
        pendingToolUses = [];
      } else {
        for (const c of content) {
          if (
            c.type === "tool_use" &&
            (typeof c.input !== "object" || c.input === null || Array.isArray(c.input))
          ) {
            return bad(`messages.${i}: tool_use.input must be an object`);
          }
        }
        pendingToolUses = content.filter((c) => c.type === "tool_use").map((c) => c.id as string);
      }
    }
    if (msgs[msgs.length - 1].role !== "user") return bad("the last message must be from the user");
    const last = msgs[msgs.length - 1].content as Record<string, unknown>[];
    return {
      input: {
        n: 0,
        body: b,
        headers: req.headers,
        toolResults: (Array.isArray(last) ? last : []).filter((c) => c.type === "tool_result").map((
          c,
        ) => ({
          id: c.tool_use_id as string,
          content: c.content as string,
          isError: c.is_error === true,
        })),
        tools: tools.map((t) => t.name as string),
        system: typeof b.system === "string" ? b.system : "",
      },
    };
  };
  return serve("/v1/messages", check, (reply, input) => {
    const content = [
      ...(reply.text ? [{ type: "text", text: reply.text }] : []),
      ...(reply.toolCalls ?? []).map((c, i) => ({
        type: "tool_use",
        id: `toolu_${input.n}_${i}`,
        name: c.name,
        input: c.input,
      })),
    ];
    const usage = reply.usage === undefined
      ? {
        input_tokens: sizeTokens(input.body),
        output_tokens: sizeTokens(content),
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      }
      : reply.usage;
    const body = {
      id: `msg_${input.n}`,
      type: "message",
      role: "assistant",
      model: input.body.model,
      content,
      stop_reason: reply.stopReason ??
        ((reply.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn"),
      stop_sequence: null,
      ...(usage === null ? {} : { usage }),
    };
    return { body, usage };
  }, script);
}

/** An OpenAI Chat Completions server (`POST /v1/chat/completions`), or a compatible one. */
export function startFakeOpenAI(
  script: FakeScript,
  opts: FakeServerOptions = {},
): Promise<FakeServer> {
  const check: Handler = (req, b) => {
    if (opts.apiKey != null && req.headers.get("authorization") !== `Bearer ${opts.apiKey}`) {
      return bad("Incorrect API key provided", 401);
    }
    if (typeof b.model !== "string") return bad("you must provide a model parameter");
    if (opts.compatible) {
      if (typeof b.max_tokens !== "number") return bad("max_tokens is expected by this server");
    } else if (b.max_tokens !== undefined) {
      return bad(
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      );
    } else if (typeof b.max_completion_tokens !== "number") {
      return bad("max_completion_tokens is expected");
    }
    const msgs = b.messages as Record<string, unknown>[];
    if (!Array.isArray(msgs) || msgs.length === 0) {
      return bad("messages: must be a non-empty array");
    }
    const tools = Array.isArray(b.tools) ? b.tools as Record<string, unknown>[] : [];
    for (const t of tools) {
      const fn = t.function as Record<string, unknown> | undefined;
      if (t.type !== "function" || typeof fn?.name !== "string") {
        return bad("tools: each tool must be {type: function, function: {name, …}}");
      }
    }
    let pending: string[] = [];
    for (const [i, m] of msgs.entries()) {
      if (m.role === "tool") {
        if (!pending.includes(m.tool_call_id as string)) {
          return bad(
            `messages.[${i}].role: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'`,
          );
        }
        if (typeof m.content !== "string") return bad(`messages.[${i}].content must be a string`);
        pending = pending.filter((id) => id !== m.tool_call_id);
        continue;
      }
      if (pending.length > 0) {
        return bad(
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${
            pending.join(", ")
          }`,
        );
      }
      if (!["system", "user", "assistant", "developer"].includes(m.role as string)) {
        return bad(`messages.[${i}].role is invalid`);
      }
      if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls as Record<string, unknown>[]) {
          const fn = c.function as Record<string, unknown>;
          if (typeof fn?.arguments !== "string") {
            return bad(`messages.[${i}].tool_calls: function.arguments must be a string`);
          }
        }
        pending = (m.tool_calls as Record<string, unknown>[]).map((c) => c.id as string);
      }
    }
    const toolResults: FakeTurnInput["toolResults"] = [];
    for (let i = msgs.length - 1; i >= 0 && msgs[i].role === "tool"; i--) {
      toolResults.unshift({
        id: msgs[i].tool_call_id as string,
        content: msgs[i].content as string,
        isError: false,
      });
    }
    const system = msgs.find((m) => m.role === "system")?.content;
    return {
      input: {
        n: 0,
        body: b,
        headers: req.headers,
        toolResults,
        tools: tools.map((t) => (t.function as Record<string, unknown>).name as string),
        system: typeof system === "string" ? system : "",
      },
    };
  };
  return serve("/v1/chat/completions", check, (reply, input) => {
    const calls = (reply.toolCalls ?? []).map((c, i) => ({
      id: `call_${input.n}_${i}`,
      type: "function",
      function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.input ?? {}) },
    }));
    const message = {
      role: "assistant",
      content: reply.text ?? null,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    };
    const usage = reply.usage === undefined
      ? {
        prompt_tokens: sizeTokens(input.body),
        completion_tokens: sizeTokens(message),
        total_tokens: 0,
        prompt_tokens_details: { cached_tokens: 0 },
      }
      : reply.usage;
    const body = {
      id: `chatcmpl-${input.n}`,
      object: "chat.completion",
      created: 1_760_000_000,
      model: input.body.model,
      choices: [{
        index: 0,
        message,
        finish_reason: reply.stopReason ?? (calls.length > 0 ? "tool_calls" : "stop"),
      }],
      ...(usage === null ? {} : { usage }),
    };
    return { body, usage };
  }, script);
}

/**
 * A scripted agent that really works through the tools: it lists /docs, reads the first
 * file listed, writes /out/answer.edn with the sum of the integers it read, then answers.
 * Every step depends on the previous tool result, so it only succeeds if the tools ran.
 */
export function summingAgent(): FakeScript {
  return ({ n, toolResults }) => {
    switch (n) {
      case 1:
        return {
          text: "Looking at the documents.",
          toolCalls: [{ name: "list_files", input: { dir: "/docs" } }],
        };
      case 2:
        return {
          toolCalls: [{
            name: "read_file",
            input: { path: toolResults[0].content.split("\n")[0] },
          }],
        };
      case 3: {
        const sum = (toolResults[0].content.match(/-?\d+/g) ?? []).map(Number).reduce(
          (a, b) => a + b,
          0,
        );
        return {
          toolCalls: [{
            name: "write_file",
            input: { path: "/out/answer.edn", content: `{:total ${sum}}` },
          }],
        };
      }
      default:
        return { text: `Done: ${toolResults[0]?.content ?? "nothing"}` };
    }
  };
}
