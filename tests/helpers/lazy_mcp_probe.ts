/**
 * A process of its own (module state is per process) that runs two attempt gateways on host
 * loopback ports: the first gets only a model request, the second an MCP `initialize`. Prints
 * one JSON line: whether the world MCP server's module was loaded after each, the model
 * request's status and the initialize's result. With the argument `expected`, it starts one
 * gateway for a candidate that always asks (mcpExpected) and prints whether the module was
 * loaded once it was ready, before any request.
 *
 * Run with: deno run --allow-read --allow-write --allow-env --allow-net tests/helpers/lazy_mcp_probe.ts
 */
import { startAttemptGateway, worldMcpLoaded } from "../../adapters/gateway/attempt_gateway.ts";

const options = {
  transport: "tcp" as const,
  toolset: { tools: [], run: () => Promise.resolve({ content: "", isError: true }) },
  model: {
    route: () => ({ problem: "this gateway forwards nothing" }),
    budgetMicros: 1_000_000,
    maxRequests: 10,
  },
};
const signal = new AbortController().signal;

if (Deno.args[0] === "expected") {
  const gateway = await startAttemptGateway({ signal }, { ...options, mcpExpected: true });
  const loaded = worldMcpLoaded();
  await gateway.finish();
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify({ loaded }) + "\n"));
  Deno.exit(0);
}

const first = await startAttemptGateway({ signal }, options);
const model = await fetch(`${first.env.DVERGR_MODEL_URL}/v1/messages`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: "x", max_tokens: 1, messages: [] }),
});
await model.body?.cancel();
const afterModel = worldMcpLoaded();
const firstEvidence = await first.finish();

const second = await startAttemptGateway({ signal }, options);
const beforeMcp = worldMcpLoaded();
const init = await fetch(second.env.DVERGR_MCP_URL, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
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
});
const text = await init.text();
const afterMcp = worldMcpLoaded();
const secondEvidence = await second.finish();
const seen = JSON.stringify({
  afterModel,
  modelStatus: model.status,
  firstToolLists: firstEvidence.mcpToolLists,
  beforeMcp,
  afterMcp,
  initStatus: init.status,
  initialized: /"serverInfo"/.test(text),
  secondCalls: secondEvidence.mcpCalls.length,
});
Deno.stdout.writeSync(new TextEncoder().encode(seen + "\n"));
