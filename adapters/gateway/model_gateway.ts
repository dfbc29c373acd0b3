/**
 * The model gateway of one attempt: the only way a command candidate reaches a model API.
 *
 * - Answers `HEAD /` (and `GET /`) itself; forwards only an allow-list of provider paths:
 *   Anthropic Messages (`POST /v1/messages`), OpenAI Chat Completions
 *   (`POST /v1/chat/completions`) and Responses (`POST /v1/responses`), streamed or not
 *   (`/v1` may be left out by a client whose base URL lacks it). Anything else is a 404.
 * - The model named in a request is resolved through the model registry (or pinned, for an
 *   agent CLI candidate); the request goes to that model's real endpoint with the real key,
 *   which never enters the sandbox: the candidate holds a dummy key. A model that is not one
 *   of the attempt's (routes.ts) is refused before anything is sent, and the attempt fails.
 * - Usage is metered from the JSON or SSE body into the attempt's tokens and its cost, billed
 *   and at list price (core/models/cost.ts).
 * - The attempt's budget (list price) holds against requests in parallel: a request is
 *   forwarded only once it holds a reservation of its worst case (budget_ledger.ts,
 *   request_limits.ts, and the provider's own web tools: provider_tools.ts), its output
 *   limit cut to what the budget can pay; the metered usage (and tool fees) replaces the
 *   reservation when its response ends. A request the budget cannot pay for,
 *   or past the request cap, is answered 400 in the provider's own error format, which the
 *   agent CLIs treat as final.
 * - The attempt's share of the provider (provider_share.ts): at most four requests in flight
 *   (the rest wait their turn); a refusal (408, 429, 5xx, unreachable) of an attempt within
 *   its fair share is retried here as the provider asks, and one that outlasts the retries is
 *   a fault; over its share the refusal is the candidate's doing and the attempt fails for it.
 * - Optionally the first model request must offer the world's MCP tools (an agent CLI that
 *   lost the MCP start-up race): otherwise 400 and the attempt is a fault.
 * - Requests are forwarded from an allow-list (forward_policy.ts): provider-side tools that
 *   reach the network only with an unrestricted web, no state kept at the provider, listed
 *   betas, no query string; only listed response headers come back.
 * - Every request is logged (bounded) as evidence.
 *
 * Permissions: --allow-net to the model endpoints.
 */
import type { Usage } from "../../core/bench/candidate.ts";
import { NO_USAGE } from "../../core/bench/candidate.ts";
import { addUsage, type ModelPrices, picoToMicros } from "../../core/models/cost.ts";
import type { ModelEntry, ProviderKind, ToolPrices } from "../../core/models/registry.ts";
import { boundProviderTools, feesPico, worstLoopInput } from "./provider_tools.ts";
import { BudgetLedger, type Hold, outputThatFits } from "./budget_ledger.ts";
import { BodyBytes } from "./request_body.ts";
import {
  askedOutput,
  choices,
  MIN_OUTPUT_TOKENS,
  setOutputLimit,
  worstInputTokens,
} from "./request_limits.ts";
import { readParts } from "./request_parts.ts";
import { requestProblem } from "./forward_policy.ts";
import { callProvider, downstreamHeaders, meterBody, upstreamHeaders } from "./upstream.ts";
import {
  FAIR_BYTES_PER_MINUTE,
  FAIR_REQUESTS_PER_MINUTE,
  GATEWAY_TRIES,
  isRetryable,
  pause,
  ProviderShare,
  retryWaitMs,
} from "./provider_share.ts";
import type { ProviderApi, ToolUses } from "./usage_meter.ts";

/** Where a request for one model goes and what its tokens cost. */
export interface ModelRoute {
  entry: ModelEntry;
  baseUrl: string;
  /** The real key; null sends none (local servers). */
  apiKey: string | null;
  bill: ModelPrices;
  list: ModelPrices;
  /** Fees of the provider's own tools (the registry's `:tool-prices`); none: free. */
  toolPrices?: ToolPrices;
  /** False: the model bills no tool fees (a subscription); they still count at list price. */
  toolsBilled?: boolean;
}

