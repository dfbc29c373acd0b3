/**
 * Streamable HTTP on a loopback port: one endpoint, `/mcp`. Every request needs
 * `Authorization: Bearer <token>` (401 without it or with another), and a request from a
 * page of another site (an Origin header that is not loopback) or addressed to another
 * host name (DNS rebinding) is refused with 403. Each `initialize` opens a session
 * (Mcp-Session-Id) with a server of its own; DELETE ends it. A request of the stateless era
 * (2026-07-28: no session, its version in `_meta`) goes to the stateless layer instead
 * (http_stateless.ts), so one connection may carry both eras. With `socket`, the server
 * listens on that Unix socket (mode 0600) instead of a port, for the per-attempt gateway
 * and for hosts that put a proxy in front (which may name any host: the Host check is for
 * the loopback port, where a browser page could reach it by DNS rebinding).
 *
 * Permissions: --allow-net=127.0.0.1, or --allow-read and --allow-write of the socket.
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { dirname, join } from "node:path";
import { DvergrError } from "../core/errors.ts";
import { readInitialize } from "../adapters/gateway/mcp_initialize.ts";
import { tokensEqual } from "./token.ts";
import type { StatelessHandler } from "./stateless.ts";
import { isStatelessBody, statelessResponse } from "./http_stateless.ts";
import { duplicateIdError, InFlightIds, requestId } from "./request_ids.ts";
import { foreignRequest } from "./loopback.ts";

export { DEFAULT_HTTP_PORT } from "./port.ts";
export { isLoopbackOrigin } from "./loopback.ts";
/** Largest request body (a room_write of a big table fits). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Sessions kept at once; beyond, the least recently used one is closed. */
const MAX_SESSIONS = 64;

export interface HttpServeOptions {
  /** 0 picks a free port. */
  port: number;
  token: string;
  /** A new server for each session. */
  makeServer: () => Server;
  /** The stateless era's layer; without it, requests need a session. */
  stateless?: StatelessHandler;
  /** Listen on this Unix socket (mode 0600) instead of 127.0.0.1:port. */
  socket?: string;
  log: (line: string) => void;
}

export interface HttpServer {
  /** The port, or 0 on a Unix socket. */
  port: number;
  /** http://127.0.0.1:PORT/mcp, or unix:PATH for a socket. */
  url: string;
  /** Closes every session and stops listening. */
  close(): Promise<void>;
  finished: Promise<void>;
}

function jsonError(status: number, code: number, message: string, headers = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function tooLarge(): Response {
  return jsonError(
    413,
    -32000,
    `Payload Too Large: a request body is at most ${MAX_BODY_BYTES} bytes`,
  );
}

/** The body as text, or null when it is longer than MAX_BODY_BYTES (read no further). */
async function readBody(req: Request): Promise<string | null> {
  if (Number(req.headers.get("content-length") ?? "0") > MAX_BODY_BYTES) return null;
  if (req.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body) {
    size += chunk.byteLength;
    // Leaving the loop cancels the rest of the stream.
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** The session's requests without an answer yet (request_ids.ts). */
  ids: InFlightIds;
  lastUsed: number;
}

/** The ids of `transport`'s requests in flight, freed as the server sends their answers. */
function trackAnswers(transport: WebStandardStreamableHTTPServerTransport): InFlightIds {
  const ids = new InFlightIds();
  const send = transport.send.bind(transport);
  transport.send = (m, o) => {
    ids.sent(m);
    return send(m, o);
  };
  return ids;
}

/**
 * A request of an open session. A request whose id is in flight in the session (or twice in
 * one batch) is refused with 400 and never reaches the SDK's transport, which would give it
 * the first request's stream and leave that request waiting for ever.
 */
async function sessionRequest(s: Session, req: Request, body: unknown): Promise<Response> {
  if (body === undefined) return await s.transport.handleRequest(req);
  const messages = Array.isArray(body) ? body : [body];
  const seen = new InFlightIds();
  for (const m of messages) {
    const id = requestId(m);
    if (id !== null && (s.ids.has(id) || seen.has(id))) {
      return new Response(JSON.stringify(duplicateIdError(id)), {
        status: 400,
        headers: { "content-type": "application/json" },
      });
    }
    seen.received(m);
  }
  for (const m of messages) s.ids.received(m);
  return await s.transport.handleRequest(req, { parsedBody: body });
}

/** The handshake sessions of a server and the stateless streams open on it. */
interface Served {
  opts: HttpServeOptions;
  sessions: Map<string, Session>;
  /** Open stateless streams (listens, progress), each resolved when it ended. */
  streams: Set<Promise<void>>;
}

/** Answers open subscriptions and waits (at most 2 s) until their streams are out. */
async function endStreams(s: Served): Promise<void> {
  s.opts.stateless?.close();
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.all([...s.streams]),
    new Promise((r) => (timer = setTimeout(r, 2000))),
  ]);
  clearTimeout(timer);
}

