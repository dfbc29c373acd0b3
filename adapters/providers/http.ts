/**
 * JSON over HTTP for model APIs, with retries: 408, 429, 5xx and network errors are retried
 * with exponential backoff and jitter, honouring `retry-after-ms` / `retry-after` (seconds or
 * an HTTP date), for a bounded number of tries and never past the attempt's deadline. The
 * result is a value: the parsed JSON, or a failure with a message fit for a fault record.
 */
import type {
  CallFailure,
  CompletionRequest,
  CompletionResult,
  ProviderConfig,
  RetryPolicy,
} from "../../core/ports/model_provider.ts";
import type { ModelTurn } from "../../core/codecs/providers/conversation.ts";

export const DEFAULT_RETRY: RetryPolicy = { maxTries: 6, baseDelayMs: 1000, maxDelayMs: 30_000 };

export interface PostJsonOptions {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  /** Epoch ms: no try starts, and no wait ends, after it. */
  deadline: number;
  /** Names the call in messages, e.g. `anthropic "claude-haiku-4-5"`. */
  label: string;
  fetchImpl?: typeof fetch;
  retry?: RetryPolicy;
  /** In [0, 1); for the jitter. */
  random?: () => number;
}

export type PostJsonResult =
  | { ok: true; json: unknown; status: number; tries: number }
  | { ok: false; failure: CallFailure; message: string; tries: number; status?: number };

/** `{base}{path}`, where a base that already ends in /v1 is not given a second one. */
export function endpoint(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "") + path;
}

/** A retry-after value in milliseconds from now, or null when absent or unreadable. */
export function parseRetryAfter(headers: Headers, nowMs: number): number | null {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const v = headers.get("retry-after");
  if (v === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.ceil(Number(v) * 1000);
  const date = Date.parse(v);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** The backoff before try `tryNo + 1` (tryNo ≥ 1): half fixed, half jitter, capped. */
export function backoffDelay(tryNo: number, policy: RetryPolicy, random: () => number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (tryNo - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The provider's own words from an error body: `error.message` when JSON, else the text. */
export function errorText(body: string): string {
  try {
    const j = JSON.parse(body);
    const m = j?.error?.message ?? j?.message ?? j?.error;
    if (typeof m === "string" && m.trim() !== "") return clip(m, 300);
  } catch {
    // not JSON: the text itself
  }
  const t = body.trim();
  return t === "" ? "(empty body)" : clip(t, 300);
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, n) + "…";
}

/** Waits `ms`, or less when `signal` fires; true when the whole wait passed. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** POSTs `body` as JSON and parses the JSON answer, retrying as the module doc says. */
export async function postJson(opts: PostJsonOptions): Promise<PostJsonResult> {
  const policy = opts.retry ?? DEFAULT_RETRY;
  const random = opts.random ?? Math.random;
  const doFetch = opts.fetchImpl ?? fetch;
  const payload = JSON.stringify(opts.body);
  let lastProblem = "";
  let lastStatus: number | undefined;

  for (let tryNo = 1;; tryNo++) {
    if (opts.signal.aborted) {
      return {
        ok: false,
        failure: "aborted",
        message: `${opts.label}: stopped (the attempt's time is up or the run was cancelled)`,
        tries: tryNo - 1,
      };
    }
    const remaining = opts.deadline - Date.now();
    if (remaining <= 0) {
      return {
        ok: false,
        failure: "aborted",
        message: `${opts.label}: the attempt's time ran out before the call`,
        tries: tryNo - 1,
      };
    }
    const deadlineSignal = AbortSignal.timeout(remaining);
    const signal = AbortSignal.any([opts.signal, deadlineSignal]);
    let retryAfterMs: number | null = null;
    try {
      const res = await doFetch(opts.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...opts.headers },
        body: payload,
        signal,
      });
      const text = await res.text();
      if (res.ok) {
        try {
          return { ok: true, json: JSON.parse(text), status: res.status, tries: tryNo };
        } catch {
          return {
            ok: false,
            failure: "malformed",
            message: `${opts.label}: HTTP ${res.status} answered with a body that is not JSON: ${
              JSON.stringify(clip(text, 200))
            }`,
            tries: tryNo,
            status: res.status,
          };
        }
      }
      lastStatus = res.status;
      lastProblem = `HTTP ${res.status}: ${errorText(text)}`;
      if (!isRetryableStatus(res.status)) {
        return {
          ok: false,
          failure: "http",
          message: `${opts.label}: ${lastProblem}`,
          tries: tryNo,
          status: res.status,
        };
      }
      retryAfterMs = parseRetryAfter(res.headers, Date.now());
    } catch (e) {
      if (opts.signal.aborted || deadlineSignal.aborted) {
        return {
          ok: false,
          failure: "aborted",
          message:
            `${opts.label}: stopped during the call (the attempt's time is up or the run was cancelled)`,
          tries: tryNo,
        };
      }
      lastStatus = undefined;
      lastProblem = `network error: ${(e as Error).message}`;
    }

    const failure: CallFailure = lastStatus === undefined ? "network" : "http";
    if (tryNo >= policy.maxTries) {
      return {
        ok: false,
        failure,
        message: `${opts.label}: gave up after ${tryNo} tries; last: ${lastProblem}`,
        tries: tryNo,
        status: lastStatus,
      };
    }
    const wait = retryAfterMs ?? backoffDelay(tryNo, policy, random);
    if (Date.now() + wait >= opts.deadline) {
      return {
        ok: false,
        failure: "deadline",
        message: `${opts.label}: gave up after ${tryNo} ${
          tryNo === 1 ? "try" : "tries"
        }: the next (in ${wait} ms) would start after the attempt's time; last: ${lastProblem}`,
        tries: tryNo,
        status: lastStatus,
      };
    }
    if (!(await sleep(wait, opts.signal))) {
      return {
        ok: false,
        failure: "aborted",
        message: `${opts.label}: stopped while waiting to retry (${lastProblem})`,
        tries: tryNo,
        status: lastStatus,
      };
    }
  }
}

/**
 * One completion: `req` posted to `path` of the provider's base URL in its wire format
 * (`body`, `headers`), the answer read by `parse`; what `parse` throws is a malformed response.
 */
export async function postCompletion(
  cfg: ProviderConfig,
  label: string,
  req: CompletionRequest,
  wire: { path: string; headers: Record<string, string>; body: unknown },
  parse: (json: unknown) => ModelTurn,
): Promise<CompletionResult> {
  const res = await postJson({
    url: endpoint(cfg.baseUrl, wire.path),
    headers: wire.headers,
    body: wire.body,
    signal: req.signal,
    deadline: req.deadline,
    label,
    fetchImpl: cfg.fetchImpl,
    retry: cfg.retry,
    random: cfg.random,
  });
  if (!res.ok) return res;
  try {
    return { ok: true, turn: parse(res.json), tries: res.tries };
  } catch (e) {
    return {
      ok: false,
      failure: "malformed",
      message: `${label}: malformed response: ${(e as Error).message}`,
      tries: res.tries,
      status: res.status,
    };
  }
}
