/**
 * A model request on its way to the provider and its response on its way back: the
 * headers that go up (the real key in place of the dummy one, listed betas only), the
 * call (no query string), the headers that come down (listed ones only), and the response's usage metered from its JSON or SSE body as it passes to
 * the candidate.
 *
 * Permissions: --allow-net to the model endpoints.
 */
import { NO_USAGE } from "../../core/bench/candidate.ts";
import { endpoint } from "../providers/http.ts";
import type { Ending } from "./budget_ledger.ts";
import { allowedBetas, passesDown } from "./forward_policy.ts";
import {
  type MeteredUsage,
  NO_TOOL_USES,
  type ProviderApi,
  SseUsageMeter,
  usageOfJson,
} from "./usage_meter.ts";

/** Bytes of a JSON (not streamed) response kept for metering. */
const MAX_METERED_JSON = 32 * 1024 * 1024;

/** Request headers passed on (others, keys above all, are dropped); betas are filtered. */
const PASS_HEADERS = ["accept", "anthropic-version"];

export const PATH_OF: Record<ProviderApi, string> = {
  "anthropic-messages": "/v1/messages",
  "openai-chat": "/v1/chat/completions",
  "openai-responses": "/v1/responses",
};

/** The headers a request goes up with: the passed ones and the real key. */
export function upstreamHeaders(req: Request, api: ProviderApi, apiKey: string | null): Headers {
  const headers = new Headers();
  for (const h of PASS_HEADERS) {
    const v = req.headers.get(h);
    if (v !== null) headers.set(h, v);
  }
  for (const h of ["anthropic-beta", "openai-beta"] as const) {
    const v = req.headers.get(h);
    const kept = v === null ? null : allowedBetas(h, v);
    if (kept !== null) headers.set(h, kept);
  }
  headers.set("content-type", "application/json");
  if (apiKey !== null) {
    if (api === "anthropic-messages") headers.set("x-api-key", apiKey);
    else headers.set("authorization", `Bearer ${apiKey}`);
  }
  if (api === "anthropic-messages" && !headers.has("anthropic-version")) {
    headers.set("anthropic-version", "2023-06-01");
  }
  return headers;
}

/** The headers a response comes down with: the allow-list's (forward_policy.ts). */
export function downstreamHeaders(upstream: Response): Headers {
  const out = new Headers();
  // fetch decoded the body: its encoding and length no longer apply (and are not listed).
  for (const [k, v] of upstream.headers) if (passesDown(k)) out.set(k, v);
  return out;
}

/** Calls the provider; a network failure is a value. */
export async function callProvider(
  doFetch: typeof fetch,
  baseUrl: string,
  api: ProviderApi,
  headers: Headers,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<{ ok: true; response: Response } | { ok: false; message: string }> {
  try {
    const response = await doFetch(endpoint(baseUrl, PATH_OF[api]), {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal,
    });
    return { ok: true, response };
  } catch (e) {
    return { ok: false, message: `cannot reach ${baseUrl}: ${e instanceof Error ? e.message : e}` };
  }
}

/**
 * Reads the metering copy of a response body to its end (or until it is cut off) and says
 * how it ended.
 */
export async function meterBody(
  api: ProviderApi,
  stream: ReadableStream<Uint8Array>,
  sse: boolean,
  accepted: boolean,
): Promise<Ending> {
  const decoder = new TextDecoder();
  const sseMeter = new SseUsageMeter(api);
  let json = "";
  let cut = false;
  try {
    for await (const chunk of stream) {
      const t = decoder.decode(chunk, { stream: true });
      if (sse) sseMeter.push(t);
      else if (json.length < MAX_METERED_JSON) json += t;
    }
  } catch {
    // Cut off (attempt over, connection broken): what was seen is metered.
    cut = true;
  }
  let m: MeteredUsage = sse
    ? sseMeter.result()
    : { usage: { ...NO_USAGE }, reported: false, tools: { ...NO_TOOL_USES } };
  if (!sse) {
    try {
      m = usageOfJson(api, JSON.parse(json));
    } catch {
      // Not JSON (an error page, or cut): no usage.
    }
  }
  // A stream that stopped before its closing usage may have cost more than it showed.
  return {
    usage: m.usage,
    reported: m.reported,
    accepted,
    cut: cut || (sse && !m.final),
    tools: m.tools,
  };
}
