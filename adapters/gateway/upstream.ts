/**
 * A model request on its way to the provider and its response on its way back: the
 * headers that go up (the real key in place of the dummy one), the call, the headers that
 * come down, and the response's usage metered from its JSON or SSE body as it passes to
 * the candidate.
 *
 * Permissions: --allow-net to the model endpoints.
 */
import { NO_USAGE } from "../../core/bench/candidate.ts";
import { endpoint } from "../providers/http.ts";
import type { Ending } from "./budget_ledger.ts";
import { type MeteredUsage, type ProviderApi, SseUsageMeter, usageOfJson } from "./usage_meter.ts";

/** Bytes of a JSON (not streamed) response kept for metering. */
const MAX_METERED_JSON = 32 * 1024 * 1024;

/** Request headers passed on (others, keys above all, are dropped). */
const PASS_HEADERS = [
  "content-type",
  "accept",
  "anthropic-version",
  "anthropic-beta",
  "openai-beta",
];

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

/** The headers a response comes down with. */
export function downstreamHeaders(upstream: Response): Headers {
  const out = new Headers();
  for (const [k, v] of upstream.headers) {
    // fetch decoded the body: its encoding and length no longer apply.
    if (!["content-encoding", "content-length", "transfer-encoding", "connection"].includes(k)) {
      out.set(k, v);
    }
  }
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
  let m: MeteredUsage = sse ? sseMeter.result() : { usage: { ...NO_USAGE }, reported: false };
  if (!sse) {
    try {
      m = usageOfJson(api, JSON.parse(json));
    } catch {
      // Not JSON (an error page, or cut): no usage.
    }
  }
  // A stream that stopped before its closing usage may have cost more than it showed.
  return { usage: m.usage, reported: m.reported, accepted, cut: cut || (sse && !m.final) };
}
