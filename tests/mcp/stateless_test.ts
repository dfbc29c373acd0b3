/**
 * The stateless era (2026-07-28) beside the handshake: server/discover, _meta selection,
 * header checks, subscriptions/listen over SSE, both eras on one HTTP connection and on
 * one stdio-like stream, HTTP on a Unix socket.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// Type-only, so named without ".js": the package's "./*" export maps types to "*.d.ts".
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import { openHome } from "../../adapters/store/kv/home.ts";
import { type Home } from "../../core/ports/home.ts";
import { allOps } from "../../core/ops/registry.ts";
import { createMcpServer } from "../../mcp/server.ts";
import { selectTools } from "../../mcp/selection.ts";
import { clearStaleSocket, type HttpServer, serveHttp } from "../../mcp/http.ts";
import {
  createStatelessHandler,
  STATELESS_VERSION,
  type StatelessHandler,
} from "../../mcp/stateless.ts";
import { splitEras } from "../../mcp/era_transport.ts";
import { createRoomWatcher, homeVersion } from "../../mcp/room_watch.ts";
import { BOOKINGS_CSV, BOOKINGS_SPEC, initialize } from "./helpers.ts";
import { NO_RUNNER } from "../helpers/op_context.ts";
import { composeServices } from "../../adapters/compose.ts";

const TOKEN = "s".repeat(64);
const META = {
  "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Served {
  home: Home;
  http: HttpServer;
  stateless: StatelessHandler;
  makeServer: () => ReturnType<typeof createMcpServer>;
}

async function withServer(
  f: (s: Served) => Promise<void>,
  opts: { socket?: string; profile?: string } = {},
): Promise<void> {
  const home = await openHome(await Deno.makeTempDir({ prefix: "dvergr-stateless-" }));
  const context = {
    home,
    services: composeServices(),
    runner: NO_RUNNER,
    env: () => undefined,
    cwd: Deno.cwd(),
    clock: () => new Date(),
  };
  const selection = selectTools(allOps(), { profile: opts.profile });
  const watcher = createRoomWatcher(homeVersion(home), 50);
  const log = () => {};
  const stateless = createStatelessHandler({ context, selection, log, watcher });
  const makeServer = () => createMcpServer({ context, selection, log, watcher });
  const http = serveHttp({
    port: 0,
    socket: opts.socket,
    token: TOKEN,
    makeServer,
    stateless,
    log,
  });
  try {
    await f({ home, http, stateless, makeServer });
  } finally {
    await http.close();
    watcher.close();
    await home.close();
    await Deno.remove(home.dir, { recursive: true });
  }
}

/** A stateless request body and the headers that go with it. */
function stateless(
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
) {
  const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...META, ...meta } } };
  const headers: Record<string, string> = {
    "mcp-method": method,
    "mcp-protocol-version": STATELESS_VERSION,
  };
  if (method === "tools/call") headers["mcp-name"] = String(params.name);
  if (method === "resources/read") headers["mcp-name"] = String(params.uri);
  return { body, headers };
}

/**
 * A minimal HTTP/1.1 client on ONE connection: each request waits for its whole response
 * (Content-Length or chunked), and the connection stays open for the next.
 */
