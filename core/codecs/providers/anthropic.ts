/**
 * The Anthropic Messages API wire format (`POST {base}/v1/messages`, non-streaming): tool_use and
 * tool_result blocks, usage with cache reads and writes. One prompt-cache breakpoint sits
 * on the newest message, so each turn reads the conversation so far from the cache.
 */
import type { ChatMessage, ModelTurn, ToolCall, ToolSpec } from "./conversation.ts";

export const ANTHROPIC_VERSION = "2023-06-01";
export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

/** The request body for a conversation. */
export function anthropicBody(
  model: string,
  req: { system: string; messages: ChatMessage[]; tools: ToolSpec[]; maxTokens: number },
): Record<string, unknown> {
  const messages = req.messages.map((m) => {
    switch (m.role) {
      case "user":
        return { role: "user", content: [{ type: "text", text: m.text }] };
      case "assistant":
        return {
          role: "assistant",
          content: [
            ...(m.text !== "" ? [{ type: "text", text: m.text }] : []),
            ...m.toolCalls.map((c) => ({
              type: "tool_use",
              id: c.id,
              name: c.name,
              input: c.args ?? {},
            })),
          ],
        };
      case "tool":
        return {
          role: "user",
          content: m.results.map((r) => ({
            type: "tool_result",
            tool_use_id: r.callId,
            content: r.content,
            ...(r.isError ? { is_error: true } : {}),
          })),
        };
    }
  });
  const last = messages[messages.length - 1];
  if (last && last.content.length > 0) {
    const blocks = last.content as Record<string, unknown>[];
    blocks[blocks.length - 1] = {
      ...blocks[blocks.length - 1],
      cache_control: { type: "ephemeral" },
    };
  }
  return {
    model,
    max_tokens: req.maxTokens,
    system: req.system,
    messages,
    ...(req.tools.length > 0
      ? {
        tools: req.tools.map((t) => ({
          name: t.name,
          description: t.description,
          input_schema: t.parameters,
        })),
      }
      : {}),
  };
}

function count(v: unknown, field: string, required: boolean): number {
  if ((v === undefined || v === null) && !required) return 0;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
    throw new Error(
      `usage.${field} is ${
        v === undefined ? "missing" : JSON.stringify(v)
      }, expected a token count`,
    );
  }
  return v;
}

/** A response body as a ModelTurn; throws an Error saying what is missing or wrong. */
export function parseAnthropicResponse(json: unknown): ModelTurn {
  const j = json as Record<string, unknown>;
  if (typeof j !== "object" || j === null) throw new Error("the body is not a JSON object");
  if (!Array.isArray(j.content)) throw new Error("the body has no content array");
  const u = j.usage as Record<string, unknown> | undefined;
  if (typeof u !== "object" || u === null) throw new Error("the body has no usage");
  let text = "";
  const toolCalls: ToolCall[] = [];
  for (const [i, block] of (j.content as Record<string, unknown>[]).entries()) {
    if (typeof block !== "object" || block === null) {
      throw new Error(`content[${i}] is not an object`);
    }
    if (block.type === "text") {
      if (typeof block.text !== "string") throw new Error(`content[${i}] (text) has no text`);
      text += (text === "" ? "" : "\n") + block.text;
    } else if (block.type === "tool_use") {
      if (typeof block.id !== "string" || typeof block.name !== "string") {
        throw new Error(`content[${i}] (tool_use) lacks its id or name`);
      }
      const input = block.input;
      const isObj = typeof input === "object" && input !== null && !Array.isArray(input);
      toolCalls.push({
        id: block.id,
        name: block.name,
        args: isObj ? input as Record<string, unknown> : null,
        argsProblem: isObj
          ? null
          : `the arguments must be a JSON object, got ${JSON.stringify(input) ?? "nothing"}`,
        rawArguments: JSON.stringify(input ?? null),
      });
    }
    // other blocks (thinking, …) are not requested and not kept
  }
  const uncached = count(u.input_tokens, "input_tokens", true);
  const cacheRead = count(u.cache_read_input_tokens, "cache_read_input_tokens", false);
  const cacheWrite = count(u.cache_creation_input_tokens, "cache_creation_input_tokens", false);
  return {
    text,
    toolCalls,
    stopReason: typeof j.stop_reason === "string" ? j.stop_reason : "unknown",
    // Anthropic's input_tokens leaves out the cached parts; our input counts them in.
    usage: {
      input: uncached + cacheRead + cacheWrite,
      output: count(u.output_tokens, "output_tokens", true),
      cacheRead,
      cacheWrite,
    },
    usageReported: true,
    reasoningTokens: 0,
  };
}
