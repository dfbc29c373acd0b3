/**
 * The model gateway of one attempt: the only way a command candidate reaches a model API.
 *
 * - Answers `HEAD /` (and `GET /`) itself; forwards only an allow-list of provider paths:
 *   Anthropic Messages (`POST /v1/messages`), OpenAI Chat Completions
 *   (`POST /v1/chat/completions`) and Responses (`POST /v1/responses`), streamed or not
 *   (`/v1` may be left out by a client whose base URL lacks it). Anything else is a 404.
 * - The model named in a request is resolved through the model registry (or pinned, for an
 *   agent CLI candidate); the request goes to that model's real endpoint with the real key,
 *   which never enters the sandbox: the candidate holds a dummy key.
 * - Usage is metered from the JSON or SSE body into the attempt's tokens and its cost, billed
 *   and at list price (core/models/cost.ts).
 * - The attempt's budget (list price) and request cap are enforced by answering 400 in the
 *   provider's own error format, which the agent CLIs treat as final.
 * - Optionally the first model request must offer the world's MCP tools (an agent CLI that
 *   lost the MCP start-up race): otherwise 400 and the attempt is a fault.
 * - Every request is logged (bounded) as evidence.
 *
 * Permissions: --allow-net to the model endpoints.
 */
import type { Usage } from "../../core/bench/candidate.ts";
import { NO_USAGE } from "../../core/bench/candidate.ts";
import { addUsage, costMicros, type ModelPrices } from "../../core/models/cost.ts";
import type { ModelEntry, ProviderKind } from "../../core/models/registry.ts";
import { endpoint } from "../providers/http.ts";
import { BodyBytes } from "./request_body.ts";
import { type ProviderApi, SseUsageMeter, usageOfJson } from "./usage_meter.ts";

/** Where a request for one model goes and what its tokens cost. */
export interface ModelRoute {
  entry: ModelEntry;
  baseUrl: string;
  /** The real key; null sends none (local servers). */
  apiKey: string | null;
  bill: ModelPrices;
  list: ModelPrices;
}

export interface ModelGatewayOptions {
  /** The route for the model a request names (`undefined`: none named), or why there is none. */
  route(model: string | undefined, api: ProviderApi): ModelRoute | { problem: string };
  /** Spend allowed at list price, microdollars. */
  budgetMicros: number;
  /** Model requests forwarded at most. */
  maxRequests: number;
  /** The tool-name prefix the first request must offer (e.g. "mcp__world__"); none: no check. */
  requireToolPrefix?: string;
  fetchImpl?: typeof fetch;
  /** Milliseconds, for the log's times (default performance.now). */
  now?: () => number;
}

export interface GatewayLogEntry {
  /** Milliseconds since the gateway started. */
  at: number;
  method: string;
  path: string;
  model?: string;
  stream?: boolean;
  status: number;
  /** Why the gateway answered itself. */
  refused?: string;
  usage?: Usage;
  usageReported?: boolean;
  /** The offered tools included the required world tools (first request of an agent CLI). */
  worldTools?: boolean;
  ms?: number;
}

export interface GatewayFigures {
  requests: number;
  usage: Usage;
  billedMicros: number;
  listMicros: number;
  /** Tokens by registry model id. */
  byModel: Record<string, Usage>;
  /** Set when the budget or the request cap refused a request. */
  stopped: "budget" | "request-cap" | null;
  /** Why the attempt cannot be judged (world tools not offered), else null. */
  fault: string | null;
  /** The last forwarded request failed upstream (network, 429, 5xx): why. */
  upstreamProblem: string | null;
  /** Responses that carried no usage. */
  unmetered: number;
  /** A request went to a model whose prices are unknown: the money figures are not costs. */
  unpriced: boolean;
}

