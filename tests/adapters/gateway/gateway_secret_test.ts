/**
 * The attempt's secret in front of its world gateway: a request whose path does not start
 * with it gets a bare 404 (nothing of the world, nothing in the attempt's evidence), on the
 * host loopback port ("tcp") and on the Unix socket ("unix") alike; with it, the MCP server
 * and the model gateway answer as before, at the path after it.
 */
import assert from "node:assert/strict";
import {
  type AttemptGateway,
  startAttemptGateway,
} from "../../../adapters/gateway/attempt_gateway.ts";
import {
  guardedBySecret,
  newGatewaySecret,
  routedBySecret,
  sameSecret,
  SECRET_CHARS,
  type SecretHandler,
} from "../../../adapters/gateway/gateway_secret.ts";

Deno.test("newGatewaySecret() gives 256 random bits in base64url, a new one each time", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const s = newGatewaySecret();
    assert.equal(s.length, SECRET_CHARS);
    assert.match(s, /^[A-Za-z0-9_-]+$/);
    seen.add(s);
  }
  assert.equal(seen.size, 200);
  assert.equal(SECRET_CHARS, 43);
});

Deno.test("sameSecret() is equality of strings", () => {
  assert.equal(sameSecret("abc", "abc"), true);
  assert.equal(sameSecret("abc", "abd"), false);
  assert.equal(sameSecret("abc", "ab"), false);
  assert.equal(sameSecret("", ""), true);
});

Deno.test("guardedBySecret() passes on only /<secret>[/…], at the path after it, body and query kept", async () => {
  const secret = newGatewaySecret();
  const seen: string[] = [];
  const handle = guardedBySecret(secret, async (req) => {
    const url = new URL(req.url);
    seen.push(`${req.method} ${url.pathname}${url.search} ${await req.text()}`);
    return new Response("inner");
  });
  const ask = async (path: string) => {
    const res = await handle(
      new Request(`http://127.0.0.1:9${path}`, { method: "POST", body: "b" }),
    );
    return { status: res.status, body: await res.text() };
  };
  assert.deepEqual(await ask(`/${secret}/v1/messages?x=1`), { status: 200, body: "inner" });
  assert.deepEqual(await ask(`/${secret}`), { status: 200, body: "inner" });
  assert.deepEqual(await ask(`/${secret}/`), { status: 200, body: "inner" });
  assert.deepEqual(seen, ["POST /v1/messages?x=1 b", "POST / b", "POST / b"]);
  const other = newGatewaySecret();
  for (
    const path of [
      "/",
      "/mcp",
      "/v1/messages",
      `/${other}/mcp`,
      `/${secret.slice(0, -1)}/mcp`,
      `/${secret}x/mcp`,
      `/x/${secret}/mcp`,
      `/${secret}%2Fmcp`,
      `/${secret.toUpperCase()}/mcp`,
    ]
  ) {
    assert.deepEqual(await ask(path), { status: 404, body: "" }, path);
  }
  assert.equal(seen.length, 3, "a refused request reached the handler");
});

Deno.test("routedBySecret() passes a request to the handler of the secret it starts with, a bare 404 to any other, as routes come and go", async () => {
  const [a, b] = [newGatewaySecret(), newGatewaySecret()];
  const routes = new Map<string, SecretHandler>();
  const answer = (who: string): SecretHandler => (req) =>
    new Response(`${who} ${new URL(req.url).pathname}`);
  const handle = routedBySecret(routes);
  const ask = async (path: string) => {
    const res = await handle(new Request(`http://127.0.0.1:9${path}`));
    return `${res.status} ${await res.text()}`;
  };
  assert.equal(await ask(`/${a}/mcp`), "404 ");
  routes.set(a, answer("a"));
  routes.set(b, answer("b"));
  assert.equal(await ask(`/${a}/mcp`), "200 a /mcp");
  assert.equal(await ask(`/${b}/v1/messages`), "200 b /v1/messages");
  assert.equal(await ask(`/${b}`), "200 b /");
  for (const path of ["/mcp", `/${a.slice(1)}x/mcp`, `/${b}x`, `/${newGatewaySecret()}/`]) {
    assert.equal(await ask(path), "404 ", path);
  }
  routes.delete(a);
  assert.equal(await ask(`/${a}/mcp`), "404 ");
  assert.equal(await ask(`/${b}/mcp`), "200 b /mcp");
});

