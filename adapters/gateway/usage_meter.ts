/**
 * Token usage read from provider responses as they pass through the model gateway: a JSON
 * body, or a server-sent event stream fed chunk by chunk. Counts follow core/models/cost.ts
 * (`input` includes the cached parts).
 *
 * - Anthropic Messages: `usage` of the body; streamed, `message_start.message.usage` (input,
 *   cache reads and writes) and the last `message_delta.usage` (output, cumulative).
 * - OpenAI Responses: `usage` of the body; streamed, `response.completed` (or `.incomplete`,
 *   `.failed`) `.response.usage`: input_tokens incl. cached, output incl. reasoning.
 * - OpenAI Chat Completions: `usage` (prompt_tokens incl. cached); streamed, the chunk that
 *   carries `usage` (sent when `stream_options.include_usage` is true).
 *
 * Uses of the provider's own web tools are counted beside (provider_tools.ts): Anthropic's
 * `usage.server_tool_use`, the Responses API's `web_search_call` output items.
 */
import type { Usage } from "../../core/bench/candidate.ts";
import { NO_USAGE } from "../../core/bench/candidate.ts";

export type ProviderApi = "anthropic-messages" | "openai-chat" | "openai-responses";

/** What the gateway meters: uses of the provider's web search and web fetch. */
export type ToolKind = "webSearch" | "webFetch";
export type ToolUses = Record<ToolKind, number>;
export const NO_TOOL_USES: ToolUses = { webSearch: 0, webFetch: 0 };

export interface MeteredUsage {
  usage: Usage;
  /** False when the response carried no usage at all. */
  reported: boolean;
  /** Uses of the provider's own web tools. */
  tools: ToolUses;
  /**
   * A stream's closing usage was seen (Anthropic `message_delta`, Responses' last event,
   * Chat's usage chunk); false when it stopped before (its output may be undercounted).
   */
  final?: boolean;
}

function n(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0;
}

function obj(v: unknown): Record<string, unknown> | null {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : null;
}

/** Usage of an Anthropic `usage` object (input_tokens leaves out the cached parts). */
function anthropicUsage(u: Record<string, unknown>): Usage {
  const cacheRead = n(u.cache_read_input_tokens);
  const cacheWrite = n(u.cache_creation_input_tokens);
  return {
    input: n(u.input_tokens) + cacheRead + cacheWrite,
    output: n(u.output_tokens),
    cacheRead,
    cacheWrite,
  };
}

/** Usage of an OpenAI `usage` object, Responses or Chat Completions shape. */
function openaiUsage(u: Record<string, unknown>): Usage {
  const input = n(u.input_tokens ?? u.prompt_tokens);
  const details = obj(u.input_tokens_details ?? u.prompt_tokens_details);
  return {
    input,
    output: n(u.output_tokens ?? u.completion_tokens),
    cacheRead: Math.min(input, n(details?.cached_tokens)),
    cacheWrite: 0,
  };
}

/** Usage of a whole (non-streamed) JSON response body. */
export function usageOfJson(api: ProviderApi, body: unknown): MeteredUsage {
  const u = obj(obj(body)?.usage);
  const tools = api === "anthropic-messages"
    ? anthropicToolUses(u) ?? { ...NO_TOOL_USES }
    : api === "openai-responses"
    ? responsesToolUses(obj(body))
    : { ...NO_TOOL_USES };
  if (!u) return { usage: { ...NO_USAGE }, reported: false, tools };
  return {
    usage: api === "anthropic-messages" ? anthropicUsage(u) : openaiUsage(u),
    reported: true,
    tools,
  };
}

/**
 * Reads a server-sent event stream incrementally; `push` each chunk of text as it passes,
 * `result()` once it ended. Only usage-bearing events are looked at.
 */
export class SseUsageMeter {
  private buffer = "";
  private data: string[] = [];
  private usage: Usage = { ...NO_USAGE };
  private reported = false;
  private final = false;
  private tools: ToolUses = { ...NO_TOOL_USES };
  /** Bytes of an event kept while it is incomplete (a longer one is skipped). */
  private static readonly MAX_EVENT = 4 * 1024 * 1024;