export interface ModelGateway {
  handle(req: Request): Promise<Response>;
  /** Waits (at most `ms`) for responses still streaming, then gives the figures. */
  settle(ms?: number): Promise<GatewayFigures>;
  /** Stops requests in flight. */
  abort(): void;
  log: GatewayLogEntry[];
}

const MAX_LOG = 500;
/**
 * Largest request body, bytes: agent CLIs send tens of kilobytes, a 200,000-token
 * conversation is about a megabyte of JSON; images are not part of a world.
 */
export const MAX_MODEL_BODY = 16 * 1024 * 1024;
/** Bytes of request bodies the gateway holds at once (read, or being forwarded). */
export const MAX_MODEL_BODIES_HELD = 2 * MAX_MODEL_BODY;
/** Bytes of a JSON (not streamed) response kept for metering. */
const MAX_METERED_JSON = 32 * 1024 * 1024;
const PATHS: Record<string, ProviderApi> = {
  "/v1/messages": "anthropic-messages",
  "/v1/chat/completions": "openai-chat",
  "/v1/responses": "openai-responses",
};
/** Request headers passed on (others, keys above all, are dropped). */
const PASS_HEADERS = [
  "content-type",
  "accept",
  "anthropic-version",
  "anthropic-beta",
  "openai-beta",
];

function providerFits(api: ProviderApi, provider: ProviderKind): boolean {
  return api === "anthropic-messages" ? provider === "anthropic" : provider !== "anthropic";
}