const TOOLSET = { tools: [], run: () => Promise.resolve({ content: "", isError: true }) };

function gatewayOn(transport: "unix" | "tcp"): Promise<AttemptGateway> {
  return startAttemptGateway({ signal: new AbortController().signal }, {
    transport,
    toolset: TOOLSET,
    model: {
      route: () => ({ problem: "this gateway forwards nothing" }),
      budgetMicros: 1_000_000,
      maxRequests: 10,
    },
  });
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
});
const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** One HTTP/1.1 request over the Unix socket `socket`: its status and body. */
async function overSocket(
  socket: string,
  method: string,
  path: string,
  body = "",
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  try {
    const bytes = new TextEncoder().encode(body);
    const head = `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n` +
      Object.entries(MCP_HEADERS).map(([k, v]) => `${k}: ${v}\r\n`).join("") +
      `content-length: ${bytes.length}\r\n\r\n`;
    await conn.write(new TextEncoder().encode(head));
    await conn.write(bytes);
    const text = await new Response(conn.readable).text();
    const [top, ...rest] = text.split("\r\n\r\n");
    return { status: Number(top.split(" ")[1]), body: rest.join("\r\n\r\n") };
  } finally {
    try {
      conn.close();
    } catch {
      // closed by the server
    }
  }
}