  constructor(private readonly api: ProviderApi) {}

  push(text: string): void {
    this.buffer += text;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, "");
      this.buffer = this.buffer.slice(nl + 1);
      this.line(line);
    }
    if (this.buffer.length > SseUsageMeter.MAX_EVENT) this.buffer = "";
  }

  /** The usage seen; call after the stream ended. */
  result(): MeteredUsage {
    if (this.buffer !== "") this.line(this.buffer.replace(/\r$/, ""));
    this.buffer = "";
    this.line("");
    return {
      usage: { ...this.usage },
      reported: this.reported,
      final: this.final,
      tools: { ...this.tools },
    };
  }

  private line(line: string): void {
    if (line === "") {
      if (this.data.length > 0) this.event(this.data.join("\n"));
      this.data = [];
      return;
    }
    if (line.startsWith("data:")) {
      const d = line.slice(5).replace(/^ /, "");
      if (this.data.reduce((s, x) => s + x.length, 0) < SseUsageMeter.MAX_EVENT) this.data.push(d);
    }
  }

  private event(data: string): void {
    if (data === "[DONE]" || !data.includes("usage")) return;
    let j: Record<string, unknown> | null;
    try {
      j = obj(JSON.parse(data));
    } catch {
      return;
    }
    if (!j) return;
    if (this.api === "anthropic-messages") {
      if (j.type === "message_start") {
        const u = obj(obj(j.message)?.usage);
        if (u) {
          this.usage = anthropicUsage(u);
          this.tools = anthropicToolUses(u) ?? this.tools;
          this.reported = true;
        }
      } else if (j.type === "message_delta") {
        const u = obj(j.usage);
        if (u) {
          // Output is cumulative; a delta that repeats the input counts replaces it.
          const next = anthropicUsage({ ...u });
          this.usage = {
            input: u.input_tokens !== undefined ? next.input : this.usage.input,
            cacheRead: u.cache_read_input_tokens !== undefined
              ? next.cacheRead
              : this.usage.cacheRead,
            cacheWrite: u.cache_creation_input_tokens !== undefined
              ? next.cacheWrite
              : this.usage.cacheWrite,
            output: u.output_tokens !== undefined ? next.output : this.usage.output,
          };
          // Server tool uses are cumulative too.
          this.tools = anthropicToolUses(u) ?? this.tools;
          this.reported = true;
          this.final = true;
        }
      }
      return;
    }
    if (this.api === "openai-responses") {
      const done = typeof j.type === "string" &&
        /^response\.(completed|incomplete|failed)$/.test(j.type);
      const u = done ? obj(obj(j.response)?.usage) : null;
      if (u) {
        this.usage = openaiUsage(u);
        this.tools = responsesToolUses(obj(j.response));
        this.reported = true;
        this.final = true;
      }
      return;
    }
    const u = obj(j.usage);
    if (u) {
      this.usage = openaiUsage(u);
      this.reported = true;
      this.final = true;
    }
  }
}

/** Uses counted in an Anthropic `usage` object (`server_tool_use`). */
export function anthropicToolUses(usage: Record<string, unknown> | null): ToolUses | null {
  const s = usage?.server_tool_use;
  if (typeof s !== "object" || s === null) return null;
  const o = s as Record<string, unknown>;
  return {
    webSearch: n(o.web_search_requests),
    webFetch: n(o.web_fetch_requests),
  };
}

/** Uses counted in an OpenAI Responses `response` object (its `web_search_call` items). */
export function responsesToolUses(response: Record<string, unknown> | null): ToolUses {
  const output = Array.isArray(response?.output)
    ? response.output as Record<string, unknown>[]
    : [];
  return {
    webSearch: output.filter((o) => o?.type === "web_search_call").length,
    webFetch: 0,
  };
}
