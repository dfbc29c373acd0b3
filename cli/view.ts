import { parseCommandArgs, rangeFlag } from "./args.ts";
import type { CliContext } from "./context.ts";
import { onStopSignal } from "./signals.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import { EXPERIMENT_HOME_HELP, experimentHomes, openExperimentHome } from "./experiment_homes.ts";
import { lazyRunner } from "./home_arg.ts";
import type { ViewHome } from "../view/server.ts";

/** The viewer's default port (the MCP server's HTTP port is the one before). */
export const DEFAULT_VIEW_PORT = 17890;

export const HELP = `dvergr view [--home DIR | --store URL] [--port N]

Serves a web viewer of the home's experiments on 127.0.0.1 until stopped (Ctrl-C): every
experiment, newest first (bundle, candidates, cells, status, when); an experiment's page
(scorecard, cost/reward frontier plot, paired comparisons, where answers fail, the case ×
candidate heat map, item analysis, and every cell), which follows a running experiment as
its cells are graded; any cell's attempt in full (outcome and cause, checks, its files
against the fixtures, the model transcript and tool calls, gateway calls, stderr, fetched
pages, the judge's questions and answers); and two experiments side by side. Nothing is
loaded from outside: no CDN, no other site.

It prints the URL to open, which holds a token made for this start: requests without it
are refused (401), and so are requests from pages of other sites or by another host name
(403). It listens on the loopback interface only.

Options:
${EXPERIMENT_HOME_HELP}
  --port N    the port (default ${DEFAULT_VIEW_PORT}; 0 picks a free one)
  -h, --help  show this help

Example:
  dvergr view --home workflow-runs/invoice-fields --port 8080

Exit status: 0 stopped (SIGINT or SIGTERM); 2 bad input (no home with experiments, the
port in use).
`;

export const OPTIONS = {
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  port: { type: "string" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("view", args, OPTIONS);
  if (positionals.length > 0) {
    throw usageError(
      `"dvergr view" takes no arguments, got ${positionals.join(" ")}`,
      "Give the home with --home DIR",
    );
  }
  const port = rangeFlag("view", "port", values.port, "port") ?? DEFAULT_VIEW_PORT;
  return { values, port };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const found = await experimentHomes(opts.values, ctx);
  if (found.length === 0) {
    throw new DvergrError("USAGE", `No home with experiments in ${ctx.cwd}`, {
      hint: "Give the home with --home DIR (the benchmark prints it), or benchmark a bundle first",
    });
  }
  const stop = onStopSignal();
  const homes: ViewHome[] = [];
  // Generated worlds are made again in the checker's sandbox, started only when one is viewed.
  const runner = lazyRunner();
  try {
    for (const h of found) homes.push({ label: h.label, home: await openExperimentHome(h) });
    const { serveView } = await import("../view/server.ts");
    const { newToken } = await import("../mcp/token.ts");
    const server = serveView({
      homes,
      runner,
      token: newToken(),
      port: opts.port,
      log: (line) => ctx.stderr(line + "\n"),
    });
    ctx.stdout(
      `Viewing ${homes.map((h) => h.label).join(", ")}\nOpen ${server.url}\n(Ctrl-C stops it)\n`,
    );
    await Promise.race([stop.done, server.finished]);
    await server.close();
    return 0;
  } finally {
    stop.dispose();
    runner.close();
    for (const h of homes) await h.home.close();
  }
}
