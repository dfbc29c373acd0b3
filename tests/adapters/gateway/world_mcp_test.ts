import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { worldToolset } from "../../../adapters/gateway/command_gateway.ts";
import { createWorldMcp, MAX_MCP_BODY } from "../../../adapters/gateway/world_mcp.ts";
import { createWorld } from "../../../adapters/world/world.ts";
import type { AttemptContext } from "../../../core/bench/candidate.ts";
import type { WorldWeb } from "../../../core/web/types.ts";

/** A web that answers every search with one hit and every page with its URL. */
const WEB: WorldWeb = {
  mode: "frozen",
  search: (query) =>
    Promise.resolve({
      ok: true,
      hits: [{ url: "https://example.test/a", title: `About ${query}`, description: "s" }],
    }),
  fetch: (url) =>
    Promise.resolve({ ok: true, url, finalUrl: url, status: 200, text: `page ${url}` }),
};

async function serve(ctx: Pick<AttemptContext, "world" | "profile" | "writable" | "web">) {
  const mcp = createWorldMcp(
    worldToolset({ ...ctx, signal: new AbortController().signal } as AttemptContext),
  );
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, mcp.handle);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.addr.port}/mcp`)),
  );
  return {
    mcp,
    client,
    async close() {
      await client.close();
      await mcp.close();
      await server.shutdown();
    },
  };
}

Deno.test("createWorldMcp() serves the world tools registry: web tools only when the attempt has a web", async () => {
  const world = await createWorld({ "/docs/a.md": "alpha" }, { mkdirs: ["/out"] });
  try {
    const plain = await serve({
      world: world.files,
      profile: "developer",
      writable: ["/out"],
      web: null,
    });
    assert.deepEqual((await plain.client.listTools()).tools.map((t) => t.name), [
      "list_files",
      "read_file",
      "write_file",
    ]);
    await plain.close();

    const readonly = await serve({
      world: world.files,
      profile: "analyst",
      writable: [],
      web: WEB,
    });
    const tools = (await readonly.client.listTools()).tools;
    assert.deepEqual(tools.map((t) => t.name), [
      "list_files",
      "read_file",
      "web_search",
      "web_fetch",
    ]);
    assert.equal(tools.find((t) => t.name === "web_fetch")?.annotations?.openWorldHint, true);
    assert.equal(tools.find((t) => t.name === "read_file")?.annotations?.readOnlyHint, true);
    const page = await readonly.client.callTool({
      name: "web_fetch",
      arguments: { url: "https://example.test/a" },
    });
    assert.match(JSON.stringify(page.content), /page https:\/\/example\.test\/a/);
    const refused = await readonly.client.callTool({
      name: "read_file",
      arguments: { path: "/../etc/passwd" },
    });
    assert.equal(refused.isError, true);
    // Every call is evidence: tool, arguments, result size, error flag.
    assert.deepEqual(readonly.mcp.calls.map((c) => [c.tool, c.isError]), [
      ["web_fetch", false],
      ["read_file", true],
    ]);
    assert.deepEqual(readonly.mcp.calls[0].args, { url: "https://example.test/a" });
    assert(readonly.mcp.calls[0].resultChars > 0);
    await readonly.close();
  } finally {
    await world.remove();
  }
});

Deno.test("createWorldMcp() logs long arguments cut, with their length", async () => {
  const world = await createWorld({}, { mkdirs: ["/out"] });
  try {
    const s = await serve({
      world: world.files,
      profile: "developer",
      writable: ["/out"],
      web: null,
    });
    await s.client.callTool({
      name: "write_file",
      arguments: { path: "/out/big.txt", content: "x".repeat(5000) },
    });
    const logged = s.mcp.calls[0].args.content as string;
    assert(logged.length < 300 && logged.endsWith("(5000 chars)"), logged);
    assert.equal((await world.capture(["/out"])).files["/out/big.txt"].length, 5000);
    await s.close();
  } finally {
    await world.remove();
  }
});

Deno.test("createWorldMcp() answers 413 to a body over its limit, in a session and before one", async () => {
  const world = await createWorld({}, { mkdirs: ["/out"] });
  const mcp = createWorldMcp(
    worldToolset({
      world: world.files,
      profile: "developer",
      writable: ["/out"],
      web: null,
      signal: new AbortController().signal,
    } as AttemptContext),
  );
  try {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const init = await mcp.handle(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        }),
      }),
    );
    assert.equal(init.status, 200);
    const sid = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "write_file",
        arguments: { path: "/out/a", content: "x".repeat(MAX_MCP_BODY) },
      },
    });
    for (
      const h of [
        { ...headers, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" },
        headers,
      ]
    ) {
      const res = await mcp.handle(
        new Request("http://127.0.0.1/mcp", { method: "POST", headers: h, body: huge }),
      );
      assert.equal(res.status, 413);
      assert.match((await res.json()).error.message, /at most 8388608 bytes/);
    }
    assert.deepEqual(mcp.calls, []);
  } finally {
    await mcp.close();
    await world.remove();
  }
});

Deno.test("createWorldMcp(): the world tools' errors name world paths, never where the world lies on the host", async () => {
  const world = await createWorld({ "/docs/a.md": "alpha" }, { mkdirs: ["/out"] });
  const s = await serve({
    world: world.files,
    profile: "developer",
    writable: ["/out"],
    web: null,
  });
  try {
    await Deno.symlink("/etc/passwd", `${world.dir}/docs/link`);
    const long = "x".repeat(300);
    const calls: [string, Record<string, string>, RegExp][] = [
      [
        "read_file",
        { path: "/docs/x.md" },
        /^Error: Cannot read world file "\/docs\/x\.md": no such file$/,
      ],
      [
        "read_file",
        { path: "/docs/link" },
        /^Error: Cannot use world path "\/docs\/link": "\/docs\/link" is a symbolic link$/,
      ],
      [
        "read_file",
        { path: `/docs/${long}` },
        /^Error: Cannot read world path "\/docs\/x{300}": File name too long \(os error 36\)$/,
      ],
      [
        "list_files",
        { dir: `/docs/${long}` },
        /^Error: Cannot list world path "\/docs\/x{300}": File name too long/,
      ],
      [
        "write_file",
        { path: `/out/${long}`, content: "x" },
        /^Error: Cannot write world path "\/out\/x{300}": File name too long/,
      ],
      [
        "write_file",
        { path: `/out/${long}/a.txt`, content: "x" },
        /^Error: Cannot write world path "\/out\/x{300}\/a\.txt": File name too long/,
      ],
    ];
    for (const [name, args, expected] of calls) {
      const r = await s.client.callTool({ name, arguments: args });
      assert.equal(r.isError, true, name);
      const text = (r.content as { text: string }[])[0].text;
      assert.match(text, expected);
      assert.ok(!text.includes(world.dir), text);
    }
  } finally {
    await s.close();
    await world.remove();
  }
});