class OneConnection {
  #buf = new Uint8Array(0);
  constructor(readonly conn: Deno.Conn) {}
  static async open(port: number) {
    return new OneConnection(await Deno.connect({ hostname: "127.0.0.1", port }));
  }
  async #more(): Promise<void> {
    const chunk = new Uint8Array(65536);
    const n = await this.conn.read(chunk);
    if (n === null) throw new Error("the server closed the connection");
    const next = new Uint8Array(this.#buf.length + n);
    next.set(this.#buf);
    next.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = next;
  }
  async #line(): Promise<string> {
    for (;;) {
      const i = this.#buf.findIndex((b, k) => b === 13 && this.#buf[k + 1] === 10);
      if (i >= 0) {
        const line = new TextDecoder().decode(this.#buf.subarray(0, i));
        this.#buf = this.#buf.subarray(i + 2);
        return line;
      }
      await this.#more();
    }
  }
  async #bytes(n: number): Promise<Uint8Array> {
    while (this.#buf.length < n) await this.#more();
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }
  async request(
    method: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const payload = body === undefined ? "" : JSON.stringify(body);
    const all: Record<string, string> = {
      host: "127.0.0.1",
      authorization: `Bearer ${TOKEN}`,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "content-length": String(new TextEncoder().encode(payload).length),
      ...headers,
    };
    const head = `${method} /mcp HTTP/1.1\r\n` +
      Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("") + "\r\n";
    await this.conn.write(new TextEncoder().encode(head + payload));
    const status = Number((await this.#line()).split(" ")[1]);
    const h = new Headers();
    for (let l = await this.#line(); l !== ""; l = await this.#line()) {
      const c = l.indexOf(":");
      h.append(l.slice(0, c).trim(), l.slice(c + 1).trim());
    }
    let bytes: Uint8Array;
    if (h.get("transfer-encoding") === "chunked") {
      const parts: Uint8Array[] = [];
      for (;;) {
        const size = parseInt(await this.#line(), 16);
        if (size === 0) {
          await this.#line();
          break;
        }
        parts.push(await this.#bytes(size));
        await this.#line();
      }
      bytes = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
      let at = 0;
      for (const p of parts) {
        bytes.set(p, at);
        at += p.length;
      }
    } else bytes = await this.#bytes(Number(h.get("content-length") ?? "0"));
    return { status, headers: h, text: new TextDecoder().decode(bytes) };
  }
  close() {
    this.conn.close();
  }
}

/** The JSON-RPC messages of a response: JSON, or the data lines of an SSE stream. */
function messages(text: string): Record<string, unknown>[] {
  const t = text.trim();
  if (t === "") return [];
  if (t.startsWith("{")) return [JSON.parse(t)];
  return t.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
}

function resultOf(text: string): Record<string, unknown> {
  const m = messages(text).find((x) => "result" in x || "error" in x);
  assert.ok(m, `no response in ${text}`);
  assert.ok(!("error" in m), `error: ${JSON.stringify(m)}`);
  return m.result as Record<string, unknown>;
}

async function post(s: Served, req: { body: unknown; headers: Record<string, string> }) {
  return await fetch(s.http.url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...req.headers,
    },
    body: JSON.stringify(req.body),
  });
}

Deno.test("stateless and handshake requests interleave on one HTTP connection", async () => {
  await withServer(async (s) => {
    const c = await OneConnection.open(s.http.port);
    try {
      const init = await c.request(
        "POST",
        { "mcp-protocol-version": "2025-11-25" },
        initialize("2025-11-25"),
      );
      assert.equal(init.status, 200);
      const sid = init.headers.get("mcp-session-id")!;
      assert.ok(sid);
      const initResult = resultOf(init.text);
      assert.equal(initResult.protocolVersion, "2025-11-25");
      const session = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
      const inited = await c.request("POST", session, {
        jsonrpc: "2.0",
        method: "notifications/initialized",
      });
      assert.equal(inited.status, 202);
      // Stateless: discover, list, call — between the session's requests, on the same socket.
      const d = stateless(2, "server/discover");
      const disc = resultOf((await c.request("POST", d.headers, d.body)).text);
      assert.ok((disc.supportedVersions as string[]).includes(STATELESS_VERSION));
      assert.ok((disc.supportedVersions as string[]).includes("2025-11-25"));
      assert.equal(disc.resultType, "complete");
      assert.ok((disc.capabilities as Record<string, unknown>).resources);
      const create = stateless(3, "tools/call", {
        name: "room_create",
        arguments: { title: "Books" },
      });
      const created = resultOf((await c.request("POST", create.headers, create.body)).text);
      assert.equal(created.resultType, "complete");
      assert.equal((created.structuredContent as { room: string }).room, "books");
      assert.deepEqual(
        (created._meta as Record<string, unknown>)["io.modelcontextprotocol/serverInfo"],
        {
          name: "dvergr",
          title: "dvergr",
          version: (disc.serverInfo as { version: string }).version,
        },
      );
      const listed = await c.request("POST", session, {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "room_list", arguments: {} },
      });
      const rooms = resultOf(listed.text).structuredContent as { rooms: { room: string }[] };
      assert.deepEqual(rooms.rooms.map((r) => r.room), ["books"]);
      const read = stateless(5, "resources/read", { uri: "room://books/files" });
      const r = resultOf((await c.request("POST", read.headers, read.body)).text);
      assert.equal(r.ttlMs, 0);
      assert.equal(r.cacheScope, "private");
      const list = stateless(6, "tools/list");
      const tools = resultOf((await c.request("POST", list.headers, list.body)).text);
      assert.ok((tools.tools as unknown[]).length > 5);
      const ping = await c.request("POST", session, { jsonrpc: "2.0", id: 7, method: "ping" });
      assert.deepEqual(resultOf(ping.text), {});
    } finally {
      c.close();
    }
  });
});

Deno.test("stateless HTTP: header checks (-32020), unsupported versions (-32022), unknown methods (404)", async () => {
  await withServer(async (s) => {
    const ok = stateless(1, "tools/call", { name: "room_list", arguments: {} });
    const send = async (headers: Record<string, string>, body = ok.body as unknown) => {
      const res = await post(s, { headers, body });
      return { status: res.status, json: await res.json() };
    };
    let r = await send({ ...ok.headers, "mcp-method": "tools/list" });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32020);
    assert.equal(
      r.json.error.message,
      'Header mismatch: Mcp-Method is "tools/list", the body\'s method "tools/call"',
    );
    r = await send({ "mcp-protocol-version": STATELESS_VERSION, "mcp-name": "room_list" });
    assert.equal(r.json.error.code, -32020);
    r = await send({ ...ok.headers, "mcp-name": "room_create" });
    assert.equal(r.status, 400);
    assert.equal(
      r.json.error.message,
      'Header mismatch: Mcp-Name is "room_create", the body names "room_list"',
    );
    r = await send({ ...ok.headers, "mcp-protocol-version": "2025-11-25" });
    assert.equal(r.json.error.code, -32020);
    assert.equal(
      r.json.error.message,
      `Header mismatch: MCP-Protocol-Version is "2025-11-25", the body's "${STATELESS_VERSION}"`,
    );
    const old = stateless(2, "tools/list", {}, {
      "io.modelcontextprotocol/protocolVersion": "2099-01-01",
    });
    r = await send({ ...old.headers, "mcp-protocol-version": "2099-01-01" }, old.body);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32022);
    assert.equal(r.json.error.data.requested, "2099-01-01");
    assert.ok(r.json.error.data.supported.includes(STATELESS_VERSION));
    const ping = stateless(3, "ping");
    r = await send(ping.headers, ping.body);
    assert.equal(r.status, 404);
    assert.equal(r.json.error.code, -32601);
    r = await send(ok.headers);
    assert.equal(r.status, 200);
    assert.equal(r.json.result.resultType, "complete");
  });
});

