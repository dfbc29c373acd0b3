/**
 * The web of one attempt: the bundle's policy, composed with the user's (the home's
 * web-policy.edn, `--allow-sources`/`--block-sources`), in front of a live transport (a GET
 * from the host, Brave Search) or a frozen one (web.edn), with everything recorded. The
 * deny-list is decided here, before either transport is asked, so a frozen web cannot
 * answer a blocked host; search hits the attempt could not read (blocked or not allowed)
 * are left out.
 */
import { join } from "node:path";
import type { Bundle } from "../../core/bundle/types.ts";
import { BRAVE_SEARCH_URL, type FrozenPages, frozenTransport } from "../../core/web/frozen.ts";
import { hostOf } from "../../core/web/host.ts";
import {
  decideHost,
  effectivePolicy,
  type WebMode,
  webModeOf,
  type WebPolicy,
} from "../../core/web/policy.ts";
import { readWebPolicyText, WEB_POLICY_FILE } from "../../core/web/policy_file.ts";
import { DvergrError } from "../../core/errors.ts";
import { readInputFile } from "../files/input_file.ts";
import { WebRecorder } from "../../core/web/record.ts";
import { pageText, pageTitle } from "../../core/web/text.ts";
import type {
  SearchHit,
  WebFetchOutcome,
  WebSearchOutcome,
  WorldWeb,
} from "../../core/web/types.ts";
import { type BraveConfig, braveConfigFrom, braveSearch } from "./brave.ts";
import { liveGet, type LiveGetOptions } from "./live_get.ts";
import type { AttemptWeb, BundleWeb, WebClient } from "../../core/ports/web_client.ts";

/** How the host reaches the live web (tests point these at local servers). */
export interface LiveWebConfig {
  brave: BraveConfig;
  fetchImpl?: typeof fetch;
  resolve?: LiveGetOptions["resolve"];
  maxBytes?: number;
  timeoutMs?: number;
}

/**
 * What a bundle's attempts need from the host's environment, checked before any cell
 * starts: a live web needs BRAVE_API_KEY (a DvergrError names it otherwise).
 */
export function webSetupFor(
  bundle: Bundle,
  env: (k: string) => string | undefined,
  user: WebPolicy | null = null,
): { mode: WebMode; live: LiveWebConfig | null } {
  const mode = webModeOf(bundle.definition, user);
  if (mode !== "live") return { mode, live: null };
  return { mode, live: { brave: braveConfigFrom(env, bundle.name) } };
}

/**
 * GETs one attempt may have in flight at once (an MCP client can call tools concurrently):
 * each may hold up to the body bound in memory.
 */
export const LIVE_FETCHES_AT_ONCE = 4;

/** A counting semaphore: the returned function waits for a slot and gives its release. */
function gate(n: number): () => Promise<() => void> {
  let free = n;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return () => {
    if (free > 0) {
      free--;
      return Promise.resolve(release);
    }
    return new Promise((resolve) => waiting.push(() => resolve(release)));
  };
}

function stripFragment(url: string): string {
  const i = url.indexOf("#");
  return i < 0 ? url : url.slice(0, i);
}

/**
 * The attempt's web, or null when the bundle lets it read nothing; `user` is the user's
 * policy, composed with the bundle's.
 */