async function closeSession(s: Served, id: string): Promise<void> {
  const session = s.sessions.get(id);
  if (!session) return;
  s.sessions.delete(id);
  await session.transport.close().catch(() => {});
  await session.server.close().catch(() => {});
}

/** Opens a handshake session for an initialize request (the oldest goes past MAX_SESSIONS). */
async function openSession(s: Served, req: Request, body: unknown): Promise<Response> {
  const { sessions, opts } = s;
  if (sessions.size >= MAX_SESSIONS) {
    const oldest = [...sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
    if (oldest) await closeSession(s, oldest[0]);
  }
  const server = opts.makeServer();
  const transport: WebStandardStreamableHTTPServerTransport =
    new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      // The SDK's own default (4 MiB) would refuse a big room_write in a session.
      maxRequestBodySize: MAX_BODY_BYTES,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, ids, lastUsed: Date.now() });
        opts.log(`http session ${id} opened`);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
        opts.log(`http session ${id} closed`);
      },
    });
  const ids = trackAnswers(transport);
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await server.connect(transport);
  return await transport.handleRequest(req, { parsedBody: body });
}

/**
 * The checks before a request reaches MCP: a loopback Origin and Host (a socket has no
 * host), a URL that reads, the bearer token, the /mcp path. A refusal, or null to go on.
 */
function refusal(opts: HttpServeOptions, req: Request): Response | null {
  // Headers first: a malformed Host makes the request's URL unparsable (400/403, not 500).
  const foreign = foreignRequest(req, opts.socket === undefined);
  if (foreign !== null) return jsonError(403, -32000, foreign);
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return jsonError(400, -32000, "Bad Request: the request's URL cannot be read");
  }
  const auth = req.headers.get("authorization") ?? "";
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  if (!m || !tokensEqual(m[1], opts.token)) {
    return jsonError(
      401,
      -32000,
      m
        ? "Unauthorized: wrong bearer token"
        : "Unauthorized: send Authorization: Bearer <token> (the token is in <home>/mcp/http-token)",
      { "www-authenticate": 'Bearer realm="dvergr"' },
    );
  }
  if (url.pathname !== "/mcp") return jsonError(404, -32000, `Not found: ${url.pathname}`);
  return null;
}

/** Answers one HTTP request: stateless, of a session, or an initialize opening one. */
async function handleRequest(s: Served, req: Request): Promise<Response> {
  const { opts } = s;
  const refused = refusal(opts, req);
  if (refused) return refused;
  const sid = req.headers.get("mcp-session-id");
  let body: unknown = undefined;
  if (req.method === "POST") {
    const text = await readBody(req);
    if (text === null) return tooLarge();
    try {
      body = JSON.parse(text);
    } catch {
      return jsonError(400, -32700, "Parse error: the body is not JSON");
    }
    // Decided per request: a stateless request is one whatever else the connection carries.
    if (opts.stateless && isStatelessBody(body)) {
      return await statelessResponse(req, body, opts.stateless, opts.log, (ended) => {
        s.streams.add(ended);
        ended.then(() => s.streams.delete(ended));
      });
    }
  }
  if (sid !== null) {
    const session = s.sessions.get(sid);
    if (!session) return jsonError(404, -32001, "Session not found: initialize again");
    session.lastUsed = Date.now();
    return await sessionRequest(session, req, body);
  }
  if (req.method !== "POST") {
    return jsonError(400, -32000, "Bad Request: no Mcp-Session-Id; send initialize first");
  }
  const init = readInitialize(body);
  if (!("body" in init)) return jsonError(init.status, init.code, init.message);
  return await openSession(s, req, init.body);
}