Deno.test("server/discover passes the same checks as every request and carries ttlMs and cacheScope", async () => {
  await withServer(async (s) => {
    const send = async (body: unknown, headers: Record<string, string>) => {
      const res = await post(s, { headers, body });
      return { status: res.status, json: await res.json() };
    };
    const d = stateless(1, "server/discover");
    // No _meta, no version in _meta, a version nobody speaks: 400 with -32022 (or -32020).
    const bare = { jsonrpc: "2.0", id: 2, method: "server/discover", params: {} };
    let r = await send(bare, { "mcp-method": "server/discover" });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32022);
    assert.ok(r.json.error.data.supported.includes(STATELESS_VERSION));
    const noVersion = { ...bare, params: { _meta: { "io.modelcontextprotocol/clientInfo": {} } } };
    r = await send(noVersion, { "mcp-method": "server/discover" });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32022);
    const v999 = stateless(3, "server/discover", {}, {
      "io.modelcontextprotocol/protocolVersion": "v999.0.0",
    });
    r = await send(v999.body, { ...v999.headers, "mcp-protocol-version": "v999.0.0" });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32022);
    assert.equal(r.json.error.data.requested, "v999.0.0");
    r = await send(d.body, { "mcp-method": "server/discover" });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32020, "the version header must match the body");
    r = await send(d.body, d.headers);
    assert.equal(r.status, 200);
    assert.equal(r.json.result.ttlMs, 300_000);
    assert.equal(r.json.result.cacheScope, "private");
    assert.deepEqual(r.json.result.capabilities.completions, {});
    assert.deepEqual(r.json.result.capabilities.prompts, { listChanged: false });
    // The same checks without HTTP (stdio carries no headers).
    const io = { notify: () => {}, signal: new AbortController().signal };
    const plain = await s.stateless.handle(bare as never, io);
    assert.equal((plain as { error: { code: number } }).error.code, -32022);
  });
});

