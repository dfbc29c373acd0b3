/**
 * A process of its own that serves one attempt's world gateway on Unix sockets, so a test
 * can watch this process's memory alone (test modules share one process). Prints one JSON
 * line `{"dir": …, "base": …}` (the sockets' directory, and the path every request starts
 * with: the attempt's secret), then serves until stdin ends.
 *
 * Run with: deno run --allow-read --allow-write --allow-env --allow-net tests/helpers/gateway_host.ts
 */
import { startAttemptGateway } from "../../adapters/gateway/attempt_gateway.ts";

const gateway = await startAttemptGateway({ signal: new AbortController().signal }, {
  transport: "unix",
  toolset: { tools: [], run: () => Promise.resolve({ content: "", isError: true }) },
  model: {
    route: () => ({ problem: "this gateway forwards nothing" }),
    budgetMicros: 1_000_000,
    maxRequests: 10,
  },
});
const base = new URL(gateway.env.DVERGR_MODEL_URL).pathname;
Deno.stdout.writeSync(
  new TextEncoder().encode(JSON.stringify({ dir: gateway.dir, base }) + "\n"),
);
for await (const _ of Deno.stdin.readable) {
  // Serving until stdin ends.
}
await gateway.finish();
