/**
 * A GET from the host on an attempt's behalf (needs --allow-net). Redirects are followed by
 * hand, at most 10, and every hop is checked again: http(s) only, the bundle's policy
 * (deny first, then allow), and the addresses the host name resolves to — loopback,
 * private and link-local addresses are refused unless the bundle's :allowed-sources names
 * that host explicitly. The body is read up to a byte bound (the rest is not downloaded)
 * and the whole exchange up to a time bound. TLS trusts what Deno trusts (DENO_CERT adds a
 * CA). Name checks cannot pin the address fetch() then connects to; a host whose DNS
 * answer changes between the two (rebinding) is the residual risk.
 */
import { isInternalAddress, isIpLiteral } from "../../core/web/address.ts";
import { hostOf, normalizeHost } from "../../core/web/host.ts";
import { decideHost, type WebPolicy } from "../../core/web/policy.ts";
import type { DenialReason } from "../../core/web/types.ts";
import { VERSION } from "../../core/version.ts";

/** Bytes of a response body read at most. */
export const FETCH_MAX_BYTES = 5_000_000;
/** Milliseconds a request (all hops and the body) may take. */
export const FETCH_TIMEOUT_MS = 30_000;
export const FETCH_MAX_REDIRECTS = 10;

export interface LiveGetOptions {
  policy: WebPolicy;
  /** Hosts the bundle's :allowed-sources names itself (these may be internal addresses). */
  explicitHosts: readonly string[];
  fetchImpl?: typeof fetch;
  /** Addresses of a host name (default: DNS A and AAAA records). */
  resolve?: (host: string) => Promise<string[]>;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
  signal?: AbortSignal;
}

export type LiveGetResult =
  | {
    ok: true;
    finalUrl: string;
    status: number;
    contentType: string;
    body: string;
    /** The body was longer than the byte bound and was cut. */
    truncated: boolean;
  }
  | { ok: false; message: string; denied?: DenialReason; atUrl: string };

/** DNS A and AAAA records of a name (either may be absent). */
export async function resolveHost(host: string): Promise<string[]> {
  const out: string[] = [];
  for (const type of ["A", "AAAA"] as const) {
    try {
      out.push(...(await Deno.resolveDns(host, type)));
    } catch {
      // no records of this type
    }
  }
  return out;
}

type Hop = { ok: true } | { ok: false; message: string; denied?: DenialReason };

async function checkHop(url: URL, opts: LiveGetOptions): Promise<Hop> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      denied: "scheme",
      message: `Only http and https URLs can be fetched, not ${JSON.stringify(url.href)}`,
    };
  }
  const host = hostOf(url.href);
  if (host === null) return { ok: false, message: `${url.href} has no host` };
  const d = decideHost(opts.policy, host);
  if (!d.ok) return { ok: false, denied: d.reason, message: d.message };
  const explicit = opts.explicitHosts.some((h) => normalizeHost(h) === host);
  if (explicit) return { ok: true };
  const name = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = isIpLiteral(name)
    ? [name]
    : name === "localhost" || name.endsWith(".localhost")
    ? ["127.0.0.1"]
    : await (opts.resolve ?? resolveHost)(name);
  if (addresses.length === 0) return { ok: false, message: `Cannot resolve ${name}` };
  const internal = addresses.find(isInternalAddress);
  if (internal !== undefined) {
    return {
      ok: false,
      denied: "private-address",
      message:
        `${host} resolves to ${internal}, a loopback, private or link-local address, which this task may not read`,
    };
  }
  return { ok: true };
}

async function readBounded(
  res: Response,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { bytes, truncated };
}

function decode(bytes: Uint8Array, contentType: string): string {
  const label = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? "utf-8";
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/** An error's message with its causes (fetch() puts the TLS or socket reason in `cause`). */
function errorText(e: unknown): string {
  const parts: string[] = [];
  for (let c: unknown = e; c !== undefined && c !== null && parts.length < 4;) {
    parts.push(c instanceof Error ? c.message : String(c));
    c = c instanceof Error ? c.cause : undefined;
  }
  return parts.join(": ");
}

/** GETs a URL under the policy; never throws. */
export async function liveGet(rawUrl: string, opts: LiveGetOptions): Promise<LiveGetResult> {
  const timeoutMs = opts.timeoutMs ?? FETCH_TIMEOUT_MS;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  const onAbort = () => ctl.abort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const doFetch = opts.fetchImpl ?? fetch;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, message: `${JSON.stringify(rawUrl)} is not a URL`, atUrl: rawUrl };
  }
  try {
    for (let hop = 0;; hop++) {
      url.hash = "";
      const check = await checkHop(url, opts);
      if (!check.ok) return { ...check, atUrl: url.href };
      const res = await doFetch(url.href, {
        redirect: "manual",
        signal: ctl.signal,
        headers: {
          "user-agent": `dvergr/${VERSION} (benchmark attempt)`,
          "accept": "text/html,text/plain,application/xhtml+xml,*/*;q=0.5",
        },
      });
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location !== null) {
        await res.body?.cancel().catch(() => {});
        if (hop >= (opts.maxRedirects ?? FETCH_MAX_REDIRECTS)) {
          return {
            ok: false,
            message: `Too many redirects (more than ${opts.maxRedirects ?? FETCH_MAX_REDIRECTS})`,
            atUrl: url.href,
          };
        }
        url = new URL(location, url);
        continue;
      }
      const contentType = res.headers.get("content-type") ?? "";
      const { bytes, truncated } = await readBounded(res, opts.maxBytes ?? FETCH_MAX_BYTES);
      return {
        ok: true,
        finalUrl: url.href,
        status: res.status,
        contentType,
        body: decode(bytes, contentType),
        truncated,
      };
    }
  } catch (e) {
    if (ctl.signal.aborted) {
      return {
        ok: false,
        message: opts.signal?.aborted
          ? "The attempt ended before the page answered"
          : `The page did not answer within ${timeoutMs} ms`,
        atUrl: url.href,
      };
    }
    return {
      ok: false,
      message: `Cannot fetch ${url.href}: ${errorText(e)}`,
      atUrl: url.href,
    };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