Deno.test("stateless prompts/list, prompts/get and completion/complete", async () => {
  await withServer(async (s) => {
    const call = async (method: string, params: Record<string, unknown>) => {
      const req = stateless(1, method, params);
      const res = await post(s, req);
      assert.equal(res.status, 200);
      return (await res.json()).result;
    };
    await s.home.rooms.createRoom("books");
    const prompts = await call("prompts/list", {});
    assert.deepEqual(prompts.prompts.map((p: { name: string }) => p.name), [
      "author_bundle",
      "benchmark_bundle",
      "read_report",
    ]);
    assert.equal(prompts.ttlMs, 0);
    const got = await call("prompts/get", {
      name: "read_report",
      arguments: { room: "books", experiment: "0123abcd" },
    });
    assert.match(got.messages[0].content.text, /experiment_report \{room: "books"/);
    const done = await call("completion/complete", {
      ref: { type: "ref/prompt", name: "benchmark_bundle" },
      argument: { name: "room", value: "bo" },
    });
    assert.deepEqual(done.completion, { values: ["books"], total: 1, hasMore: false });
  });
});

Deno.test("stateless _meta selection narrows the server's tools for one request, never widens them", async () => {
  await withServer(async (s) => {
    const narrow = { "dvergr/tools": ["room_list", "room_read"] };
    const list = stateless(1, "tools/list", {}, narrow);
    const tools = (await (await post(s, list)).json()).result.tools as { name: string }[];
    assert.deepEqual(tools.map((t) => t.name), ["room_list", "room_read"]);
    const call = stateless(
      2,
      "tools/call",
      { name: "room_create", arguments: { room: "x" } },
      narrow,
    );
    const refused = await (await post(s, call)).json();
    assert.equal(refused.error.code, -32602);
    assert.match(refused.error.message, /Unknown tool "room_create"/);
    // The next request without a selection has the server's own.
    const all = stateless(3, "tools/list");
    assert.ok(((await (await post(s, all)).json()).result.tools as unknown[]).length > 2);
    const wide = stateless(4, "tools/list", {}, { "dvergr/profile": "admin" });
    const w = await (await post(s, wide)).json();
    assert.equal(w.error.code, -32602);
    assert.match(w.error.message, /catalog_promote/);
    const unknownProfile = stateless(5, "tools/list", {}, { "dvergr/profile": "nosuch" });
    const u = await (await post(s, unknownProfile)).json();
    assert.match(u.error.message, /Unknown dvergr MCP profile: "nosuch"/);
    const res = stateless(6, "resources/read", { uri: "test://static-text" });
    assert.equal((await (await post(s, res)).json()).error.code, -32602);
  });
});

/** Reads SSE messages from a response as they come. */
async function* sse(res: Response): AsyncGenerator<Record<string, unknown>> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const l of event.split("\n")) if (l.startsWith("data: ")) yield JSON.parse(l.slice(6));
    }
  }
}

Deno.test("subscriptions/listen: acknowledged, tagged updates after room changes, answered at shutdown", async () => {
  let stream: AsyncGenerator<Record<string, unknown>> | undefined;
  await withServer(async (s) => {
    await s.home.rooms.createRoom("books");
    const listen = stateless(41, "subscriptions/listen", {
      filter: {
        toolsListChanged: true,
        promptsListChanged: true,
        resourceSubscriptions: ["room://books/files", "test://nothing"],
      },
    });
    const res = await post(s, listen);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    stream = sse(res);
    const ack = (await stream.next()).value!;
    assert.equal(ack.method, "notifications/subscriptions/acknowledged");
    const params = ack.params as Record<string, unknown>;
    assert.deepEqual(params.resourceSubscriptions, ["room://books/files"]);
    assert.equal(params.toolsListChanged, true);
    // Prompts are offered now; like the tools, a selection's list never changes.
    assert.equal(params.promptsListChanged, true);
    assert.equal(
      (params._meta as Record<string, unknown>)["io.modelcontextprotocol/subscriptionId"],
      41,
    );
    await s.home.rooms.writeFiles("books", new Map([["a.txt", "a"]]), "a");
    const update = (await stream.next()).value!;
    assert.equal(update.method, "notifications/resources/updated");
    assert.equal((update.params as { uri: string }).uri, "room://books/files");
    assert.equal(
      ((update.params as Record<string, unknown>)._meta as Record<string, unknown>)[
        "io.modelcontextprotocol/subscriptionId"
      ],
      41,
    );
  });
  // The server stopped: the listen request was answered before its stream closed.
  const last = (await stream!.next()).value!;
  assert.equal(last.id, 41);
  assert.equal((last.result as Record<string, unknown>).resultType, "complete");
  assert.equal((await stream!.next()).done, true);
});

