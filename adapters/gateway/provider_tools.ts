/**
 * The tools a provider runs itself that the model gateway budgets: web search and web fetch
 * (Anthropic `web_search_*`, `web_fetch_*`; OpenAI Responses `web_search*`), forwarded only
 * when the attempt's web is live and open (forward_policy.ts). Their use costs a fee per use
 * (`:tool-prices` of models.edn) and tokens (their results are read as input), so:
 *
 * - **Bounded before forwarding.** Each use is capped by the request: Anthropic's `max_uses`
 *   per tool and web fetch's `max_content_tokens`, OpenAI's `max_tool_calls` for the whole
 *   response. Where the request gives none the gateway writes DEFAULT_MAX_USES (and
 *   DEFAULT_FETCH_TOKENS) in, as it writes an output limit.
 * - **Reserved.** The provider runs a loop: it samples the model, runs the tools it called,
 *   and samples again with their results, and bills the input of every sampling. With S
 *   samplings at most (one per use plus one; for Anthropic at most SERVER_LOOP_ITERATIONS,
 *   after which it answers `pause_turn`) and R result tokens at most (web fetch: each use's
 *   `max_content_tokens`; web search: SEARCH_RESULT_TOKENS a use, a stated bound, since
 *   neither provider caps a search's results), the request's input is at most S times its
 *   own plus R read by every sampling but the first: `worstInputTokens`. Every allowed use
 *   is reserved at its fee.
 * - **Metered.** Uses are counted from the response: Anthropic
 *   `usage.server_tool_use.web_search_requests` / `web_fetch_requests`, OpenAI's
 *   `web_search_call` output items; each at its fee (for OpenAI the dearest of the web search
 *   tools the request offered, the response does not say which ran).
 *
 * Permissions: none.
 */
import type { ToolPrices } from "../../core/models/registry.ts";
import { picoPerToken } from "../../core/models/cost.ts";
import { NO_TOOL_USES, type ProviderApi, type ToolKind, type ToolUses } from "./usage_meter.ts";

/** Uses of a tool allowed when the request caps none. */
export const DEFAULT_MAX_USES = 3;
/** Tokens of a fetched page allowed when the request caps none (web fetch). */
export const DEFAULT_FETCH_TOKENS = 20_000;
/** The stated bound of one web search's results, in input tokens. */
export const SEARCH_RESULT_TOKENS = 20_000;
/** Samplings of Anthropic's server-side tool loop in one request at most (then pause_turn). */
export const SERVER_LOOP_ITERATIONS = 10;

/** Fees per use, picodollars, at bill and at list price. */
export type ToolFees = Record<ToolKind, { bill: bigint; list: bigint }>;
export const NO_TOOL_FEES: ToolFees = {
  webSearch: { bill: 0n, list: 0n },
  webFetch: { bill: 0n, list: 0n },
};

/** What a request's provider-side tools may add at most, once bounded. */
export interface ToolBound {
  /** Uses allowed, by kind. */
  uses: ToolUses;
  /** Input tokens their results may add, read once. */
  resultTokens: number;
  /** Samplings of the provider's tool loop at most (1 without such tools). */
  samplings: number;
  /** Each use's fee. */
  fees: ToolFees;
}

type Obj = Record<string, unknown>;

function count(v: unknown): number | null {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

/** Dollars per 1,000 uses as picodollars per use. */
function perUse(dollarsPerThousand: number | undefined): bigint {
  return picoPerToken(dollarsPerThousand ?? 0) * 1000n;
}

/**
 * Bounds the request's provider-side web tools (writing the caps it lacks into `body`) and
 * says what they may add; `billed` false: the model bills no fees (a subscription).
 */
export function boundProviderTools(
  api: ProviderApi,
  body: Obj,
  prices: ToolPrices,
  billed: boolean,
): ToolBound {
  const tools = Array.isArray(body.tools) ? body.tools as Obj[] : [];
  const fee = (provider: string, tool: string) => {
    const list = perUse(prices[provider]?.[tool]);
    return { bill: billed ? list : 0n, list };
  };
  const bound: ToolBound = {
    uses: { ...NO_TOOL_USES },
    resultTokens: 0,
    samplings: 1,
    fees: structuredClone(NO_TOOL_FEES),
  };
  if (api === "anthropic-messages") {
    let toolSearch = false;
    for (const t of tools) {
      const type = typeof t?.type === "string" ? t.type : "";
      if (/^tool_search_tool_/.test(type)) toolSearch = true;
      const kind: ToolKind | null = /^web_search_\d{8}$/.test(type)
        ? "webSearch"
        : /^web_fetch_\d{8}$/.test(type)
        ? "webFetch"
        : null;
      if (kind === null) continue;
      const uses = count(t.max_uses) ?? DEFAULT_MAX_USES;
      t.max_uses = uses;
      let tokens = SEARCH_RESULT_TOKENS;
      if (kind === "webFetch") {
        tokens = count(t.max_content_tokens) ?? DEFAULT_FETCH_TOKENS;
        t.max_content_tokens = tokens;
      }
      bound.uses[kind] += uses;
      bound.resultTokens += uses * tokens;
      bound.fees[kind] = fee("anthropic", kind === "webSearch" ? "web-search" : "web-fetch");
    }
    const uses = bound.uses.webSearch + bound.uses.webFetch;
    // Tool search runs without a cap of its own: the loop's own limit bounds it.
    bound.samplings = toolSearch
      ? SERVER_LOOP_ITERATIONS
      : Math.min(1 + uses, SERVER_LOOP_ITERATIONS);
    return bound;
  }
  if (api !== "openai-responses") return bound;
  const searches = tools.map((t) => typeof t?.type === "string" ? t.type : "")
    .filter((type) => /^web_search\w*$/.test(type));
  if (searches.length === 0) return bound;
  const calls = count(body.max_tool_calls) ?? DEFAULT_MAX_USES;
  body.max_tool_calls = calls;
  bound.uses.webSearch = calls;
  bound.resultTokens = calls * SEARCH_RESULT_TOKENS;
  bound.samplings = 1 + calls;
  // The response does not say which search tool ran: the dearest offered.
  for (const type of searches) {
    const f = fee("openai", type === "web_search_preview" ? "web-search-preview" : "web-search");
    if (f.list > bound.fees.webSearch.list) bound.fees.webSearch = f;
  }
  return bound;
}

/**
 * A request's input tokens at most, `own` being those of the request itself, once its
 * provider-side tools' loop has run as far as `bound` allows.
 */
export function worstLoopInput(own: number, bound: ToolBound): number {
  return bound.samplings * own + (bound.samplings - 1) * bound.resultTokens;
}

/** The fees of `uses` at `fees`, picodollars, at bill or list price. */
export function feesPico(uses: ToolUses, fees: ToolFees, which: "bill" | "list"): bigint {
  return BigInt(uses.webSearch) * fees.webSearch[which] +
    BigInt(uses.webFetch) * fees.webFetch[which];
}

/** Adds two counts of tool uses. */
export function addToolUses(a: ToolUses, b: ToolUses): ToolUses {
  return { webSearch: a.webSearch + b.webSearch, webFetch: a.webFetch + b.webFetch };
}
