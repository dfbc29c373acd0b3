/** An MCP server of a selection on a fresh home, with the SDK's client over an in-memory link. */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { openHome } from "../../adapters/store/kv/home.ts";
import { type Home } from "../../core/ports/home.ts";
import { allOps } from "../../core/ops/registry.ts";
import { createMcpServer } from "../../mcp/server.ts";
import { type SelectionRequest, selectTools } from "../../mcp/selection.ts";
import type { JsEvalRunner } from "../../mcp/code_profile.ts";
import { createJobRunner } from "../../adapters/jobs/job_runner.ts";
import type { DurableJobRunner } from "../../core/jobs.ts";
import { NO_RUNNER } from "../helpers/op_context.ts";
import { composeServices } from "../../adapters/compose.ts";

/** For ops that never run a checker: says so if one is asked. */

/**
 * Runs `f` with a connected client (and a job runner with `jobs`); removes the home
 * afterwards.
 */
export async function withMemoryClient(
  req: SelectionRequest,
  f: (client: Client, home: Home, jobs: DurableJobRunner | undefined) => Promise<void>,
  opts: { jobs?: boolean; clock?: () => Date; jsEval?: JsEvalRunner } = {},
): Promise<void> {
  const home = await openHome(await Deno.makeTempDir({ prefix: "dvergr-mcp-mem-" }));
  const jobs = opts.jobs ? createJobRunner(home.state) : undefined;
  const server = createMcpServer({
    context: {
      home,
      services: composeServices(),
      runner: NO_RUNNER,
      env: () => undefined,
      cwd: Deno.cwd(),
      clock: opts.clock ?? (() => new Date()),
      ...(jobs ? { jobs } : {}),
    },
    selection: selectTools(allOps(), req, { jsEval: opts.jsEval }),
    log: () => {},
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "dvergr-test", version: "1.0.0" });
  await client.connect(b);
  try {
    await f(client, home, jobs);
  } finally {
    await jobs?.close();
    await client.close();
    await server.close();
    await home.close();
    await Deno.remove(home.dir, { recursive: true });
  }
}