export interface ModelGatewayOptions {
  /**
   * The route for the model a request names (`undefined`: none named), or why there is none;
   * `notTheAttempts` when the model is not one of the attempt's (the attempt then fails).
   */
  route(
    model: string | undefined,
    api: ProviderApi,
  ): ModelRoute | { problem: string; notTheAttempts?: boolean };
  /** Spend allowed at list price, microdollars: spent and held never pass it. */
  budgetMicros: number;
  /** Model requests forwarded at most. */
  maxRequests: number;
  /**
   * The attempt's web is live and its policy refuses no host: provider-side tools that
   * reach the network may be forwarded (forward_policy.ts). Default false.
   */
  unrestrictedWeb?: boolean;
  /** The tool-name prefix the first request must offer (e.g. "mcp__world__"); none: no check. */
  requireToolPrefix?: string;
  fetchImpl?: typeof fetch;
  /** Milliseconds, for the log's times and the attempt's share (default performance.now). */
  now?: () => number;
  /** The wait before a request's next try (default provider_share.ts's retryWaitMs). */
  retryWait?: (res: Response | null, tries: number) => number;
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
  /** The output limit forwarded (per choice), after the budget's cut. */
  maxOutput?: number;
  /** The worst case reserved at list price, microdollars. */
  reservedMicros?: number;
  /** Uses of the provider's web tools the request was allowed (provider_tools.ts). */
  toolUsesAllowed?: ToolUses;
  /** Uses of the provider's web tools its response reported. */
  toolUses?: ToolUses;
  /** The offered tools included the required world tools (first request of an agent CLI). */
  worldTools?: boolean;
  /** Tries the gateway made (more than one: it retried a refusal within the share). */
  tries?: number;
  /** The attempt's requests and body bytes sent in the minute up to this one, with it. */
  minute?: { requests: number; bytes: number };
  ms?: number;
}