export function createAttemptWeb(
  bundle: Bundle,
  setup: { mode: WebMode; live: LiveWebConfig | null },
  user: WebPolicy | null = null,
): AttemptWeb | null {
  if (setup.mode === "off") return null;
  const policy = effectivePolicy(bundle.definition, user);
  const recorder = new WebRecorder(setup.mode);
  const readable = (h: SearchHit) => {
    const host = hostOf(h.url);
    return host !== null && decideHost(policy, host).ok;
  };

  if (setup.mode === "frozen") {
    const transport = frozenTransport((bundle.web ?? {}) as FrozenPages);
    const web: WorldWeb = {
      mode: "frozen",
      search(query, count): Promise<WebSearchOutcome> {
        recorder.search(query);
        const u = new URL(BRAVE_SEARCH_URL);
        u.searchParams.set("q", query);
        u.searchParams.set("count", String(count));
        const r = transport({ method: "GET", url: u.href });
        if (r.status !== 200) return Promise.resolve({ ok: false, message: r.body });
        const hits = (JSON.parse(r.body).web.results as SearchHit[]).filter(readable);
        return Promise.resolve({ ok: true, hits });
      },
      fetch(raw): Promise<WebFetchOutcome> {
        const url = stripFragment(raw);
        const host = hostOf(url);
        const d = host === null ? null : decideHost(policy, host);
        if (d && !d.ok) {
          recorder.request({ url, denied: d.reason, message: d.message });
          return Promise.resolve({ ok: false, message: d.message, denied: d.reason });
        }
        const r = transport({ method: "GET", url });
        recorder.request({ url, status: r.status });
        if (r.status < 400) recorder.page([url], r.body, bundle.web?.[url]?.title ?? null);
        return Promise.resolve({ ok: true, url, finalUrl: url, status: r.status, text: r.body });
      },
    };
    return { web, recorder };
  }

  const live = setup.live!;
  const explicitHosts = bundle.definition.allowedSources ?? [];
  const slots = gate(LIVE_FETCHES_AT_ONCE);
  const web: WorldWeb = {
    mode: "live",
    unrestricted: policy.allow === null && policy.deny.length === 0,
    async search(query, count, signal) {
      recorder.search(query);
      const r = await braveSearch(
        { ...live.brave, fetchImpl: live.brave.fetchImpl ?? live.fetchImpl },
        query,
        count,
        signal,
      );
      return r.ok ? { ok: true, hits: r.hits.filter(readable) } : r;
    },
    async fetch(raw, signal) {
      const url = stripFragment(raw);
      const release = await slots();
      const r = await liveGet(url, {
        policy,
        explicitHosts,
        fetchImpl: live.fetchImpl,
        resolve: live.resolve,
        maxBytes: live.maxBytes,
        timeoutMs: live.timeoutMs,
        signal,
      }).finally(release);
      if (!r.ok) {
        recorder.request({
          url,
          ...(r.atUrl !== url ? { finalUrl: r.atUrl } : {}),
          ...(r.denied ? { denied: r.denied } : {}),
          message: r.message,
        });
        return { ok: false, message: r.message, ...(r.denied ? { denied: r.denied } : {}) };
      }
      const text = pageText(r.body);
      recorder.request({
        url,
        ...(r.finalUrl !== url ? { finalUrl: r.finalUrl } : {}),
        status: r.status,
        ...(r.truncated ? { message: "the body was cut at the size bound" } : {}),
      });
      if (r.status < 400) recorder.page([url, r.finalUrl], text, pageTitle(r.body));
      return { ok: true, url, finalUrl: r.finalUrl, status: r.status, text };
    },
  };
  return { web, recorder };
}

/** The host's web: live (keys from the environment) or frozen, under each bundle's policy. */
export const hostWebClient: WebClient = {
  forBundle(bundle, opts): BundleWeb {
    const user = opts.policy ?? null;
    const mode = webModeOf(bundle.definition, user);
    let live: LiveWebConfig | null = null;
    const liveConfig = (): LiveWebConfig => {
      live ??= { ...opts.live, brave: braveConfigFrom(opts.env, bundle.name) };
      return live;
    };
    return {
      mode,
      preflight() {
        if (mode === "live") liveConfig();
      },
      open() {
        if (mode === "off") return null;
        return createAttemptWeb(
          bundle,
          { mode, live: mode === "live" ? liveConfig() : null },
          user,
        );
      },
    };
  },
  homePolicy: readHomePolicy,
};

/** Bytes a home's web-policy.edn may have. */
const POLICY_FILE_MAX_BYTES = 1 << 20;

/** `<homeDir>/web-policy.edn` read (core/web/policy_file.ts), or null when there is none. */
export async function readHomePolicy(homeDir: string): Promise<WebPolicy | null> {
  const file = join(homeDir, WEB_POLICY_FILE);
  let bytes: Uint8Array;
  try {
    bytes = await readInputFile(file, {
      shown: file,
      what: "web policy",
      maxBytes: POLICY_FILE_MAX_BYTES,
      hint: `Make ${file} a regular file of at most 1 MiB, or remove it`,
    });
  } catch (e) {
    if (e instanceof DvergrError && e.code === "NOT_FOUND" && /no such file/.test(e.message)) {
      return null;
    }
    throw e;
  }
  return readWebPolicyText(new TextDecoder().decode(bytes), file);
}
