/**
 * The stateless era of MCP (protocol 2026-07-28), beside the handshake versions: no
 * initialize; each request names its version, client info and capabilities in `_meta`
 * (`io.modelcontextprotocol/protocolVersion`, `…/clientInfo`, `…/clientCapabilities`) and its
 * tool selection too (`dvergr/profile`, `dvergr/toolsets`, `dvergr/room`, `dvergr/tools`),
 * for that request only and within what the server serves. The SDK (1.32) speaks only the
 * handshake era, so this layer sits under our transports: they hand it the requests that
 * belong to it (isStatelessRequest) and the SDK the rest, so one connection may carry both.
 *
 * `server/discover` names the versions, capabilities and instructions. Every result has
 * `resultType: "complete"` and the server's info in `_meta`; lists and reads carry `ttlMs`
 * and `cacheScope: "private"` (what a client sees depends on its selection; a read is live,
 * ttlMs 0). A version the server does not speak is -32022 with `{supported, requested}`; an
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

/** Creates the stateless layer of a server. */
export function createStatelessHandler(opts: StatelessOptions): StatelessHandler {
  const { log } = opts;
  const surfaces = new Map<string, Surface>();
  const listens = new Map<JsonRpcId, (r: JsonRpcResponse) => void>();

  /** The surface of a request's selection (cached: tool definitions are derived once). */
  function surfaceFor(meta: Record<string, unknown>): Surface {
    const asked = requestedSelection(meta);
    const key = asked === null ? "" : JSON.stringify(asked);
    const known = surfaces.get(key);
    if (known) return known;
    const selection = asked === null
      ? opts.selection
      : narrowSelection(opts.selection, asked, { jsEval: opts.jsEval });
    const surface = createSurface({
      context: opts.context,
      selection,
      log,
      unknownResourceCode: INVALID_PARAMS,
    });
    surfaces.set(key, surface);
    return surface;
  }

  function discover(): Record<string, unknown> {
    const surface = surfaceFor({});
    return complete({
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: capabilitiesOf(surface),
      serverInfo: { name: "dvergr", title: "dvergr", version: VERSION },
      instructions: INSTRUCTIONS,
    });
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

  async function listen(
    req: JsonRpcRequest,
    surface: Surface,
    io: RequestIo,
  ): Promise<JsonRpcResponse | null> {
    const params = req.params ?? {};
    const filter = isObject(params.filter) ? params.filter : params;
    const asked = Array.isArray(filter.resourceSubscriptions)
      ? filter.resourceSubscriptions.filter((u): u is string => typeof u === "string")
      : [];
    const honoured: string[] = [];
    const stops: (() => void)[] = [];
    const tag = { [META_SUBSCRIPTION]: req.id };
    for (const uri of asked) {
      let room: string | null;
      try {
        room = await surface.watchRoom(uri);
      } catch {
        continue; // Not a resource of this selection: not honoured.
      }
      honoured.push(uri);
      const t = throttle(() =>
        io.notify({
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri, _meta: tag },
        }), UPDATE_EVERY_MS);
      const unwatch = opts.watcher.watch(room, () => t.call());
      stops.push(() => {
        unwatch();
        t.stop();
      });
    }
    io.notify({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: {
        // The tool list of a selection never changes; prompts and resource lists are not offered.
        ...(filter.toolsListChanged === true ? { toolsListChanged: true } : {}),
        resourceSubscriptions: honoured,
        _meta: tag,
      },
    });
    const answered = new Promise<JsonRpcResponse | null>((resolve) => {
      listens.set(req.id, resolve);
      io.signal.addEventListener("abort", () => resolve(null), { once: true });
      if (io.signal.aborted) resolve(null);
    });
    try {
      return await answered;
    } finally {
      listens.delete(req.id);
      for (const stop of stops) stop();
    }
  }

  async function dispatch(
    req: JsonRpcRequest,
    io: RequestIo,
  ): Promise<Record<string, unknown> | null> {
    if (req.method === "server/discover") return discover();
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
    const surface = surfaceFor(meta);
    const params = req.params ?? {};
    switch (req.method) {
      case "tools/list":
        return complete({ tools: surface.tools }, { ttlMs: 0 });
      case "tools/call": {
        if (typeof params.name !== "string") {
          throw new ProtocolError(INVALID_PARAMS, "tools/call needs params.name");
        }
        if (params.arguments !== undefined && !isObject(params.arguments)) {
          throw new ProtocolError(INVALID_PARAMS, "tools/call params.arguments must be an object");
        }
        const r = await surface.callTool(params.name, params.arguments ?? {}, {
          signal: io.signal,
          progress: progressOf(req, io),
        });
        return complete(r);
      }
      case "resources/list":
        return complete({ resources: await surface.listResources() }, { ttlMs: 0 });
      case "resources/templates/list":
        return complete({ resourceTemplates: surface.templates }, { ttlMs: 0 });
      case "resources/read": {
        if (typeof params.uri !== "string") {
          throw new ProtocolError(INVALID_PARAMS, "resources/read needs params.uri");
        }
        const r = await surface.readResource(params.uri, {
          signal: io.signal,
          progress: progressOf(req, io),
        });
        return complete(r, { ttlMs: 0 });
      }
      case "subscriptions/listen": {
        const r = await listen(req, surface, io);
        return r === null ? null : complete({});
      }
    }
    throw new ProtocolError(METHOD_NOT_FOUND, `Method not found: ${req.method}`);
  }

  return {
    async handle(req, io) {
      try {
        const result = await dispatch(req, io);
        if (result === null || io.signal.aborted) return null;
        return { jsonrpc: "2.0", id: req.id, result };
      } catch (e) {
        if (io.signal.aborted) return null;
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
        log(`${req.method} failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
        return { jsonrpc: "2.0", id: req.id, error: { code: -32603, message: "Internal error" } };
      }
    },
    close() {
      for (const [id, resolve] of [...listens]) {
        resolve({ jsonrpc: "2.0", id, result: complete({}) });
      }
    },
  };
}
