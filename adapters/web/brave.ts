/**
 * web_search through the Brave Search API (needs --allow-net): GET
 * `<base>/res/v1/web/search?q=…&count=…` with the key in `X-Subscription-Token`. The key is
 * BRAVE_API_KEY (it stays on the host); the base is DVERGR_BRAVE_BASE_URL when set (local
 * tests), else https://api.search.brave.com.
 */
import { DvergrError } from "../../core/errors.ts";
import { pageText } from "../../core/web/text.ts";
import type { SearchHit, WebSearchOutcome } from "../../core/web/types.ts";

export const BRAVE_DEFAULT_BASE_URL = "https://api.search.brave.com";
export const BRAVE_KEY_VARIABLE = "BRAVE_API_KEY";
export const BRAVE_BASE_VARIABLE = "DVERGR_BRAVE_BASE_URL";
const SEARCH_TIMEOUT_MS = 30_000;

export interface BraveConfig {
  apiKey: string;
  baseUrl: string;
  fetchImpl?: typeof fetch;
  timeoutMs?: number;
}

/**
 * The Brave configuration from the environment; API_KEY_MISSING (before any cell starts)
 * when there is no key, BUNDLE_INVALID-like usage error when the base is not a URL.
 */
export function braveConfigFrom(
  env: (k: string) => string | undefined,
  bundleName: string,
): BraveConfig {
  const apiKey = env(BRAVE_KEY_VARIABLE)?.trim();
  if (!apiKey) {
    throw new DvergrError(
      "API_KEY_MISSING",
      `Cannot benchmark "${bundleName}": its tasks search the web and ${BRAVE_KEY_VARIABLE} is not set`,
      {
        hint:
          `Export ${BRAVE_KEY_VARIABLE} with a Brave Search API key, or freeze the bundle (\`dvergr freeze\`) to run it offline`,
        details: { variable: BRAVE_KEY_VARIABLE },
      },
    );
  }
  const base = env(BRAVE_BASE_VARIABLE)?.trim() || BRAVE_DEFAULT_BASE_URL;
  try {
    const u = new URL(base);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new DvergrError(
      "USAGE",
      `${BRAVE_BASE_VARIABLE} is ${JSON.stringify(base)}, not an http(s) URL`,
      { hint: `Set ${BRAVE_BASE_VARIABLE} to a URL such as "http://127.0.0.1:8080", or unset it` },
    );
  }
  return { apiKey, baseUrl: base.replace(/\/+$/, "") };
}

/** One search; never throws. */
export async function braveSearch(
  cfg: BraveConfig,
  query: string,
  count: number,
  signal?: AbortSignal,
): Promise<WebSearchOutcome> {
  const url = new URL(`${cfg.baseUrl}/res/v1/web/search`);
  url.searchParams.set("q", query);
  url.searchParams.set("count", String(count));
  const timeoutMs = cfg.timeoutMs ?? SEARCH_TIMEOUT_MS;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  const onAbort = () => ctl.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await (cfg.fetchImpl ?? fetch)(url.href, {
      signal: ctl.signal,
      headers: { "accept": "application/json", "x-subscription-token": cfg.apiKey },
    });
    const text = await res.text();
    if (!res.ok) {
      return {
        ok: false,
        message: `The search failed: Brave Search answered ${res.status}: ${text.slice(0, 300)}`,
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { ok: false, message: "The search failed: Brave Search answered something not JSON" };
    }
    const results = (body as { web?: { results?: unknown } })?.web?.results;
    const hits: SearchHit[] = [];
    for (const r of Array.isArray(results) ? results : []) {
      const o = r as Record<string, unknown>;
      if (typeof o?.url !== "string") continue;
      hits.push({
        url: o.url,
        title: pageText(typeof o.title === "string" ? o.title : o.url),
        description: pageText(typeof o.description === "string" ? o.description : ""),
      });
    }
    return { ok: true, hits: hits.slice(0, count) };
  } catch (e) {
    return {
      ok: false,
      message: ctl.signal.aborted
        ? `The search did not answer within ${timeoutMs} ms`
        : `The search failed: ${e instanceof Error ? e.message : String(e)}`,
    };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
