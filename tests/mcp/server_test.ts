import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { openHome } from "../../core/io/home.ts";
import { createJobRunner } from "../../core/io/job_runner.ts";
import type { DurableJobRunner } from "../../core/jobs.ts";
import { allOps } from "../../core/ops/registry.ts";
import { createMcpServer } from "../../mcp/server.ts";
import { selectTools } from "../../mcp/selection.ts";
import type { CheckerRunner } from "../../core/checker.ts";

const NO_RUNNER: CheckerRunner = {
  check: () => Promise.reject(new Error("not in these tests")),
  judgeRequests: () => Promise.reject(new Error("not in these tests")),
  close() {},
};

/** A server of the bench profile on a fresh home, with the SDK's client in memory. */
async function withClient(
  f: (client: Client, jobs: DurableJobRunner) => Promise<void>,
): Promise<void> {
  const home = await openHome(await Deno.makeTempDir({ prefix: "dvergr-mcp-server-" }));
  const jobs = createJobRunner(home.state);
  const server = createMcpServer({
    context: {
      home,
      runner: NO_RUNNER,
      env: () => undefined,
      cwd: Deno.cwd(),
      clock: () => new Date("2026-10-01T12:00:00Z"),
      jobs,
    },
    selection: selectTools(allOps(), {}),
    log: () => {},
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "dvergr-test", version: "1.0.0" });
  await client.connect(b);
  try {
    await f(client, jobs);
  } finally {
    await jobs.close();
    await client.close();
    await server.close();
    await home.close();
    await Deno.remove(home.dir, { recursive: true });
  }
}

async function protocolError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof McpError) return e;
    throw e;
  }
  assert.fail("expected a JSON-RPC error");
}

Deno.test("createMcpServer() answers a malformed tools/call with -32602 (invalid params), not an internal error", async () => {
  await withClient(async (client) => {
    for (
      const [label, params] of [
        ["arguments null", { name: "room_list", arguments: null }],
        ["arguments an array", { name: "room_list", arguments: [1] }],
        ["name missing", { arguments: {} }],
        ["name a number", { name: 7 }],
      ] as const
    ) {
      const e = await protocolError(
        client.request(
          // deno-lint-ignore no-explicit-any
          { method: "tools/call", params: params as any },
          CallToolResultSchema,
        ),
      );
      assert.equal(e.code, -32602, `${label}: ${e.message}`);
      assert.match(e.message, /Invalid tools\/call request/, label);
    }
    // The connection goes on; arguments left out are an empty map.
    const ok = await client.request(
      { method: "tools/call", params: { name: "room_list" } },
      CallToolResultSchema,
    );
    assert.deepEqual(ok.structuredContent, { rooms: [] });
  });
});

Deno.test("createMcpServer() answers other calls while a job_status waits for its job", async () => {
  await withClient(async (client, jobs) => {
    const release = Promise.withResolvers<void>();
    const { job } = await jobs.start("test", null, async () => {
      await release.promise;
      return { done: true };
    });
    const t0 = performance.now();
    const waiting = client.callTool({ name: "job_status", arguments: { job, wait_ms: 3000 } });
    const others = await Promise.all([
      client.callTool({ name: "room_list", arguments: {} }),
      client.callTool({ name: "job_list", arguments: {} }),
      client.listTools(),
    ]);
    const othersMs = performance.now() - t0;
    assert.ok(othersMs < 1500, `the other calls took ${Math.round(othersMs)} ms`);
    assert.deepEqual(others[0].structuredContent, { rooms: [] });
    release.resolve();
    const status = (await waiting).structuredContent as { status: string };
    assert.equal(status.status, "succeeded", "the wait answers when the job ends");
    assert.ok(performance.now() - t0 < 2900, "before wait_ms ran out");
  });
});
