/**
 * What of a model request the gateway forwards, and what of the response it passes back:
 * allow-lists, so that a field or header nobody looked at is not a way out.
 *
 * - Tools: the client's own (functions, and the provider-defined tools a client runs
 *   itself) go up. Tools the provider runs reach the network or the key holder's account
 *   (Anthropic `web_search_*`, `web_fetch_*`, `code_execution_*`, `tool_search_*`,
 *   `mcp_toolset`, the `mcp_servers` and `container` fields; OpenAI `web_search*`,
 *   `file_search`, `code_interpreter`, `computer_use*`, `mcp`, `image_generation`, Chat's
 *   `web_search_options`; a content part the provider would fetch from a URL): they go up
 *   only when the attempt's web is live and its policy refuses no host, since dvergr can
 *   neither hold them to a policy nor record them. A tool of a type not listed is refused.
 * - A priority service tier or an hour-long prompt cache is refused: billed above the
 *   registry's prices, it would pass the budget's reservation.
 * - State kept at the provider under the key (`previous_response_id`, `conversation`,
 *   `prompt`, `background` runs) is refused: it is the key holder's, not the attempt's,
 *   and its tokens would escape the budget's reservation.
 * - Beta headers: only betas known to change nothing but the shape of a call (those the
 *   agent CLIs send); others (the MCP connector, code execution, files, a 1M context or an
 *   hour-long cache, both billed above the registry's prices) are dropped.
 * - Response headers: the content type, request ids, retry and rate-limit headers.
 *
 * Permissions: none.
 */
import { contentParts, type PartsReading } from "./request_parts.ts";
import type { ProviderApi } from "./usage_meter.ts";

type Obj = Record<string, unknown>;

/** Tool types a client runs itself, by API. */
const CLIENT_TOOLS: Record<ProviderApi, RegExp> = {
  "anthropic-messages": /^(custom|(bash|text_editor|computer|memory)_\d{8})$/,
  "openai-chat": /^(function|custom)$/,
  "openai-responses": /^(function|custom|namespace|local_shell|shell|apply_patch)$/,
};

/** Tool types the provider runs: allowed only with an unrestricted web. */
const PROVIDER_TOOLS: Record<ProviderApi, RegExp> = {
  "anthropic-messages":
    /^((web_search|web_fetch|code_execution|tool_search_tool_[a-z0-9]+)_\d{8}|mcp_toolset)$/,
  "openai-chat": /^$/,
  "openai-responses":
    /^(web_search\w*|file_search|code_interpreter|computer_use\w*|mcp|image_generation)$/,
};

/** Request fields the provider acts on by reaching the network: with an unrestricted web. */
const PROVIDER_FIELDS: Record<ProviderApi, string[]> = {
  "anthropic-messages": ["mcp_servers", "container"],
  "openai-chat": ["web_search_options"],
  "openai-responses": [],
};

/** Request fields naming state kept at the provider: never. */
const STATE_FIELDS: Record<ProviderApi, string[]> = {
  "anthropic-messages": [],
  "openai-chat": [],
  "openai-responses": ["previous_response_id", "conversation", "prompt"],
};

/** Service tiers billed at the registry's prices or below. */
const TIERS = new Set(["auto", "default", "flex", "standard_only"]);

/**
 * Why a request would be billed above the registry's prices (a priority tier, an hour-long
 * prompt cache), or null: the budget's reservation would not bound it.
 */
function pricedAbove(api: ProviderApi, body: Obj): string | null {
  const tier = body.service_tier;
  if (tier !== undefined && tier !== null && !TIERS.has(String(tier))) {
    return `the service tier "${String(tier).slice(0, 40)}", billed above the registry's prices`;
  }
  const cached = [...contentParts(api, body), ...(Array.isArray(body.tools) ? body.tools : [])];
  for (const p of cached) {
    const ttl = (p?.cache_control as Obj | undefined)?.ttl;
    if (ttl !== undefined && ttl !== "5m") {
      return `a prompt cache kept for ${
        String(ttl).slice(0, 20)
      }, billed above the registry's prices`;
    }
  }
  return null;
}

/** Why a request cannot be forwarded, or null. */
export function requestProblem(
  api: ProviderApi,
  body: Obj,
  parts: PartsReading,
  unrestrictedWeb: boolean,
): string | null {
  const needsWeb = (what: string) =>
    unrestrictedWeb ? null : `${what}, which reaches the network from the provider: this ` +
      `attempt's web is not live and open (the bundle's web policy), so it is not forwarded`;
  for (const f of STATE_FIELDS[api]) {
    if (body[f] !== undefined && body[f] !== null) {
      return `the request names state kept at the provider (${f}), which is not the attempt's`;
    }
  }
  if (api === "openai-responses" && body.background === true) {
    return "a background response runs past its request: it cannot be metered";
  }
  const dearer = pricedAbove(api, body);
  if (dearer !== null) return `the request asks for ${dearer}`;
  for (const f of PROVIDER_FIELDS[api]) {
    if (body[f] !== undefined && body[f] !== null) {
      const p = needsWeb(`the request's ${f}`);
      if (p) return p;
    }
  }
  if (parts.fetched > 0) {
    const p = needsWeb("an image given by URL");
    if (p) return p;
  }
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    const type = typeof t?.type === "string" ? t.type : null;
    // A tool without a type is a client tool (Anthropic's custom tools may leave it out).
    if (type === null || CLIENT_TOOLS[api].test(type)) continue;
    if (PROVIDER_TOOLS[api].test(type)) {
      const p = needsWeb(`the provider's tool "${type}"`);
      if (p) return p;
      continue;
    }
    return `a tool of type "${String(type).slice(0, 60)}", which the gateway does not forward`;
  }
  return null;
}

/** Betas that change the shape of a call, not what it reaches or what it costs. */
const ANTHROPIC_BETAS = new Set([
  "claude-code-20250219",
  "interleaved-thinking-2025-05-14",
  "fine-grained-tool-streaming-2025-05-14",
  "token-efficient-tools-2025-02-19",
  "thinking-token-count-2026-05-13",
  "context-management-2025-06-27",
  "prompt-caching-2024-07-31",
  "prompt-caching-scope-2026-01-05",
  "mid-conversation-system-2026-04-07",
  "effort-2025-11-24",
  "structured-outputs-2025-11-13",
  "output-128k-2025-02-19",
]);
const OPENAI_BETAS = new Set(["responses=experimental", "responses=v1"]);

/** The listed betas of a beta header's value, or null when none is left. */
export function allowedBetas(
  header: "anthropic-beta" | "openai-beta",
  value: string,
): string | null {
  const allowed = header === "anthropic-beta" ? ANTHROPIC_BETAS : OPENAI_BETAS;
  const kept = value.split(",").map((b) => b.trim()).filter((b) => allowed.has(b));
  return kept.length === 0 ? null : kept.join(",");
}

const RESPONSE_HEADERS = new Set([
  "content-type",
  "request-id",
  "x-request-id",
  "retry-after",
  "retry-after-ms",
  "x-should-retry",
]);

/** Whether a response header comes down to the candidate. */
export function passesDown(name: string): boolean {
  const n = name.toLowerCase();
  return RESPONSE_HEADERS.has(n) || n.startsWith("anthropic-ratelimit-") ||
    n.startsWith("x-ratelimit-");
}
