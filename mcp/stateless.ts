/**
 * The stateless era of MCP (protocol 2026-07-28), beside the handshake versions: no
 * initialize; each request names its version, client info and capabilities in `_meta`
 * (`io.modelcontextprotocol/protocolVersion`, `…/clientInfo`, `…/clientCapabilities`) and its
 * tool selection too (`dvergr/profile`, `dvergr/toolsets`, `dvergr/room`, `dvergr/tools`),
 * for that request only and within what the server serves. The SDK (1.32) speaks only the
 * handshake era, so this layer sits under our transports: they hand it the requests that
 * belong to it (isStatelessRequest) and the SDK the rest, so one connection may carry both.
 *
 * `server/discover` names the versions, capabilities and instructions; it passes the same
 * checks as every other request (its `_meta` names this era's version; over HTTP the routing
 * headers match the body). Every result has `resultType: "complete"` and the server's info in
 * `_meta`; discover, lists and reads carry `ttlMs` and `cacheScope: "private"` (what a client
 * sees depends on its selection and its token; a list or read is live, ttlMs 0). A version the server does not speak is -32022 with `{supported, requested}`; an
 * unknown resource is -32602; ping is gone. `subscriptions/listen` stays open: first
 * notifications/subscriptions/acknowledged with the part of the filter honoured, then
 * notifications tagged with `io.modelcontextprotocol/subscriptionId` (the listen request's
 * id), until it is cancelled; at shutdown it is answered before the connection closes.
 */
import type { OpContext, OpProgress } from "../core/ops/op.ts";
import { VERSION } from "../core/version.ts";
import type { Selection } from "./selection.ts";
import { createSurface, INVALID_PARAMS, ProtocolError, type Surface } from "./surface.ts";
import type { RoomWatcher } from "./room_watch.ts";
import type { JsEvalRunner } from "./code_profile.ts";
import { narrowSelection, requestedSelection } from "./meta_selection.ts";
import { throttle } from "./room_watch.ts";
import { capabilitiesOf, INSTRUCTIONS, UPDATE_EVERY_MS } from "./server.ts";

export const STATELESS_VERSION = "2026-07-28";
/** The handshake versions, newest first (as the SDK negotiates them). */
export const HANDSHAKE_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
export const SUPPORTED_VERSIONS = [STATELESS_VERSION, ...HANDSHAKE_VERSIONS];

export const META_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
export const META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

/** JSON-RPC codes of this era. */
export const HEADER_MISMATCH = -32020;
export const UNSUPPORTED_VERSION = -32022;
export const METHOD_NOT_FOUND = -32601;

export type JsonRpcId = string | number;
export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}
export type JsonRpcResponse =
  | { jsonrpc: "2.0"; id: JsonRpcId; result: Record<string, unknown> }
  | { jsonrpc: "2.0"; id: JsonRpcId; error: { code: number; message: string; data?: unknown } };
export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: Record<string, unknown>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The `_meta` of a message's params, or an empty object. */
export function metaOf(msg: unknown): Record<string, unknown> {
  if (!isObject(msg) || !isObject(msg.params) || !isObject(msg.params._meta)) return {};
  return msg.params._meta;
}

/**
 * Whether a message is a request of the stateless era: server/discover, or a request whose
 * `_meta` names a protocol version (a handshake request never does).
 */
export function isStatelessRequest(msg: unknown): msg is JsonRpcRequest {
  if (!isObject(msg) || typeof msg.method !== "string" || msg.id === undefined) return false;
  return msg.method === "server/discover" || metaOf(msg)[META_VERSION] !== undefined;
}

/** Methods of the stateless era (others are unknown: 404 over HTTP, -32601 in the body). */
export const STATELESS_METHODS = new Set([
  "server/discover",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "subscriptions/listen",
]);

/** How a transport carries one request's notifications and learns that it was cancelled. */
export interface RequestIo {
  /** Sends a notification belonging to this request (progress, subscription updates). */
  notify(n: JsonRpcNotification): void;
  /** Aborted when the client cancels the request (closes its stream, notifications/cancelled). */
  signal: AbortSignal;
}

export interface StatelessOptions {
  context: Omit<OpContext, "signal" | "progress">;
  /** The server's own selection: a request may narrow it, never widen it. */
  selection: Selection;
  log: (line: string) => void;
  watcher: RoomWatcher;
  /** The sandbox of the code profile's js_eval, when a request may select it. */
  jsEval?: JsEvalRunner;
}

export interface StatelessHandler {
  /** Answers one request (null: cancelled, no answer is sent). */
  handle(req: JsonRpcRequest, io: RequestIo): Promise<JsonRpcResponse | null>;
  /** Answers every open subscriptions/listen (resultType complete), as at shutdown. */
  close(): void;
}

function serverMeta(): Record<string, unknown> {
  return { [META_SERVER_INFO]: { name: "dvergr", title: "dvergr", version: VERSION } };
}