/** Listens on 127.0.0.1:port; a port in use is the user's to change. */
function listenOnPort(
  port: number,
  serve: (o: { hostname: string; port: number }) => Deno.HttpServer<Deno.NetAddr>,
): Deno.HttpServer<Deno.NetAddr> {
  try {
    return serve({ hostname: "127.0.0.1", port });
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      throw new DvergrError(
        "USAGE",
        `Cannot listen on 127.0.0.1:${port}: the port is in use`,
        { hint: "Stop what listens there, or choose another port with --port N" },
      );
    }
    throw e;
  }
}

/** Serves MCP over Streamable HTTP on 127.0.0.1 (or a Unix socket) until close(). */
export function serveHttp(opts: HttpServeOptions): HttpServer {
  const s: Served = { opts, sessions: new Map(), streams: new Set() };
  const handle = (req: Request) => handleRequest(s, req);
  const controller = new AbortController();
  const serveOptions = {
    signal: controller.signal,
    onListen: () => {}, // The default prints to stdout.
    onError: (e: unknown) => {
      opts.log(`http request failed: ${e instanceof Error ? e.stack ?? e.message : e}`);
      return jsonError(500, -32603, "Internal error");
    },
  };
  /** Open subscriptions are answered before the streams close, then the sessions close. */
  const stop = async (server: Deno.HttpServer) => {
    await endStreams(s);
    await Promise.all([...s.sessions.keys()].map((id) => closeSession(s, id)));
    await shutdown(server, controller);
  };
  if (opts.socket !== undefined) {
    const path = opts.socket;
    const server = listenOnSocket(path, (o) => Deno.serve({ ...serveOptions, ...o }, handle));
    return {
      port: 0,
      url: `unix:${path}`,
      finished: server.finished,
      async close() {
        await stop(server);
        await Deno.remove(path).catch(() => {});
      },
    };
  }
  const server = listenOnPort(opts.port, (o) => Deno.serve({ ...serveOptions, ...o }, handle));
  const port = server.addr.port;
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    finished: server.finished,
    close: () => stop(server),
  };
}

/**
 * Stops a server gracefully, so the last answers on open streams reach their clients, but
 * after 3 s cuts what is still running (a job_status wait, a client that does not read).
 */
async function shutdown(server: Deno.HttpServer, controller: AbortController): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cut = new Promise<"cut">((r) => (timer = setTimeout(() => r("cut"), 3000)));
  const how = await Promise.race([server.shutdown().then(() => "done" as const), cut]);
  clearTimeout(timer);
  if (how === "cut") controller.abort();
  await server.finished;
}

/**
 * Listens on a Unix socket that only this user may use (mode 0600) from its first moment:
 * bound in a new private directory beside it, made 0600, then renamed to `path`. A socket
 * Anything at `path` is refused (clearStaleSocket() first removes one left by a server
 * that is gone).
 */
function listenOnSocket(
  path: string,
  serve: (o: { path: string }) => Deno.HttpServer<Deno.UnixAddr>,
): Deno.HttpServer<Deno.UnixAddr> {
  const taken = (why: string) =>
    new DvergrError("USAGE", `Cannot listen on ${path}: ${why}`, {
      hint: "Choose another --socket path, or stop the server that listens there",
    });
  try {
    Deno.lstatSync(path);
    throw taken("a file is there already");
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const dir = Deno.makeTempDirSync({ dir: dirname(path), prefix: ".dvergr-sock-" });
  try {
    Deno.chmodSync(dir, 0o700);
    const tmp = join(dir, "s");
    const server = serve({ path: tmp });
    try {
      Deno.chmodSync(tmp, 0o600);
      Deno.renameSync(tmp, path);
    } catch (e) {
      void server.shutdown();
      throw e;
    }
    return server;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/**
 * Removes a Unix socket at `path` that no server listens on any more (one left by a server
 * that was killed). A socket a server answers on, or any other file, stays.
 */
export async function clearStaleSocket(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  if (!info.isSocket) return;
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
  } catch (e) {
    if (e instanceof Deno.errors.ConnectionRefused || e instanceof Deno.errors.NotFound) {
      await Deno.remove(path).catch(() => {});
    }
  }
}