/** An error body the provider's own clients understand. */
export function providerError(api: ProviderApi, status: number, message: string): Response {
  const body = api === "anthropic-messages"
    ? { type: "error", error: { type: "invalid_request_error", message } }
    : { error: { message, type: "invalid_request_error", param: null, code: "dvergr_gateway" } };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** Names of the tools a request offers; Responses namespaces give `namespace__tool` too. */
export function offeredToolNames(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  const walk = (tools: unknown, prefix: string) => {
    if (!Array.isArray(tools)) return;
    for (const t of tools) {
      if (typeof t !== "object" || t === null) continue;
      const r = t as Record<string, unknown>;
      const fn = r.function as Record<string, unknown> | undefined;
      const name = typeof r.name === "string"
        ? r.name
        : typeof fn?.name === "string"
        ? fn.name
        : "";
      if (name !== "") out.push(prefix + name);
      if (Array.isArray(r.tools)) walk(r.tools, name + "__");
    }
  };
  walk(body.tools, "");
  return out;
}

function isRetryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** A model gateway for one attempt. */
export function createModelGateway(opts: ModelGatewayOptions): ModelGateway {
  const now = opts.now ?? (() => performance.now());
  const t0 = now();
  const doFetch = opts.fetchImpl ?? fetch;
  const aborter = new AbortController();
  const log: GatewayLogEntry[] = [];
  const bodies = new BodyBytes(MAX_MODEL_BODY, MAX_MODEL_BODIES_HELD);
  const pending = new Set<Promise<void>>();
  const byModel = new Map<string, { usage: Usage; route: ModelRoute }>();
  let requests = 0;
  let modelRequests = 0;
  let stopped: GatewayFigures["stopped"] = null;
  let fault: string | null = null;
  let upstreamProblem: string | null = null;
  let unmetered = 0;
  let unpriced = false;

  const record = (e: GatewayLogEntry) => {
    if (log.length < MAX_LOG) log.push(e);
  };
  const spent = (which: "bill" | "list") => {
    let total = 0;
    for (const { usage, route } of byModel.values()) total += costMicros(usage, route[which]);
    return total;
  };
  const meter = (route: ModelRoute, usage: Usage) => {
    const cur = byModel.get(route.entry.id);
    byModel.set(route.entry.id, {
      route,
      usage: addUsage(cur?.usage ?? { ...NO_USAGE }, usage),
    });
  };

  /** Reads the body within its bounds, then forwards it; the bytes are held until sent. */
  async function forward(
    req: Request,
    api: ProviderApi,
    path: string,
    entry: GatewayLogEntry,
  ): Promise<Response> {
    const read = await bodies.read(req);
    if (!read.ok) return refuse(api, entry, 413, read.reason, `dvergr: ${read.message}`);
    try {
      return await forwardBody(req, read.bytes, api, path, entry);
    } finally {
      bodies.release(read.bytes.length);
    }
  }

  async function forwardBody(
    req: Request,
    bytes: Uint8Array,
    api: ProviderApi,
    path: string,
    entry: GatewayLogEntry,
  ): Promise<Response> {
    let body: Record<string, unknown>;
    try {
      const parsed = JSON.parse(new TextDecoder().decode(bytes));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw 0;
      body = parsed;
    } catch {
      return refuse(api, entry, 400, "not-json", "The request body is not a JSON object");
    }
    const asked = typeof body.model === "string" ? body.model : undefined;
    entry.model = asked;
    entry.stream = body.stream === true;
    modelRequests++;
    if (opts.requireToolPrefix !== undefined && modelRequests === 1) {
      const names = offeredToolNames(body);
      const offered = names.some((n) => n.startsWith(opts.requireToolPrefix!));
      entry.worldTools = offered;
      if (!offered) {
        fault = `the agent's first model request did not offer the world's MCP tools ` +
          `(${opts.requireToolPrefix}*): its MCP connection was not ready (tools offered: ${
            names.slice(0, 20).join(", ") || "none"
          })`;
        return refuse(api, entry, 400, "no-world-tools", `dvergr: ${fault}`);
      }
    }
    if (requests >= opts.maxRequests) {
      stopped ??= "request-cap";
      return refuse(
        api,
        entry,
        400,
        "request-cap",
        `dvergr: this attempt's limit of ${opts.maxRequests} model requests is reached`,
      );
    }
    if (spent("list") >= opts.budgetMicros) {
      stopped ??= "budget";
      return refuse(
        api,
        entry,
        400,
        "budget",
        `dvergr: this attempt's budget of $${
          (opts.budgetMicros / 1e6).toFixed(4)
        } is spent (list price)`,
      );
    }
    const route = opts.route(asked, api);
    if ("problem" in route) return refuse(api, entry, 400, "model", `dvergr: ${route.problem}`);
    if (!providerFits(api, route.entry.provider)) {
      return refuse(
        api,
        entry,
        400,
        "model",
        `dvergr: model "${route.entry.id}" is served by ${route.entry.provider}, not through ${path}`,
      );
    }
    entry.model = route.entry.id;
    if (!route.entry.priced) unpriced = true;
    body.model = route.entry.apiModel;
    if (api === "openai-chat" && body.stream === true) {
      // Without it a streamed chat completion carries no usage to meter.
      body.stream_options = { ...(body.stream_options as object ?? {}), include_usage: true };
    }
    requests++;

    const headers = new Headers();
    for (const h of PASS_HEADERS) {
      const v = req.headers.get(h);
      if (v !== null) headers.set(h, v);
    }
    headers.set("content-type", "application/json");
    if (route.apiKey !== null) {
      if (api === "anthropic-messages") headers.set("x-api-key", route.apiKey);
      else headers.set("authorization", `Bearer ${route.apiKey}`);
    }
    if (api === "anthropic-messages" && !headers.has("anthropic-version")) {
      headers.set("anthropic-version", "2023-06-01");
    }
    const search = new URL(req.url).search;
    const started = now();
    let upstream: Response;
    try {
      upstream = await doFetch(endpoint(route.baseUrl, PATH_OF[api]) + search, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: aborter.signal,
      });
    } catch (e) {
      upstreamProblem = `cannot reach ${route.baseUrl}: ${e instanceof Error ? e.message : e}`;
      entry.ms = Math.round(now() - started);
      return refuse(api, entry, 502, "upstream", `dvergr: ${upstreamProblem}`);
    }
    entry.status = upstream.status;
    upstreamProblem = isRetryable(upstream.status)
      ? `${route.baseUrl} answered ${upstream.status}`
      : null;
    const outHeaders = new Headers();
    for (const [k, v] of upstream.headers) {
      // fetch decoded the body: its encoding and length no longer apply.
      if (!["content-encoding", "content-length", "transfer-encoding", "connection"].includes(k)) {
        outHeaders.set(k, v);
      }
    }
    if (!upstream.body) {
      entry.ms = Math.round(now() - started);
      return new Response(null, { status: upstream.status, headers: outHeaders });
    }
    const sse = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
    const [toClient, toMeter] = upstream.body.tee();
    const metering = (async () => {
      const decoder = new TextDecoder();
      const sseMeter = new SseUsageMeter(api);
      let json = "";
      try {
        for await (const chunk of toMeter) {
          const t = decoder.decode(chunk, { stream: true });
          if (sse) sseMeter.push(t);
          else if (json.length < MAX_METERED_JSON) json += t;
        }
      } catch {
        // Cut off (attempt over): what was seen is metered.
      }
      let m = sse ? sseMeter.result() : { usage: { ...NO_USAGE }, reported: false };
      if (!sse) {
        try {
          m = usageOfJson(api, JSON.parse(json));
        } catch {
          // Not JSON (an error page): no usage.
        }
      }
      if (upstream.ok && !m.reported) unmetered++;
      meter(route, m.usage);
      entry.usage = m.usage;
      entry.usageReported = m.reported;
      entry.ms = Math.round(now() - started);
    })();
    pending.add(metering);
    metering.finally(() => pending.delete(metering));
    return new Response(toClient, { status: upstream.status, headers: outHeaders });
  }

  function refuse(
    api: ProviderApi,
    entry: GatewayLogEntry,
    status: number,
    why: string,
    message: string,
  ): Response {
    entry.status = status;
    entry.refused = why;
    return providerError(api, status, message);
  }

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const entry: GatewayLogEntry = {
      at: Math.round(now() - t0),
      method: req.method,
      path,
      status: 0,
    };
    record(entry);
    if (path === "/" && (req.method === "HEAD" || req.method === "GET")) {
      entry.status = 200;
      return new Response(req.method === "HEAD" ? null : "dvergr model gateway\n", {
        status: 200,
        headers: { "content-type": "text/plain" },
      });
    }
    const api = PATHS[path] ?? PATHS["/v1" + path];
    if (api === undefined || req.method !== "POST") {
      entry.status = 404;
      entry.refused = "path";
      return new Response(
        JSON.stringify({
          error: {
            type: "not_found_error",
            message: `dvergr model gateway: ${req.method} ${path} is not a model API path ` +
              `(POST ${Object.keys(PATHS).join(", ")})`,
          },
        }),
        { status: 404, headers: { "content-type": "application/json" } },
      );
    }
    return await forward(req, api, path, entry);
  }

  return {
    handle,
    log,
    abort: () => aborter.abort(),
    async settle(ms = 5000) {
      if (pending.size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          Promise.all([...pending]),
          new Promise((r) => timer = setTimeout(r, ms)),
        ]);
        clearTimeout(timer);
      }
      let usage = { ...NO_USAGE };
      const models: Record<string, Usage> = {};
      for (const [id, m] of [...byModel.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
        usage = addUsage(usage, m.usage);
        models[id] = m.usage;
      }
      return {
        requests,
        usage,
        billedMicros: spent("bill"),
        listMicros: spent("list"),
        byModel: models,
        stopped,
        fault,
        upstreamProblem,
        unmetered,
        unpriced,
      };
    },
  };
}

const PATH_OF: Record<ProviderApi, string> = {
  "anthropic-messages": "/v1/messages",
  "openai-chat": "/v1/chat/completions",
  "openai-responses": "/v1/responses",
};