Deno.test("startAttemptGateway() on a host loopback port answers only requests with its secret: nothing of the world, nothing logged otherwise", async () => {
  const gw = await gatewayOn("tcp");
  const base = gw.env.DVERGR_MODEL_URL;
  const m = /^http:\/\/127\.0\.0\.1:(\d+)\/([A-Za-z0-9_-]{43})$/.exec(base);
  assert(m, base);
  const [port, secret] = [m[1], m[2]];
  assert.equal(gw.env.DVERGR_MCP_URL, `${base}/mcp`);
  assert.equal(gw.env.ANTHROPIC_BASE_URL, base);
  assert.equal(gw.env.OPENAI_BASE_URL, `${base}/v1`);
  const bare = `http://127.0.0.1:${port}`;
  const ask = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, init);
    return { status: res.status, body: await res.text() };
  };
  try {
    // Without the secret, or with another of the same length: a bare 404, whatever the path.
    const wrong = newGatewaySecret();
    for (const root of [bare, `${bare}/${wrong}`, `${bare}/${secret.slice(1)}x`]) {
      assert.deepEqual(await ask(`${root}/`), { status: 404, body: "" }, root);
      assert.deepEqual(
        await ask(`${root}/mcp`, { method: "POST", headers: MCP_HEADERS, body: INIT }),
        { status: 404, body: "" },
      );
      assert.deepEqual(
        await ask(`${root}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", max_tokens: 1, messages: [] }),
        }),
        { status: 404, body: "" },
      );
    }
    // With it: the model gateway and the MCP server, at the paths after it.
    assert.equal((await ask(`${base}/`)).status, 200);
    const init = await ask(gw.env.DVERGR_MCP_URL, {
      method: "POST",
      headers: MCP_HEADERS,
      body: INIT,
    });
    assert.equal(init.status, 200);
    assert.match(init.body, /"serverInfo"/);
  } finally {
    const ev = await gw.finish();
    // Only the attempt's own requests are its evidence, at paths without the secret.
    assert.deepEqual(ev.modelRequests.map((r) => `${r.method} ${r.path} ${r.status}`), [
      "GET / 200",
    ]);
    assert(!JSON.stringify(ev).includes(secret));
  }
});

Deno.test("startAttemptGateway() on its Unix socket also wants the secret", async () => {
  const gw = await gatewayOn("unix");
  const socket = gw.sockets[0];
  const base = new URL(gw.env.DVERGR_MODEL_URL).pathname;
  assert.match(base, /^\/[A-Za-z0-9_-]{43}$/);
  try {
    assert.deepEqual(await overSocket(socket, "POST", "/mcp", INIT), { status: 404, body: "" });
    assert.deepEqual(await overSocket(socket, "GET", "/"), { status: 404, body: "" });
    const init = await overSocket(socket, "POST", `${base}/mcp`, INIT);
    assert.equal(init.status, 200);
    assert.match(init.body, /"serverInfo"/);
  } finally {
    const ev = await gw.finish();
    assert.deepEqual(ev.modelRequests, []);
  }
});

Deno.test("attempts on the shared Unix socket: each secret reaches its own attempt's gateway only, a finished one's reaches nothing", async () => {
  const [a, b] = [await gatewayOn("unix"), await gatewayOn("unix")];
  assert.deepEqual(a.sockets, b.sockets);
  const socket = a.sockets[0];
  const [baseA, baseB] = [a, b].map((g) => new URL(g.env.DVERGR_MODEL_URL).pathname);
  let evB;
  try {
    assert.equal((await overSocket(socket, "GET", `${baseA}/`)).status, 200);
    assert.equal((await overSocket(socket, "GET", `${baseB}/`)).status, 200);
    assert.equal((await overSocket(socket, "GET", `${baseB}/`)).status, 200);
    const evA = await a.finish();
    assert.deepEqual(evA.modelRequests.map((r) => `${r.method} ${r.path} ${r.status}`), [
      "GET / 200",
    ]);
    // A's secret now reaches nothing; B's still reaches B, whose log holds only its own.
    assert.deepEqual(await overSocket(socket, "GET", `${baseA}/`), { status: 404, body: "" });
    assert.equal((await overSocket(socket, "POST", `${baseB}/mcp`, INIT)).status, 200);
  } finally {
    await a.finish();
    evB = await b.finish();
  }
  assert.deepEqual(evB.modelRequests.map((r) => `${r.method} ${r.path} ${r.status}`), [
    "GET / 200",
    "GET / 200",
  ]);
  assert.deepEqual(await overSocket(socket, "GET", `${baseB}/`), { status: 404, body: "" });
});

Deno.test("the shared Unix socket is made again, in a new directory, when it is gone", async () => {
  const first = await gatewayOn("unix");
  await first.finish();
  Deno.removeSync(first.dir!, { recursive: true });
  const next = await gatewayOn("unix");
  try {
    assert.notEqual(next.dir, first.dir);
    const base = new URL(next.env.DVERGR_MODEL_URL).pathname;
    assert.equal((await overSocket(next.sockets[0], "GET", `${base}/`)).status, 200);
  } finally {
    await next.finish();
  }
});

Deno.test("the shared Unix socket's directory goes when its process ends", async () => {
  const url = new URL("../../../adapters/gateway/attempt_gateway.ts", import.meta.url).href;
  const script = `
    const { startAttemptGateway } = await import(${JSON.stringify(url)});
    const gw = await startAttemptGateway({ signal: new AbortController().signal }, {
      transport: "unix",
      toolset: { tools: [], run: () => Promise.resolve({ content: "", isError: true }) },
      model: { route: () => ({ problem: "none" }), budgetMicros: 1, maxRequests: 1 },
    });
    console.log(gw.dir);
    await gw.finish();
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", "--no-lock", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const dir = new TextDecoder().decode(out.stdout).trim();
  assert.match(dir, /\/dvg-[0-9]+-/);
  assert.throws(() => Deno.lstatSync(dir), Deno.errors.NotFound);
});
