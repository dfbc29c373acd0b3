/**
 * A scripted model provider on 127.0.0.1 for the real agent CLIs: Anthropic Messages
 * (`POST /v1/messages`, streamed: message_start … message_stop, tool_use blocks) for
 * Claude Code and the OpenAI Responses API (`POST /v1/responses`, streamed, MCP tools as a
 * `namespace` tool) for Codex. What the "model" does is a script of the request: call a
 * tool by its short name (`read_file`: the provider finds the offered MCP tool), say a
 * text, fail with an HTTP status, or hang. Every response carries a usage the test knows,
 * so metering can be compared to the token.
 */

export type AgentStep =
  | { tool: string; args: Record<string, unknown> }
  | { text: string }
  | { http: number; body: string }
  | { hang: true };

export interface AgentScriptInput {
  api: "anthropic" | "responses";
  /** 1-based count of model requests. */
  n: number;
  body: Record<string, unknown>;
  /** Tool names offered, namespaced tools as `namespace__name`. */
  tools: string[];
  /** Texts of the tool results the request carries, oldest first. */
  toolResults: string[];
}

export type AgentScript = (input: AgentScriptInput) => AgentStep;

/** The usage a response reports, by the request's number (Anthropic: uncached input). */
export interface FakeUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface FakeAgentProvider {
  url: string;
  /** Model requests received: api, headers, body. */
  requests: { api: string; headers: Record<string, string>; body: Record<string, unknown> }[];
  /** Every request line, HEAD included. */
  seen: string[];
  /** The usages sent, as our Usage counts them (input includes cached parts). */
  sent: FakeUsage[];
  close(): Promise<void>;
}

/** Reads a case file through MCP, writes its text in capitals to /out/answer.edn, ends. */
export function caseReader(path = "/docs/case.txt"): AgentScript {
  return ({ toolResults }) => {
    if (toolResults.length === 0) return { tool: "read_file", args: { path } };
    if (toolResults.length === 1) {
      const text = toolResults[0].trim().toUpperCase().replace(/["\\]/g, "");
      return {
        tool: "write_file",
        args: { path: "/out/answer.edn", content: `{"answer" "${text}"}\n` },
      };
    }
    return { text: "Done: /out/answer.edn holds the answer." };
  };
}

function usageFor(n: number): FakeUsage {
  return { input: 1000 + 7 * n, output: 40 + n, cacheRead: 300 + n, cacheWrite: 20 * n };
}

function textOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) {
    return v.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  }
  return "";
}

function toolNames(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const t of (body.tools as Record<string, unknown>[] | undefined) ?? []) {
    if (typeof t.name !== "string") continue;
    if (Array.isArray(t.tools)) {
      for (const inner of t.tools) out.push(`${t.name}__${inner.name}`);
    } else out.push(t.name);
  }
  return out;
}

function anthropicResults(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const m of (body.messages as Record<string, unknown>[] | undefined) ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) if (b?.type === "tool_result") out.push(textOf(b.content));
  }
  return out;
}

function responsesResults(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const item of (body.input as Record<string, unknown>[] | undefined) ?? []) {
    // Codex prefixes an MCP tool's output with its wall time.
    if (item?.type === "function_call_output") {
      out.push(textOf(item.output).replace(/^Wall time: [^\n]*\nOutput:\n?/i, ""));
    }
  }
  return out;
}

function sse(events: [string, unknown][]): string {
  return events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join("");
}

function anthropicStream(step: AgentStep, tools: string[], n: number, u: FakeUsage): string {
  const usage = {
    input_tokens: u.input - u.cacheRead - u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation_input_tokens: u.cacheWrite,
    output_tokens: 1,
  };
  const events: [string, unknown][] = [[
    "message_start",
    {
      type: "message_start",
      message: {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model: "fake",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    },
  ]];
  let stop = "end_turn";
  if ("tool" in step) {
    const name = tools.find((t) => t === step.tool || t.endsWith(`__${step.tool}`)) ?? step.tool;
    stop = "tool_use";
    events.push(
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: `toolu_${n}`, name, input: {} },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(step.args) },
      }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
    );
  } else if ("text" in step) {
    events.push(
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: step.text },
      }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
    );
  }
  events.push(
    ["message_delta", {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: u.output },
    }],
    ["message_stop", { type: "message_stop" }],
  );
  return sse(events);
}

