/**
 * What of a model request the gateway forwards, and what of the response it passes back:
 * allow-lists, so that a field or header nobody looked at is not a way out.
 *
 * - Tools: the client's own (functions, and the provider-defined tools a client runs
 *   itself) go up. Tools the provider runs reach the network or the key holder's account.
 *   Those whose cost the gateway bounds and meters (Anthropic `web_search_*`, `web_fetch_*`,
 *   `tool_search_*`; OpenAI `web_search*`, `computer_use*`; a content part the provider
 *   would fetch from a URL: provider_tools.ts) go up only when the attempt's web is live and
 *   its policy refuses no host, since dvergr can neither hold them to a policy nor record
 *   them. Those whose cost it can neither bound before they run nor meter (Anthropic
 *   `code_execution_*`, `mcp_toolset`, the `mcp_servers` and `container` fields; OpenAI
 *   `file_search`, `code_interpreter`, `mcp`, `image_generation`, Chat's
 *   `web_search_options`) are refused always: the budget could not hold them. A tool of a
 *   type not listed is refused.
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

/** Tool types the provider runs, budgeted (provider_tools.ts): only with an unrestricted web. */
const PROVIDER_TOOLS: Record<ProviderApi, RegExp> = {
  "anthropic-messages": /^(web_search|web_fetch|tool_search_tool_[a-z0-9]+)_\d{8}$/,
  "openai-chat": /^$/,
  "openai-responses": /^(web_search\w*|computer_use\w*)$/,
};

/** Tool types the provider runs whose cost cannot be bounded or metered: never. */
const UNBUDGETED_TOOLS: Record<ProviderApi, RegExp> = {
  "anthropic-messages": /^(code_execution_\d{8}|mcp_toolset)$/,
  "openai-chat": /^$/,
  "openai-responses": /^(file_search|code_interpreter|mcp|image_generation)$/,
};

/** Request fields the provider acts on at a cost that cannot be bounded or metered: never. */
const UNBUDGETED_FIELDS: Record<ProviderApi, string[]> = {
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
  const unbudgeted = (what: string) =>
    `${what}, which the provider runs at a cost the gateway can neither bound before it runs ` +
    `nor meter: the attempt's budget could not hold it, so it is not forwarded`;
  for (const f of UNBUDGETED_FIELDS[api]) {
    if (body[f] !== undefined && body[f] !== null) return unbudgeted(`the request's ${f}`);
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
    if (UNBUDGETED_TOOLS[api].test(type)) return unbudgeted(`the provider's tool "${type}"`);
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