/** A result of this era: resultType complete and the server's info in _meta. */
function complete(
  result: Record<string, unknown>,
  cache?: { ttlMs: number },
): Record<string, unknown> {
  const meta = isObject(result._meta) ? result._meta : {};
  return {
    ...result,
    resultType: "complete",
    ...(cache ? { ttlMs: cache.ttlMs, cacheScope: "private" } : {}),
    _meta: { ...meta, ...serverMeta() },
  };
}

/** The state of a server's stateless layer. */
interface Layer {
  opts: StatelessOptions;
  /** The surface of each selection asked for (tool definitions are derived once). */
  surfaces: Map<string, Surface>;
  /** The open subscriptions/listen requests, answered at close. */
  listens: Map<JsonRpcId, (r: JsonRpcResponse) => void>;
}

/** How long a client may keep server/discover's answer (the server's own, fixed per process). */
export const DISCOVER_TTL_MS = 300_000;

/** The surface of a request's selection. */
function surfaceFor(layer: Layer, meta: Record<string, unknown>): Surface {
  const { opts } = layer;
  const asked = requestedSelection(meta);
  const key = asked === null ? "" : JSON.stringify(asked);
  const known = layer.surfaces.get(key);
  if (known) return known;
  const selection = asked === null
    ? opts.selection
    : narrowSelection(opts.selection, asked, { jsEval: opts.jsEval });
  const surface = createSurface({
    context: opts.context,
    selection,
    log: opts.log,
    unknownResourceCode: INVALID_PARAMS,
  });
  layer.surfaces.set(key, surface);
  return surface;
}

function discover(layer: Layer): Record<string, unknown> {
  const surface = surfaceFor(layer, {});
  return complete({
    supportedVersions: SUPPORTED_VERSIONS,
    capabilities: capabilitiesOf(surface),
    serverInfo: { name: "dvergr", title: "dvergr", version: VERSION },
    instructions: INSTRUCTIONS,
  }, { ttlMs: DISCOVER_TTL_MS });
}

function progressOf(req: JsonRpcRequest, io: RequestIo) {
  const token = metaOf(req).progressToken;
  if (token === undefined) return undefined;
  let last = -Infinity;
  return (p: OpProgress) => {
    if (!(p.progress > last) || io.signal.aborted) return;
    last = p.progress;
    io.notify({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: {
        progressToken: token as string | number,
        progress: p.progress,
        ...(p.total !== undefined ? { total: p.total } : {}),
        ...(p.message !== undefined ? { message: p.message } : {}),
      },
    });
  };
}

/** Watches the subscribed resources of a listen; returns those honoured and how to stop. */
async function watchSubscriptions(
  layer: Layer,
  surface: Surface,
  asked: string[],
  notify: (uri: string) => void,
): Promise<{ honoured: string[]; stops: (() => void)[] }> {
  const honoured: string[] = [];
  const stops: (() => void)[] = [];
  for (const uri of asked) {
    let room: string | null;
    try {
      room = await surface.watchRoom(uri);
    } catch {
      continue; // Not a resource of this selection: not honoured.
    }
    honoured.push(uri);
    const t = throttle(() => notify(uri), UPDATE_EVERY_MS);
    const unwatch = layer.opts.watcher.watch(room, () => t.call());
    stops.push(() => {
      unwatch();
      t.stop();
    });
  }
  return { honoured, stops };
}

async function listen(
  layer: Layer,
  req: JsonRpcRequest,
  surface: Surface,
  io: RequestIo,
): Promise<JsonRpcResponse | null> {
  const params = req.params ?? {};
  const filter = isObject(params.filter) ? params.filter : params;
  const asked = Array.isArray(filter.resourceSubscriptions)
    ? filter.resourceSubscriptions.filter((u): u is string => typeof u === "string")
    : [];
  const tag = { [META_SUBSCRIPTION]: req.id };
  const { honoured, stops } = await watchSubscriptions(layer, surface, asked, (uri) =>
    io.notify({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri, _meta: tag },
    }));
  io.notify({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: {
      // The tool and prompt lists of a selection never change.
      ...(filter.toolsListChanged === true ? { toolsListChanged: true } : {}),
      ...(filter.promptsListChanged === true ? { promptsListChanged: true } : {}),
      resourceSubscriptions: honoured,
      _meta: tag,
    },
  });
  const answered = new Promise<JsonRpcResponse | null>((resolve) => {
    layer.listens.set(req.id, resolve);
    io.signal.addEventListener("abort", () => resolve(null), { once: true });
    if (io.signal.aborted) resolve(null);
  });
  try {
    return await answered;
  } finally {
    layer.listens.delete(req.id);
    for (const stop of stops) stop();
  }
}

function needString(params: Record<string, unknown>, key: string, method: string): string {
  const v = params[key];
  if (typeof v !== "string") {
    throw new ProtocolError(INVALID_PARAMS, `${method} needs params.${key}`);
  }
  return v;
}

function needObject(params: Record<string, unknown>, key: string, method: string) {
  const v = params[key];
  if (v !== undefined && !isObject(v)) {
    throw new ProtocolError(INVALID_PARAMS, `${method} params.${key} must be an object`);
  }
  return (v ?? {}) as Record<string, unknown>;
}

