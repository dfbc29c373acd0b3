import assert from "node:assert/strict";
import {
  call,
  connectHttp,
  fromScratchFlow,
  initialize,
  type Json,
  startHttp,
  withHttp,
} from "./helpers.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** POSTs one JSON-RPC message; returns status, headers and the message(s) in the reply. */
async function post(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; messages: Json[] }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  const messages = type.includes("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)))
    : text
    ? [JSON.parse(text)]
    : [];
  return { status: res.status, headers: res.headers, messages };
}

Deno.test({
  name: "dvergr serve --mcp --http runs the from-scratch flow with the SDK client",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const server = await startHttp(home);
    try {
      const client = await connectHttp(server.url, server.token);
      try {
        await fromScratchFlow(client);
      } finally {
        await client.close();
      }
    } finally {
      const status = await server.stop();
      assert.equal(status.code, 0, server.stderr());
    }
    assert.match(server.stderr(), /http session .* opened/);
    assert.doesNotMatch(server.stderr(), /\[stdout\]/, "nothing on stdout");
    await Deno.remove(home, { recursive: true });
  },
});

Deno.test({
  name:
    "dvergr serve --mcp --http refuses requests without the token, with a wrong one, or from a foreign Origin",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const server = await startHttp(home);
    try {
      const init = initialize("2025-11-25");
      const none = await post(server.url, init, {});
      assert.equal(none.status, 401);
      assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
      assert.match(none.messages[0].error.message, /Authorization: Bearer/);

      const wrong = await post(server.url, init, { authorization: `Bearer ${"0".repeat(64)}` });
      assert.equal(wrong.status, 401);
      const truncated = await post(server.url, init, {
        authorization: `Bearer ${server.token.slice(0, 63)}`,
      });
      assert.equal(truncated.status, 401);
      const basic = await post(server.url, init, { authorization: `Basic ${server.token}` });
      assert.equal(basic.status, 401);

      const auth = { authorization: `Bearer ${server.token}` };
      for (const origin of ["https://evil.example", "http://127.0.0.1.evil.example", "null"]) {
        const foreign = await post(server.url, init, { ...auth, origin });
        assert.equal(foreign.status, 403, origin);
      }
      // The same request from a loopback page, or without Origin, is served.
      const local = await post(server.url, init, { ...auth, origin: "http://localhost:5173" });
      assert.equal(local.status, 200);
      assert.equal(local.messages[0].result.serverInfo.name, "dvergr");

      // Another path is not the endpoint.
      const elsewhere = await post(server.url.replace(/\/mcp$/, "/other"), init, auth);
      assert.equal(elsewhere.status, 404);
    } finally {
      await server.stop();
    }
    assert.match(server.stderr(), /listening on http:\/\/127\.0\.0\.1:\d+\/mcp/);
    await Deno.remove(home, { recursive: true });
  },
});

Deno.test({
  name: "dvergr serve --mcp --http handshakes 2025-03-26, 2025-06-18 and 2025-11-25 with sessions",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const server = await startHttp(home);
    try {
      const auth = { authorization: `Bearer ${server.token}` };
      for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
        const r = await post(server.url, initialize(version), auth);
        assert.equal(r.status, 200);
        assert.equal(r.messages[0].result.protocolVersion, version);
        const session = r.headers.get("mcp-session-id");
        assert.ok(session, "initialize opens a session");
        const h = { ...auth, "mcp-session-id": session!, "mcp-protocol-version": version };
        await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, h);
        const list = await post(server.url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, h);
        assert.equal(list.status, 200);
        assert.ok(list.messages[0].result.tools.some((t: Json) => t.name === "catalog_benchmark"));
        const res = await fetch(server.url, { method: "DELETE", headers: h });
        await res.body?.cancel();
        assert.equal(res.status, 200, "DELETE ends the session");
        const after = await post(server.url, { jsonrpc: "2.0", id: 3, method: "tools/list" }, h);
        assert.equal(after.status, 404);
      }
      // A request that is not initialize needs a session.
      const stray = await post(server.url, { jsonrpc: "2.0", id: 9, method: "tools/list" }, auth);
      assert.equal(stray.status, 400);
    } finally {
      await server.stop();
    }
    await Deno.remove(home, { recursive: true });
  },
});

Deno.test({
  name: "dvergr serve --mcp --http writes the token once, mode 0600, and keeps it across starts",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const first = await startHttp(home);
    await first.stop();
    assert.match(first.token, /^[0-9a-f]{64}$/);
    const st = await Deno.stat(`${home}/mcp/http-token`);
    assert.equal(st.mode! & 0o777, 0o600);
    const second = await startHttp(home);
    await second.stop();
    assert.equal(second.token, first.token);
    assert.match(first.stderr(), /, new\)/);
    assert.doesNotMatch(second.stderr(), /, new\)/);
    await Deno.remove(home, { recursive: true });
  },
});

