/**
 * The OpenAI Chat Completions API (`POST {base}/v1/chat/completions`, non-streaming) and
 * any server compatible with it (llama.cpp, vLLM, Ollama): function tools whose arguments
 * are a JSON string, usage with cached prompt tokens. Prompt tokens are `input`; the cached
 * part of them is `cacheRead` (billed at the cache rate, the rest at the input rate).
 */
import type { ChatMessage, ModelTurn, ToolCall, ToolSpec } from "./conversation.ts";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com";
export const OPENAI_COMPAT_DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/**
 * The request body. OpenAI's own API takes `max_completion_tokens` (its reasoning models
 * refuse `max_tokens`); compatible servers are sent `max_tokens`, which all of them read.
 */
export function openaiBody(
  model: string,
  req: { system: string; messages: ChatMessage[]; tools: ToolSpec[]; maxTokens: number },
  compatible: boolean,
): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [{ role: "system", content: req.system }];
  for (const m of req.messages) {
    switch (m.role) {
      case "user":
        messages.push({ role: "user", content: m.text });
        break;
      case "assistant":
        messages.push({
          role: "assistant",
          content: m.text === "" && m.toolCalls.length > 0 ? null : m.text,
          ...(m.toolCalls.length > 0
            ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: c.rawArguments },
              })),
            }
            : {}),
        });
        break;
      case "tool":
        for (const r of m.results) {
          messages.push({ role: "tool", tool_call_id: r.callId, content: r.content });
        }
        break;
    }
  }
  return {
    model,
    messages,
    ...(req.tools.length > 0
      ? {
        tools: req.tools.map((t) => ({
          type: "function",
          function: { name: t.name, description: t.description, parameters: t.parameters },
        })),
      }
      : {}),
    ...(compatible ? { max_tokens: req.maxTokens } : { max_completion_tokens: req.maxTokens }),
  };
}

function tokens(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
    throw new Error(
      `usage.${field} is ${
        v === undefined ? "missing" : JSON.stringify(v)
      }, expected a token count`,
    );
  }
  return v;
}

function parseToolCall(raw: unknown, i: number): ToolCall {
  const c = raw as Record<string, unknown>;
  const fn = c?.function as Record<string, unknown> | undefined;
  if (
    typeof c !== "object" || c === null || typeof fn !== "object" || fn === null ||
    typeof fn.name !== "string"
  ) {
    throw new Error(`tool_calls[${i}] has no function name`);
  }
  const id = typeof c.id === "string" && c.id !== "" ? c.id : `call_${i}`;
  const a = fn.arguments;
  let args: unknown = a;
  let problem: string | null = null;
  if (typeof a === "string") {
    try {
      args = a.trim() === "" ? {} : JSON.parse(a);
    } catch (e) {
      args = null;
      problem = `the arguments are not valid JSON (${(e as Error).message})`;
    }
  }
  const isObj = typeof args === "object" && args !== null && !Array.isArray(args);
  if (!isObj && problem === null) {
    problem = `the arguments must be a JSON object, got ${JSON.stringify(a) ?? "nothing"}`;
  }
  return {
    id,
    name: fn.name,
    args: isObj ? args as Record<string, unknown> : null,
    argsProblem: problem,
    rawArguments: typeof a === "string" ? a : JSON.stringify(a ?? {}),
  };
}

/**
 * A response body as a ModelTurn; throws an Error saying what is missing or wrong. Usage is
 * required from OpenAI; a compatible server that reports none gives zero tokens, flagged.
 */
export function parseOpenAIResponse(json: unknown, compatible: boolean): ModelTurn {
  const j = json as Record<string, unknown>;
  if (typeof j !== "object" || j === null) throw new Error("the body is not a JSON object");
  const choice = Array.isArray(j.choices) ? j.choices[0] as Record<string, unknown> : undefined;
  if (typeof choice !== "object" || choice === null) throw new Error("the body has no choices[0]");
  const message = choice.message as Record<string, unknown> | undefined;
  if (typeof message !== "object" || message === null) throw new Error("choices[0] has no message");
  let text = "";
  if (typeof message.content === "string") text = message.content;
  else if (Array.isArray(message.content)) {
    text = message.content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  } else if (message.content !== null && message.content !== undefined) {
    throw new Error("choices[0].message.content is neither text nor null");
  }
  const rawCalls = message.tool_calls ?? [];
  if (!Array.isArray(rawCalls)) throw new Error("choices[0].message.tool_calls is not an array");
  const toolCalls = rawCalls.map(parseToolCall);

  const u = j.usage as Record<string, unknown> | undefined | null;
  let usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  let reasoningTokens = 0;
  const reported = typeof u === "object" && u !== null;
  if (reported) {
    const prompt = tokens(u.prompt_tokens, "prompt_tokens");
    const completion = tokens(u.completion_tokens, "completion_tokens");
    const pd = u.prompt_tokens_details as Record<string, unknown> | undefined | null;
    const cached = pd?.cached_tokens == null
      ? 0
      : tokens(pd.cached_tokens, "prompt_tokens_details.cached_tokens");
    if (cached > prompt) {
      throw new Error(`usage has more cached tokens (${cached}) than prompt tokens (${prompt})`);
    }
    const cd = u.completion_tokens_details as Record<string, unknown> | undefined | null;
    reasoningTokens = typeof cd?.reasoning_tokens === "number" ? cd.reasoning_tokens : 0;
    usage = { input: prompt, output: completion, cacheRead: cached, cacheWrite: 0 };
  } else if (!compatible) {
    throw new Error("the body has no usage");
  }
  return {
    text,
    toolCalls,
    stopReason: typeof choice.finish_reason === "string" ? choice.finish_reason : "unknown",
    usage,
    usageReported: reported,
    reasoningTokens,
  };
}
