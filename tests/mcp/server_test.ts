import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { DurableJobRunner } from "../../core/jobs.ts";
import { withMemoryClient } from "./memory_client.ts";

/** A server of the bench profile on a fresh home, with the SDK's client in memory. */
function withClient(
  f: (client: Client, jobs: DurableJobRunner) => Promise<void>,
): Promise<void> {
  return withMemoryClient({}, (client, _home, jobs) => f(client, jobs!), {
    jobs: true,
    clock: () => new Date("2026-10-01T12:00:00Z"),
  });
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
    assert.deepEqual(ok.structuredContent, { format: "dvergr-room-list/1", rooms: [] });
  });
});

Deno.test("createMcpServer() answers other calls while a job_status waits for its job", async () => {
  await withClient(async (client, jobs) => {
    const release = Promise.withResolvers<void>();
    const { job } = await jobs.start("test", null, async () => {
      await release.promise;
      return { done: true };
    });
    // The client compiles a validator of every tool's outputSchema when it lists the tools:
    // done before the clock starts, which times the server's answers alone.
    await client.listTools();
    const t0 = performance.now();
    const waiting = client.callTool({ name: "job_status", arguments: { job, wait_ms: 3000 } });
    const others = await Promise.all([
      client.callTool({ name: "room_list", arguments: {} }),
      client.callTool({ name: "job_list", arguments: {} }),
      client.listPrompts(),
    ]);
    const othersMs = performance.now() - t0;
    assert.ok(othersMs < 1500, `the other calls took ${Math.round(othersMs)} ms`);
    assert.deepEqual(others[0].structuredContent, { format: "dvergr-room-list/1", rooms: [] });
    release.resolve();
    const status = (await waiting).structuredContent as { status: string };
    assert.equal(status.status, "succeeded", "the wait answers when the job ends");
    assert.ok(performance.now() - t0 < 2900, "before wait_ms ran out");
  });
});