/** One raw HTTP/1.1 request (fetch would not send a Host header of our choosing). */
async function rawPost(port: number, host: string, token: string, body: unknown) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const payload = JSON.stringify(body);
    const head = [
      "POST /mcp HTTP/1.1",
      `Host: ${host}`,
      `Authorization: Bearer ${token}`,
      "Content-Type: application/json",
      "Accept: application/json, text/event-stream",
      `Content-Length: ${new TextEncoder().encode(payload).length}`,
      "Connection: close",
      "",
      "",
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(head + payload));
    let text = "";
    const buf = new Uint8Array(65536);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
      if (/\r\n\r\n/.test(text) && /"jsonrpc"/.test(text)) break;
    }
    return Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]);
  } finally {
    conn.close();
  }
}

Deno.test({
  name:
    "serveHttp() refuses a Host that is not loopback (DNS rebinding) and takes loopback hosts in any case",
  ...opts,
  async fn() {
    await withHttp(async (http, token) => {
      const init = initialize("2025-11-25");
      for (
        const host of ["evil.example", `evil.example:${http.port}`, "127.0.0.2", "localhost.evil"]
      ) {
        assert.equal(await rawPost(http.port, host, token, init), 403, host);
      }
      for (
        const host of [
          `127.0.0.1:${http.port}`,
          `localhost:${http.port}`,
          `LOCALHOST:${http.port}`,
          `LocalHost`,
          `[::1]:${http.port}`,
        ]
      ) {
        assert.equal(await rawPost(http.port, host, token, init), 200, host);
      }
    });
  },
});

Deno.test({
  name:
    "serveHttp() takes a request body up to 32 MiB in a session (a room_write of a 6 MB table), refuses a larger one with 413",
  ...opts,
  async fn() {
    await withHttp(async (http, token) => {
      const client = await connectHttp(http.url, token);
      try {
        await call(client, "room_create", { room: "big" });
        const table = "vendor;amount\n" + "ACME GmbH;12,50\n".repeat(400_000);
        assert.ok(table.length > 6_000_000);
        const w = await call(client, "room_write", { room: "big", files: { "t.csv": table } });
        assert.deepEqual(w.written, ["t.csv"]);
        const files = await call(client, "room_files", { room: "big" });
        assert.equal(files.files[0].bytes, table.length);
      } finally {
        await client.close();
      }
      const auth = { authorization: `Bearer ${token}` };
      const init = await post(http.url, initialize("2025-11-25"), auth);
      const h = { ...auth, "mcp-session-id": init.headers.get("mcp-session-id")! };
      const pad = "x".repeat(33 * 1024 * 1024);
      const tooBig = await post(http.url, { jsonrpc: "2.0", id: 2, method: "ping", pad }, h);
      assert.equal(tooBig.status, 413);
      const tooBigInit = await post(http.url, { ...initialize("2025-11-25"), pad }, auth);
      assert.equal(tooBigInit.status, 413);
    });
  },
});

Deno.test({
  name: "dvergr serve --mcp --http refuses a second request with an id in flight in the session",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const server = await startHttp(home, ["--profile", "code"]);
    try {
      const auth = { authorization: `Bearer ${server.token}` };
      const init = await post(server.url, initialize("2025-06-18"), auth);
      const h = {
        ...auth,
        "mcp-session-id": init.headers.get("mcp-session-id")!,
        "mcp-protocol-version": "2025-06-18",
      };
      await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, h);
      const evalCall = (code: string) => ({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "js_eval", arguments: { code } },
      });
      // The first runs 5 s in the sandbox (its reply stream is open at once); the second,
      // sent as soon as the first is in flight, names the same id.
      const first = await fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...h,
        },
        body: JSON.stringify(
          evalCall("const t = Date.now(); while (Date.now() - t < 5000) {} return 'first';"),
        ),
      });
      assert.equal(first.status, 200);
      const second = await post(server.url, evalCall("return 'second';"), h);
      assert.equal(second.status, 400);
      assert.equal(second.messages[0].id, 7);
      assert.equal(second.messages[0].error.code, -32600);
      assert.match(second.messages[0].error.message, /id 7 is already in flight/);
      // The first still gets its own answer (it used to wait for ever: the second took its
      // stream), and then the id is free again.
      const text = await first.text();
      const answer = JSON.parse(text.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
      assert.equal(answer.id, 7);
      assert.match(JSON.stringify(answer.result), /first/);
      const third = await post(server.url, evalCall("return 'third';"), h);
      assert.equal(third.status, 200);
      assert.match(JSON.stringify(third.messages[0].result), /third/);
    } finally {
      await server.stop();
      await Deno.remove(home, { recursive: true });
    }
  },
});