function anthropicJson(step: AgentStep, tools: string[], n: number, u: FakeUsage) {
  const tool = "tool" in step
    ? tools.find((t) => t === step.tool || t.endsWith(`__${step.tool}`)) ?? step.tool
    : null;
  return {
    id: `msg_${n}`,
    type: "message",
    role: "assistant",
    model: "fake",
    content: "tool" in step
      ? [{ type: "tool_use", id: `toolu_${n}`, name: tool, input: step.args }]
      : [{ type: "text", text: "text" in step ? step.text : "" }],
    stop_reason: "tool" in step ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: u.input - u.cacheRead - u.cacheWrite,
      cache_read_input_tokens: u.cacheRead,
      cache_creation_input_tokens: u.cacheWrite,
      output_tokens: u.output,
    },
  };
}

function responsesStream(step: AgentStep, tools: string[], n: number, u: FakeUsage): string {
  const id = `resp_${n}`;
  let item: Record<string, unknown>;
  if ("tool" in step) {
    const full = tools.find((t) => t === step.tool || t.endsWith(`__${step.tool}`)) ?? step.tool;
    const cut = full.lastIndexOf("__");
    const ns = cut > 0 && !tools.includes(step.tool) ? full.slice(0, cut) : null;
    item = {
      type: "function_call",
      id: `fc_${n}`,
      call_id: `call_${n}`,
      name: ns ? full.slice(cut + 2) : full,
      ...(ns ? { namespace: ns } : {}),
      arguments: JSON.stringify(step.args),
      status: "completed",
    };
  } else {
    item = {
      type: "message",
      id: `msg_${n}`,
      role: "assistant",
      status: "completed",
      content: [{
        type: "output_text",
        text: "text" in step ? step.text : "",
        annotations: [],
      }],
    };
  }
  const response = (status: string, output: unknown[], usage: unknown) => ({
    id,
    object: "response",
    created_at: 1_700_000_000,
    status,
    model: "fake",
    output,
    usage,
  });
  return sse([
    ["response.created", { type: "response.created", response: response("in_progress", [], null) }],
    ["response.output_item.added", {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress" },
    }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", {
      type: "response.completed",
      response: response("completed", [item], {
        input_tokens: u.input,
        input_tokens_details: { cached_tokens: u.cacheRead },
        output_tokens: u.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.input + u.output,
      }),
    }],
  ]);
}

/**
 * Starts the provider; `script` decides each model turn. `hold`, when given, is awaited
 * before each answer (a test looks at the CLI while it waits).
 */
export function startFakeAgentProvider(
  script: AgentScript,
  hold?: (n: number) => Promise<void>,
): FakeAgentProvider {
  const requests: FakeAgentProvider["requests"] = [];
  const seen: string[] = [];
  const sent: FakeUsage[] = [];
  const hangs = new Set<ReadableStreamDefaultController>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    seen.push(`${req.method} ${path}`);
    if (req.method === "HEAD" || req.method === "GET") return new Response(null, { status: 200 });
    const api = path === "/v1/messages"
      ? "anthropic"
      : path === "/v1/responses"
      ? "responses"
      : null;
    if (api === null) return new Response("not found", { status: 404 });
    const body = await req.json();
    requests.push({ api, headers: Object.fromEntries(req.headers), body });
    const tools = toolNames(body);
    const n = requests.length;
    await hold?.(n);
    const step = script({
      api,
      n,
      body,
      tools,
      toolResults: api === "anthropic" ? anthropicResults(body) : responsesResults(body),
    });
    if ("http" in step) {
      return new Response(step.body, {
        status: step.http,
        headers: { "content-type": "application/json" },
      });
    }
    if ("hang" in step) {
      return new Response(
        new ReadableStream({
          start: (c) => void hangs.add(c),
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    const u = usageFor(n);
    sent.push(u);
    if (api === "anthropic" && body.stream !== true) {
      // dvergr's own agent loop asks without streaming.
      return Response.json(anthropicJson(step, tools, n, u));
    }
    const text = api === "anthropic"
      ? anthropicStream(step, tools, n, u)
      : responsesStream(step, tools, n, u);
    return new Response(text, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    requests,
    seen,
    sent,
    async close() {
      for (const c of hangs) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      await server.shutdown();
    },
  };
}
