import { resolve } from "node:path";
import { intFlag, parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { usageError } from "../core/errors.ts";
import { openHome } from "../core/io/home.ts";
import { allOps } from "../core/ops/registry.ts";
import { createJobRunner } from "../core/ops/jobs.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import { VERSION } from "../core/version.ts";
import { selectTools } from "../mcp/selection.ts";

export const HELP = `dvergr serve --mcp [--http [--port N]] [--home DIR]
             [--profile P | --toolsets a,b | --tools a,b [--room R]]

Serves dvergr's operations as MCP tools to a coding client (Claude Code, Codex, Cursor):
over stdio by default (stdout is the protocol; logs go to stderr), or over Streamable
HTTP at http://127.0.0.1:PORT/mcp with --http. HTTP requests need
"Authorization: Bearer <token>", the token being in <home>/mcp/http-token (mode 0600,
created on the first start); requests from a non-loopback Origin are refused.

Selection (the tools a connection sees):
  --profile P        bench (default): rooms, files, catalog, bench, jobs, scorecards;
                     readonly: every read op; admin: everything (catalog_promote too)
  --toolsets a,b     exactly these toolsets
  --tools a,b        exactly these tools
  --room R           with --tools: pin the connection to room R (the tools lose their
                     room parameter; a call naming another room is refused)

Options:
  --mcp              serve MCP (required)
  --http             serve Streamable HTTP on 127.0.0.1 instead of stdio
  --port N           the HTTP port (default 17889; 0 picks a free one)
  --home DIR         the home (default: $DVERGR_HOME, else .dvergr in the working directory)
  -h, --help         show this help

Environment: DVERGR_HOME, DVERGR_MCP_PROFILE, DVERGR_MCP_TOOLSETS, DVERGR_MCP_PORT.

Long work is a job: catalog_benchmark returns one at once; job_status {job, wait_ms}
answers when it ends or after at most 25 s. Jobs are durable: after a restart a job
reads as it ended, or failed with reason "orphaned" when its server stopped mid-run.
`;

export const OPTIONS = {
  mcp: { type: "boolean" },
  http: { type: "boolean" },
  port: { type: "string" },
  home: { type: "string" },
  profile: { type: "string" },
  toolsets: { type: "string", multiple: true },
  tools: { type: "string", multiple: true },
  room: { type: "string" },
} as const;

/** Resolves when SIGINT or SIGTERM arrives (or `also` aborts). */
function untilSignal(also?: AbortSignal): { done: Promise<void>; dispose(): void } {
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  let fire = () => {};
  const done = new Promise<void>((r) => (fire = r));
  for (const s of signals) {
    try {
      Deno.addSignalListener(s, fire);
    } catch {
      // Signals are not available on this platform.
    }
  }
  also?.addEventListener("abort", fire, { once: true });
  return {
    done,
    dispose() {
      for (const s of signals) {
        try {
          Deno.removeSignalListener(s, fire);
        } catch {
          // Not available.
        }
      }
    },
  };
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs("serve", args, OPTIONS);
  if (positionals.length > 0) {
    throw usageError(
      `"dvergr serve" takes no arguments, got ${positionals.join(" ")}`,
      "Run `dvergr serve --help`",
    );
  }
  if (!values.mcp) {
    throw usageError(
      '"dvergr serve" needs --mcp',
      "Run `dvergr serve --mcp` (stdio) or add --http",
    );
  }
  if (values.port !== undefined && !values.http) {
    throw usageError("--port applies to --http only", "Add --http, or leave out --port");
  }
  const envList = (name: string) => {
    const v = ctx.env(name);
    return v ? [v] : undefined;
  };
  const selection = selectTools(allOps(), {
    profile: values.profile ??
      (values.toolsets || values.tools ? undefined : ctx.env("DVERGR_MCP_PROFILE") || undefined),
    toolsets: values.toolsets ??
      (values.profile || values.tools ? undefined : envList("DVERGR_MCP_TOOLSETS")),
    tools: values.tools,
    room: values.room,
  });
  const port = values.http
    ? intFlag("serve", "port", values.port ?? ctx.env("DVERGR_MCP_PORT"), { min: 0 }) ??
      17889
    : 0;
  if (port > 65535) throw usageError(`Cannot use --port ${port}: ports end at 65535`);
  const homeDir = resolve(ctx.cwd, values.home || ctx.env("DVERGR_HOME") || ".dvergr");
  const log = (line: string) => ctx.stderr(`dvergr-mcp: ${line}\n`);

  const home = await openHome(homeDir);
  const pool = createCheckerPool({ workers: 2 });
  const jobs = createJobRunner(home.state);
  const stop = untilSignal();
  try {
    const orphans = await jobs.recover();
    const context = {
      home,
      runner: pool,
      env: ctx.env,
      cwd: ctx.cwd,
      clock: () => new Date(),
      jobs,
    };
    // The SDK costs ~250 ms to load: only serve pays for it.
    const { createMcpServer } = await import("../mcp/server.ts");
    const makeServer = () => createMcpServer({ context, selection, log });
    log(
      `dvergr ${VERSION}, home ${home.dir}, ${selection.label} (${selection.ops.length} tools)` +
        (orphans ? `; ${orphans} job${orphans === 1 ? "" : "s"} of a stopped server orphaned` : ""),
    );
    if (values.http) {
      const { ensureHttpToken } = await import("../mcp/token.ts");
      const { serveHttp } = await import("../mcp/http.ts");
      const token = await ensureHttpToken(home.dir);
      const http = serveHttp({ port, token: token.token, makeServer, log });
      log(
        `listening on ${http.url} (bearer token in ${token.path}${token.created ? ", new" : ""})`,
      );
      await Promise.race([stop.done, http.finished]);
      await http.close();
    } else {
      const { serveStdio } = await import("../mcp/stdio.ts");
      const ended = new AbortController();
      stop.done.then(() => ended.abort());
      await serveStdio(makeServer(), ended.signal);
    }
    log("stopping");
    return 0;
  } finally {
    stop.dispose();
    await jobs.close();
    pool.close();
    await home.close();
  }
}