export interface GatewayFigures {
  requests: number;
  usage: Usage;
  billedMicros: number;
  listMicros: number;
  /** Tokens by registry model id. */
  byModel: Record<string, Usage>;
  /** Uses of the provider's own web tools (their fees are in the money figures). */
  toolUses: ToolUses;
  /** Set when the budget or the request cap refused a request. */
  stopped: "budget" | "request-cap" | null;
  /** Why the attempt cannot be judged (world tools not offered), else null. */
  fault: string | null;
  /**
   * A request named a model that is not one of the attempt's (refused, never forwarded):
   * the first such, said; the attempt fails for it. Else null.
   */
  notTheAttempts: string | null;
  /**
   * The last forwarded request failed upstream (network, 429, 5xx) after the gateway's
   * retries, while the attempt was within its fair share (provider_share.ts): why. A fault.
   */
  upstreamProblem: string | null;
  /**
   * The last forwarded request failed upstream while the attempt was over its fair share:
   * the candidate's own load, said. The attempt fails for it, never a fault.
   */
  overShare: string | null;
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
const PATHS: Record<string, ProviderApi> = {
  "/v1/messages": "anthropic-messages",
  "/v1/chat/completions": "openai-chat",
  "/v1/responses": "openai-responses",
};

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

/** What one attempt's model gateway knows, shared by the steps of every request. */
interface GatewayState {
  opts: ModelGatewayOptions;
  now: () => number;
  t0: number;
  doFetch: typeof fetch;
  aborter: AbortController;
  log: GatewayLogEntry[];
  bodies: BodyBytes;
  /** Responses whose metering has not ended. */
  pending: Set<Promise<void>>;
  ledger: BudgetLedger;
  /** Model requests read (refused ones too). */
  modelRequests: number;
  fault: string | null;
  notTheAttempts: string | null;
  upstreamProblem: string | null;
  overShare: string | null;
  share: ProviderShare;
  unpriced: boolean;
}

/** A request the gateway answers itself: logged with why, in the provider's error format. */
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

/**
 * Why an attempt's gateway aborts what is still under way (its model calls, its server): one
 * reason made once. An abort() without one makes a DOMException, its stack captured, per
 * call: ~40 us of dvergr's CPU each (measured here), two an attempt.
 */
export const GATEWAY_CLOSED = new DOMException("the attempt's gateway closed", "AbortError");

/** A model gateway for one attempt. */
export function createModelGateway(opts: ModelGatewayOptions): ModelGateway {
  const now = opts.now ?? (() => performance.now());
  const s: GatewayState = {
    opts,
    now,
    t0: now(),
    doFetch: opts.fetchImpl ?? fetch,
    aborter: new AbortController(),
    log: [],
    bodies: new BodyBytes(MAX_MODEL_BODY, MAX_MODEL_BODIES_HELD),
    pending: new Set(),
    ledger: new BudgetLedger(opts.budgetMicros, opts.maxRequests),
    modelRequests: 0,
    fault: null,
    notTheAttempts: null,
    upstreamProblem: null,
    overShare: null,
    share: new ProviderShare(now),
    unpriced: false,
  };
  return {
    handle: (req) => handleRequest(s, req),
    log: s.log,
    abort: () => s.aborter.abort(GATEWAY_CLOSED),
    settle: (ms) => settle(s, ms),
  };
}

/** Answers `HEAD /` itself, refuses what is not a model API path, forwards the rest. */
async function handleRequest(s: GatewayState, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const entry: GatewayLogEntry = {
    at: Math.round(s.now() - s.t0),
    method: req.method,
    path,
    status: 0,
  };
  if (s.log.length < MAX_LOG) s.log.push(entry);
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
  // The body is read within its bounds and its bytes held until it is sent.
  const read = await s.bodies.read(req);
  if (!read.ok) return refuse(api, entry, 413, read.reason, `dvergr: ${read.message}`);
  try {
    return await admit(s, req, read.bytes, api, path, entry);
  } finally {
    s.bodies.release(read.bytes.length);
  }
}

/** The body as a JSON object, or null. */
function parseBody(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The checks a request passes before it is forwarded, in order; then it is forwarded. */
async function admit(
  s: GatewayState,
  req: Request,
  bytes: Uint8Array,
  api: ProviderApi,
  path: string,
  entry: GatewayLogEntry,
): Promise<Response> {
  const body = parseBody(bytes);
  if (body === null) {
    return refuse(api, entry, 400, "not-json", "The request body is not a JSON object");
  }
  entry.model = typeof body.model === "string" ? body.model : undefined;
  entry.stream = body.stream === true;
  s.modelRequests++;
  const noTools = checkWorldTools(s, api, body, entry);
  if (noTools) return noTools;
  const route = routeOf(s, api, path, entry);
  if (route instanceof Response) return route;
  const parts = readParts(api, body);
  if (parts.refused !== null) {
    return refuse(api, entry, 400, "content", `dvergr: the request holds ${parts.refused}`);
  }
  const problem = requestProblem(api, body, parts, s.opts.unrestrictedWeb === true);
  if (problem !== null) return refuse(api, entry, 400, "not-forwarded", `dvergr: ${problem}`);
  const hold = reserve(s, api, route, body, bytes.length, parts.images, entry);
  if (hold instanceof Response) return hold;
  body.model = route.entry.apiModel;
  if (api === "openai-chat" && body.stream === true) {
    // Without it a streamed chat completion carries no usage to meter.
    body.stream_options = { ...(body.stream_options as object ?? {}), include_usage: true };
  }
  return await forward(s, req, { api, route, body, bytes: bytes.length }, hold, entry);
}

/** The first request of an agent CLI must offer the world's tools: else a fault. */
function checkWorldTools(
  s: GatewayState,
  api: ProviderApi,
  body: Record<string, unknown>,
  entry: GatewayLogEntry,
): Response | null {
  const prefix = s.opts.requireToolPrefix;
  if (prefix === undefined || s.modelRequests !== 1) return null;
  const names = offeredToolNames(body);
  const offered = names.some((n) => n.startsWith(prefix));
  entry.worldTools = offered;
  if (offered) return null;
  s.fault = `the agent's first model request did not offer the world's MCP tools ` +
    `(${prefix}*): its MCP connection was not ready (tools offered: ${
      names.slice(0, 20).join(", ") || "none"
    })`;
  return refuse(api, entry, 400, "no-world-tools", `dvergr: ${s.fault}`);
}

/** The route of the model the request names, or the refusal. */
function routeOf(
  s: GatewayState,
  api: ProviderApi,
  path: string,
  entry: GatewayLogEntry,
): ModelRoute | Response {
  const route = s.opts.route(entry.model, api);
  if ("problem" in route) {
    if (route.notTheAttempts) s.notTheAttempts ??= route.problem;
    const why = route.notTheAttempts ? "not-the-attempts-model" : "model";
    return refuse(api, entry, 400, why, `dvergr: ${route.problem}`);
  }
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
  if (!route.entry.priced) s.unpriced = true;
  return route;
}

/**
 * Reserves the request's worst case in the budget, its output limit cut to what the budget
 * can pay (and written into the request), or refuses it.
 */
function reserve(
  s: GatewayState,
  api: ProviderApi,
  route: ModelRoute,
  body: Record<string, unknown>,
  bytes: number,
  images: number,
  entry: GatewayLogEntry,
): Hold | Response {
  const n = choices(api, body);
  // The answers reserved are the answers asked: an `n` the count does not read (the text
  // "30") goes up as 1, never as what a lax server would make of it.
  if (api === "openai-chat" && body.n !== undefined) body.n = n;
  const asked = askedOutput(api, body) ?? route.entry.maxTokens;
  // The provider's own tools (bounded here, their caps written in) add their fees and results.
  const tools = boundProviderTools(api, body, route.toolPrices ?? {}, route.toolsBilled ?? true);
  const inputTokens = worstLoopInput(worstInputTokens(bytes, images), tools);
  const room = s.ledger.room() - feesPico(tools.uses, tools.fees, "list");
  const fits = Math.floor(outputThatFits(room > 0n ? room : 0n, inputTokens, route.list) / n);
  // Below the floor the request is refused (the ledger says why) rather than cut to nothing.
  const perChoice = Math.min(asked, Math.max(fits, Math.min(asked, MIN_OUTPUT_TOKENS)));
  const r = s.ledger.reserve(route.entry.id, { bill: route.bill, list: route.list }, {
    inputTokens,
    outputTokens: perChoice * n,
    tools: { uses: tools.uses, fees: tools.fees },
  });
  if (!r.ok) return refuse(api, entry, 400, r.why, `dvergr: ${r.message}`);
  if (askedOutput(api, body) !== perChoice) {
    setOutputLimit(api, route.entry.provider, body, perChoice);
  }
  entry.maxOutput = perChoice;
  entry.reservedMicros = picoToMicros(r.hold.list);
  if (tools.uses.webSearch + tools.uses.webFetch > 0) entry.toolUsesAllowed = tools.uses;
  return r.hold;
}

/** A request on its way: its API, route, body (as forwarded) and size. */
interface Outgoing {
  api: ProviderApi;
  route: ModelRoute;
  body: Record<string, unknown>;
  bytes: number;
}

const NOTHING_BILLED = { usage: { ...NO_USAGE }, reported: false, accepted: false, cut: false };

/**
 * Sends the request upstream once it has a slot of the attempt's share, retrying what the
 * provider refuses while the attempt is within its share; meters the response as it passes
 * back, holding the slot until it has.
 */
async function forward(
  s: GatewayState,
  req: Request,
  out: Outgoing,
  hold: Hold,
  entry: GatewayLogEntry,
): Promise<Response> {
  const { api, route } = out;
  const started = s.now();
  // The candidate's load counts from its request, queued or not.
  const load = s.share.record(out.bytes);
  entry.minute = { requests: load.requests, bytes: load.bytes };
  // The wait for a slot or a retry ends with the attempt.
  const waiting = s.aborter.signal;
  if (!(await s.share.slot(waiting))) {
    s.ledger.close(hold, NOTHING_BILLED);
    return refuse(api, entry, 503, "attempt-over", "dvergr: the attempt ended before its turn");
  }
  let handedOn = false;
  try {
    const sent = await sendWithRetries(s, req, out, waiting, entry);
    entry.ms = Math.round(s.now() - started);
    if (!sent.ok) {
      s.ledger.close(hold, NOTHING_BILLED);
      noteFailure(s, sent.message);
      return refuse(api, entry, 502, "upstream", `dvergr: ${sent.message}`);
    }
    const upstream = sent.response;
    entry.status = upstream.status;
    noteFailure(
      s,
      isRetryable(upstream.status) ? `${route.baseUrl} answered ${upstream.status}` : null,
    );
    const outHeaders = downstreamHeaders(upstream);
    if (!upstream.body) {
      s.ledger.close(hold, { ...NOTHING_BILLED, accepted: upstream.ok });
      return new Response(null, { status: upstream.status, headers: outHeaders });
    }
    const sse = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
    const [toClient, toMeter] = upstream.body.tee();
    const metering = meterBody(api, toMeter, sse, upstream.ok).then((end) => {
      s.ledger.close(hold, end);
      entry.usage = end.usage;
      entry.usageReported = end.reported;
      if (end.tools && end.tools.webSearch + end.tools.webFetch > 0) entry.toolUses = end.tools;
      entry.ms = Math.round(s.now() - started);
    }).finally(() => s.share.release());
    handedOn = true;
    s.pending.add(metering);
    metering.finally(() => s.pending.delete(metering));
    return new Response(toClient, { status: upstream.status, headers: outHeaders });
  } finally {
    if (!handedOn) s.share.release();
  }
}

/**
 * The provider's answer to the request: tried again (GATEWAY_TRIES at most, waiting as the
 * provider asks) while it is refused with a retryable status or cannot be reached and the
 * attempt is within its share; over its share the answer is the candidate's.
 */
async function sendWithRetries(
  s: GatewayState,
  req: Request,
  out: Outgoing,
  waiting: AbortSignal,
  entry: GatewayLogEntry,
): Promise<{ ok: true; response: Response } | { ok: false; message: string }> {
  const headers = upstreamHeaders(req, out.api, out.route.apiKey);
  const wait = s.opts.retryWait ?? retryWaitMs;
  for (let tries = 1;; tries++) {
    const sent = await callProvider(
      s.doFetch,
      out.route.baseUrl,
      out.api,
      headers,
      out.body,
      s.aborter.signal,
    );
    entry.tries = tries;
    const refused = !sent.ok || isRetryable(sent.response.status);
    if (!refused || tries >= GATEWAY_TRIES || waiting.aborted) return sent;
    if (!s.share.load().within) return sent;
    const ms = wait(sent.ok ? sent.response : null, tries);
    const last = sent.ok ? `${out.route.baseUrl} answered ${sent.response.status}` : sent.message;
    if (sent.ok) await sent.response.body?.cancel().catch(() => {});
    if (!(await pause(ms, waiting))) {
      return { ok: false, message: `${last}, and the attempt ended before its retry` };
    }
  }
}

/**
 * Records how the attempt's last forwarded request ended upstream: well (null), or failed,
 * which is the provider's problem (a fault) while the attempt is within its share and the
 * candidate's own when it is over (provider_share.ts).
 */
function noteFailure(s: GatewayState, problem: string | null): void {
  const load = s.share.load();
  s.upstreamProblem = problem !== null && load.within ? problem : null;
  s.overShare = problem !== null && !load.within
    ? `${problem}; the attempt had sent ${load.requests} requests (${load.bytes} bytes) ` +
      `in the last minute, over its fair share of ${FAIR_REQUESTS_PER_MINUTE} requests and ` +
      `${FAIR_BYTES_PER_MINUTE} bytes a minute`
    : null;
}

/** Waits (at most `ms`) for responses still streaming, then gives the figures. */
async function settle(s: GatewayState, ms = 5000): Promise<GatewayFigures> {
  if (s.pending.size > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all([...s.pending]),
      new Promise((r) => timer = setTimeout(r, ms)),
    ]);
    clearTimeout(timer);
  }
  let usage = { ...NO_USAGE };
  const models: Record<string, Usage> = {};
  for (const [id, u] of s.ledger.usageByModel()) {
    usage = addUsage(usage, u);
    models[id] = u;
  }
  return {
    requests: s.ledger.requests,
    usage,
    // Responses still streaming are charged what they hold.
    billedMicros: s.ledger.spentMicros("bill"),
    listMicros: s.ledger.spentMicros("list"),
    byModel: models,
    toolUses: { ...s.ledger.toolUses },
    stopped: s.ledger.stopped,
    fault: s.fault,
    notTheAttempts: s.notTheAttempts,
    upstreamProblem: s.upstreamProblem,
    overShare: s.overShare,
    unmetered: s.ledger.unmetered,
    unpriced: s.unpriced,
  };
}