/** completion/complete's params as the surface takes them. */
async function completion(surface: Surface, params: Record<string, unknown>) {
  const ref = needObject(params, "ref", "completion/complete");
  const argument = needObject(params, "argument", "completion/complete");
  if (typeof argument.name !== "string" || typeof argument.value !== "string") {
    throw new ProtocolError(INVALID_PARAMS, "completion/complete needs argument {name, value}");
  }
  const given = needObject(needObject(params, "context", "completion/complete"), "arguments", "");
  const texts = Object.fromEntries(
    Object.entries(given).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  const at = ref.type === "ref/prompt" && typeof ref.name === "string"
    ? { type: "ref/prompt" as const, name: ref.name }
    : ref.type === "ref/resource" && typeof ref.uri === "string"
    ? { type: "ref/resource" as const, uri: ref.uri }
    : null;
  if (at === null) {
    throw new ProtocolError(INVALID_PARAMS, "completion/complete needs ref/prompt or ref/resource");
  }
  return await surface.complete(at, { name: argument.name, value: argument.value }, texts);
}

/** The result of a method of this era (server/discover and listen aside). */
async function methodResult(
  surface: Surface,
  req: JsonRpcRequest,
  io: RequestIo,
): Promise<Record<string, unknown>> {
  const params = req.params ?? {};
  const call = { signal: io.signal, progress: progressOf(req, io) };
  switch (req.method) {
    case "tools/list":
      return complete({ tools: surface.tools }, { ttlMs: 0 });
    case "tools/call": {
      const name = needString(params, "name", "tools/call");
      const args = needObject(params, "arguments", "tools/call");
      return complete(await surface.callTool(name, args, call));
    }
    case "resources/list":
      return complete({ resources: await surface.listResources() }, { ttlMs: 0 });
    case "resources/templates/list":
      return complete({ resourceTemplates: surface.templates }, { ttlMs: 0 });
    case "resources/read": {
      const uri = needString(params, "uri", "resources/read");
      return complete(await surface.readResource(uri, call), { ttlMs: 0 });
    }
    case "prompts/list":
      return complete({ prompts: surface.prompts }, { ttlMs: 0 });
    case "prompts/get": {
      const name = needString(params, "name", "prompts/get");
      return complete(surface.getPrompt(name, needObject(params, "arguments", "prompts/get")));
    }
    case "completion/complete":
      return complete({ completion: await completion(surface, params) });
  }
  throw new ProtocolError(METHOD_NOT_FOUND, `Method not found: ${req.method}`);
}

/**
 * The checks every request of this era passes, server/discover included: its `_meta` names
 * the version this era speaks, and the method is one of this era.
 */
function checkRequest(req: JsonRpcRequest): Record<string, unknown> {
  const meta = metaOf(req);
  const version = meta[META_VERSION];
  if (version !== STATELESS_VERSION) {
    throw new ProtocolError(
      UNSUPPORTED_VERSION,
      `Unsupported protocol version ${JSON.stringify(version)} for a request without initialize`,
      { supported: SUPPORTED_VERSIONS, requested: version ?? null },
    );
  }
  if (!STATELESS_METHODS.has(req.method)) {
    throw new ProtocolError(METHOD_NOT_FOUND, `Method not found: ${req.method}`);
  }
  return meta;
}

async function dispatch(
  layer: Layer,
  req: JsonRpcRequest,
  io: RequestIo,
): Promise<Record<string, unknown> | null> {
  const meta = checkRequest(req);
  if (req.method === "server/discover") return discover(layer);
  const surface = surfaceFor(layer, meta);
  if (req.method === "subscriptions/listen") {
    const r = await listen(layer, req, surface, io);
    return r === null ? null : complete({});
  }
  return await methodResult(surface, req, io);
}

/** A failure as this era's error response. */
function errorResponse(layer: Layer, req: JsonRpcRequest, e: unknown): JsonRpcResponse {
  if (e instanceof ProtocolError) {
    return {
      jsonrpc: "2.0",
      id: req.id,
      error: {
        code: e.code,
        message: e.message,
        ...(e.data !== undefined ? { data: e.data } : {}),
      },
    };
  }
  layer.opts.log(`${req.method} failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  return { jsonrpc: "2.0", id: req.id, error: { code: -32603, message: "Internal error" } };
}

/** Creates the stateless layer of a server. */
export function createStatelessHandler(opts: StatelessOptions): StatelessHandler {
  const layer: Layer = { opts, surfaces: new Map(), listens: new Map() };
  return {
    async handle(req, io) {
      try {
        const result = await dispatch(layer, req, io);
        if (result === null || io.signal.aborted) return null;
        return { jsonrpc: "2.0", id: req.id, result };
      } catch (e) {
        if (io.signal.aborted) return null;
        return errorResponse(layer, req, e);
      }
    },
    close() {
      for (const [id, resolve] of [...layer.listens]) {
        resolve({ jsonrpc: "2.0", id, result: complete({}) });
      }
    },
  };
}