Deno.test("subscriptions/listen: closing the stream cancels it (no more watching)", async () => {
  await withServer(async (s) => {
    await s.home.rooms.createRoom("books");
    const ac = new AbortController();
    const listen = stateless(1, "subscriptions/listen", {
      resourceSubscriptions: ["room://books/files"],
    });
    const res = await fetch(s.http.url, {
      method: "POST",
      signal: ac.signal,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        ...listen.headers,
      },
      body: JSON.stringify(listen.body),
    });
    const stream = sse(res);
    assert.equal((await stream.next()).value!.method, "notifications/subscriptions/acknowledged");
    ac.abort();
    await stream.return(undefined).catch(() => {});
    // The server's close() does not wait for a listen that is gone.
  });
});

/**
 * A raw client on an in-memory transport linked to `server` (through `wrap` when given):
 * the client's end, every message it got, and the answer to a request id once it came
 * (within 10 s).
 */
async function linkedClient(
  server: ReturnType<typeof createMcpServer>,
  wrap: (t: InMemoryTransport) => Transport = (t) => t,
) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(wrap(a));
  const got: Record<string, unknown>[] = [];
  b.onmessage = (m) => void got.push(m as Record<string, unknown>);
  await b.start();
  const answer = async (id: number) => {
    const end = Date.now() + 10_000;
    while (!got.some((m) => m.id === id)) {
      if (Date.now() > end) throw new Error(`no answer to ${id}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return got.find((m) => m.id === id)!;
  };
  return { b, got, answer };
}

Deno.test("splitEras(): one stream carries handshake and stateless messages", async () => {
  await withServer(async (s) => {
    const server = s.makeServer();
    const { b, got, answer: until } = await linkedClient(server, (a) => splitEras(a, s.stateless));
    await b.send(initialize("2025-06-18"));
    assert.equal(
      ((await until(1)).result as { protocolVersion: string }).protocolVersion,
      "2025-06-18",
    );
    await b.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await b.send(
      stateless(2, "tools/call", { name: "room_create", arguments: { room: "r" } }).body as never,
    );
    const made = await until(2);
    assert.equal((made.result as Record<string, unknown>).resultType, "complete");
    await b.send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "room_list", arguments: {} },
    });
    const listed = (await until(3)).result as {
      structuredContent: { rooms: unknown[] };
      resultType?: string;
    };
    assert.equal(listed.structuredContent.rooms.length, 1);
    assert.equal(listed.resultType, undefined);
    // A stateless listen is cancelled by notifications/cancelled: no answer comes.
    await b.send(
      stateless(4, "subscriptions/listen", { resourceSubscriptions: ["room://r/files"] })
        .body as never,
    );
    const end = Date.now() + 5000;
    while (!got.some((m) => m.method === "notifications/subscriptions/acknowledged")) {
      if (Date.now() > end) throw new Error("no acknowledgement");
      await new Promise((r) => setTimeout(r, 10));
    }
    await b.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 4 } });
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(!got.some((m) => m.id === 4));
    await server.close();
  });
});

Deno.test("serveHttp() on a Unix socket: mode 0600, the same MCP", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-sock-test-" });
  const path = `${dir}/mcp.sock`;
  try {
    await withServer(async (s) => {
      assert.equal(s.http.url, `unix:${path}`);
      const info = await Deno.lstat(path);
      assert.ok(info.isSocket);
      assert.equal(info.mode! & 0o777, 0o600);
      const client = Deno.createHttpClient({ proxy: { transport: "unix", path } });
      try {
        const d = stateless(1, "server/discover");
        const res = await fetch("http://localhost/mcp", {
          client,
          method: "POST",
          headers: {
            authorization: `Bearer ${TOKEN}`,
            "content-type": "application/json",
            ...d.headers,
          },
          body: JSON.stringify(d.body),
        });
        assert.equal(res.status, 200);
        assert.ok((await res.json()).result.supportedVersions.includes(STATELESS_VERSION));
        const bad = await fetch("http://localhost/mcp", { client, method: "POST", body: "{}" });
        assert.equal(bad.status, 401);
        await bad.body?.cancel();
      } finally {
        client.close();
      }
    }, { socket: path });
    // Closed: the socket is gone.
    await assert.rejects(Deno.lstat(path));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stateless tools/call with a progressToken answers on an SSE stream with its progress first", async () => {
  await withServer(async (s) => {
    const call = async (id: number, name: string, args: Record<string, unknown>) =>
      await (await post(s, stateless(id, "tools/call", { name, arguments: args }))).json();
    await call(1, "room_create", { room: "books" });
    await call(2, "room_write", {
      room: "books",
      files: { "data/cases.csv": { text: BOOKINGS_CSV } },
    });
    const cases = await call(3, "catalog_cases", {
      room: "books",
      name: "invoice-coding",
      table: "/data/cases.csv",
      spec: BOOKINGS_SPEC,
    });
    assert.equal(cases.result.isError, undefined, JSON.stringify(cases));
    // No job runner here: the benchmark runs inside the call and reports each cell.
    const res = await post(
      s,
      stateless(4, "tools/call", {
        name: "catalog_benchmark",
        arguments: { room: "books", name: "invoice-coding", candidates: ["builtin:noop"] },
      }, { progressToken: "p1" }),
    );
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const all: Record<string, unknown>[] = [];
    for await (const m of sse(res)) all.push(m);
    const last = all[all.length - 1];
    assert.equal(last.id, 4);
    assert.equal((last.result as Record<string, unknown>).resultType, "complete");
    const progress = all.filter((m) => m.method === "notifications/progress");
    assert.ok(progress.length >= 1, JSON.stringify(all));
    assert.ok(
      progress.every((p) => (p.params as { progressToken: string }).progressToken === "p1"),
    );
    const values = progress.map((p) => (p.params as { progress: number }).progress);
    assert.deepEqual(values, [...values].sort((a, b) => a - b));
  });
});

Deno.test("a handshake client's initialize _meta narrows its connection's tools, never widens them", async () => {
  await withServer(async (s) => {
    const talk = async (meta: Record<string, unknown>) => {
      const server = s.makeServer();
      const { b, answer } = await linkedClient(server);
      await b.send(initialize("2025-11-25", 1, meta));
      const init = await answer(1);
      if ("error" in init) {
        await server.close();
        return { init, tools: null };
      }
      await b.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await b.send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
      const tools = ((await answer(2)).result as { tools: { name: string }[] }).tools;
      await server.close();
      return { init, tools: tools.map((t) => t.name) };
    };
    const narrow = await talk({ "dvergr/tools": "room_list,room_read" });
    assert.deepEqual(narrow.tools, ["room_list", "room_read"]);
    const all = await talk({});
    assert.ok(all.tools!.length > 10);
    const wide = await talk({ "dvergr/profile": "admin" });
    assert.equal((wide.init.error as { code: number }).code, -32602);
    assert.match((wide.init.error as { message: string }).message, /catalog_promote/);
  });
});

Deno.test("clearStaleSocket() removes a socket nobody listens on, keeps a live one and other files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-stale-" });
  try {
    const live = `${dir}/live.sock`;
    const listener = Deno.listen({ transport: "unix", path: live });
    const accepting = (async () => {
      for await (const c of listener) c.close();
    })();
    await clearStaleSocket(live);
    assert.ok((await Deno.lstat(live)).isSocket);
    listener.close();
    await accepting.catch(() => {});
    // A server killed with SIGKILL leaves its socket behind.
    const stale = `${dir}/stale.sock`;
    const script = `${dir}/listen.ts`;
    await Deno.writeTextFile(
      script,
      `const l = Deno.listen({ transport: "unix", path: ${JSON.stringify(stale)} });
for await (const c of l) c.close();`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", `--allow-read=${dir}`, `--allow-write=${dir}`, "--allow-net", script],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    for (let i = 0; i < 300 && !(await Deno.lstat(stale).then(() => true, () => false)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    try {
      child.kill("SIGKILL");
    } catch {
      throw new Error(new TextDecoder().decode((await child.output()).stderr));
    }
    await child.status;
    await child.stderr.cancel();
    assert.ok((await Deno.lstat(stale)).isSocket);
    await clearStaleSocket(stale);
    await assert.rejects(Deno.lstat(stale));
    const file = `${dir}/plain`;
    await Deno.writeTextFile(file, "x");
    await clearStaleSocket(file);
    assert.equal(await Deno.readTextFile(file), "x");
    assert.throws(
      () =>
        serveHttp({
          port: 0,
          socket: file,
          token: TOKEN,
          makeServer: () => {
            throw new Error("not reached");
          },
          log: () => {},
        }),
      /Cannot listen on .*plain: a file is there already/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
