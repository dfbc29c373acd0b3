import { composeServices } from "../adapters/compose.ts";
import { basename, delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCommandArgs, rangeFlag } from "./args.ts";
import type { CliContext } from "./context.ts";
import { DEMO_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { candidateLines } from "./benchmark.ts";
import { keptReportPath, reportOptions, writeReports } from "./report_files.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import { readBundleDir } from "../adapters/files/bundle_dir.ts";
import { openHome, resolveHomeDir } from "../adapters/store/kv/home.ts";
import { type CommandSpec, detectBwrap } from "../adapters/candidates/command/command.ts";
import { benchmarkBundle } from "../core/engine/benchmark.ts";
import { createProgress } from "./progress.ts";
import { onStopSignal } from "./signals.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";

export const HELP = `dvergr demo [--repetitions N] [--home DIR] [--json]

Benchmarks two small example agents of ours (examples/agents: a naive and a careful
rule-based invoice reader, both Deno scripts run as command candidates) on the example
dataset bundle examples/workflows/invoice-fields (5 invoices), offline and without any
API key, and prints the scorecard and where the report is. Running it again resumes
(every cell is kept). It is the same as:

  dvergr benchmark examples/workflows/invoice-fields --repetitions 3 \\
    --candidate naive --candidate careful     (with the two agents in candidates.edn)

Options:
  --repetitions N   attempts per agent per invoice (default 3)
  --home DIR        the home (default: $DVERGR_HOME, else workflow-runs/invoice-fields)
  --json            print the scorecard as JSON
  -h, --help        show this help

Example:
  dvergr demo --repetitions 1

Exit status: 0 every cell has a verdict; 1 some cells did not finish (run it again to
resume them); 2 bad input; 130 stopped by Ctrl-C (what finished is kept).
`;

export const OPTIONS = {
  repetitions: { type: "string" },
  home: { type: "string" },
  json: { type: "boolean" },
} as const;

const EXAMPLES = fileURLToPath(new URL("../examples/", import.meta.url));
export const DEMO_BUNDLE = join(EXAMPLES, "workflows", "invoice-fields");
export const DEMO_AGENTS = join(EXAMPLES, "agents");

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The deno executable that runs the agents: this one, or the first on PATH. */
function findDeno(env: (k: string) => string | undefined): string {
  const self = Deno.execPath();
  if (basename(self).startsWith("deno")) return self;
  for (const dir of (env("PATH") ?? "").split(delimiter)) {
    const candidate = join(dir, "deno");
    try {
      if (Deno.statSync(candidate).isFile) return Deno.realPathSync(candidate);
    } catch {
      // Not in this directory.
    }
  }
  throw new DvergrError("NOT_FOUND", "Cannot run the demo agents: no deno executable found", {
    hint: "The example agents are Deno scripts: install Deno (https://deno.land) and retry",
  });
}

/** The demo's two agents as command candidates (the agents directory mounted read-only). */
export function demoAgents(deno: string): Map<string, CommandSpec> {
  const agents = new Map<string, CommandSpec>();
  for (const name of ["naive", "careful"]) {
    agents.set(name, {
      name,
      command: `${shellQuote(deno)} run --no-config --no-lock --quiet --no-prompt ` +
        // careful works through the world's MCP server on a loopback port of its sandbox.
        `--allow-read=. --allow-write=. --allow-env=DVERGR_TASK,DVERGR_MCP_URL ${
          name === "careful" ? "--allow-net=127.0.0.1 " : ""
        }${shellQuote(join(DEMO_AGENTS, `${name}.ts`))}`,
      mounts: [DEMO_AGENTS, dirname(deno)],
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    });
  }
  return agents;
}

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("demo", args, OPTIONS);
  if (positionals.length > 0) {
    throw usageError(`"dvergr demo" takes no arguments, got ${positionals.join(" ")}`);
  }
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values } = opts;
  const repetitions = rangeFlag("demo", "repetitions", values.repetitions, "repetitions") ?? 3;
  const out = (s: string) => ctx.stdout(s + "\n");
  const bundle = await readBundleDir(DEMO_BUNDLE);
  const home = await openHome(
    resolveHomeDir({ flag: values.home, env: ctx.env, cwd: ctx.cwd, bundleName: bundle.name }),
  );
  const pool = createCheckerPool({ workers: 2 });
  const progress = createProgress({ write: ctx.raw.stderr, isTerminal: ctx.stderrIsTerminal });
  const stop = onStopSignal();
  if (!values.json) {
    out("dvergr demo: two example agents read five invoices; the checker grades each answer.");
  }
  try {
    const outcome = await benchmarkBundle({
      services: composeServices(),
      bundle,
      specs: [
        { kind: "named", name: "naive", explicit: true },
        { kind: "named", name: "careful", explicit: true },
      ],
      named: demoAgents(findDeno(ctx.env)),
      // The demo's agents are ours: without bubblewrap they may run unisolated.
      isolation: (await detectBwrap(ctx.env)) ? "bwrap" : "none",
      home,
      runner: pool,
      env: ctx.env,
      repetitions,
      parallel: 4,
      onEvent: progress.onEvent,
      onPlan: ({ bundle }) => {
        if (!values.json) out(`Bundle ${bundle.name} ${bundle.id}`);
      },
      signal: stop.signal,
    });
    const reports = await writeReports(
      { scorecard: outcome.scorecard, options: reportOptions(outcome) },
      keptReportPath(home.dir, outcome.plan.id),
    );
    const reportPath = reports.markdown;
    if (values.json) {
      printJson(ctx, DEMO_FORMAT, {
        experiment: outcome.plan.id,
        report: reportPath,
        scorecard: outcome.scorecard,
      });
    } else {
      if (outcome.scorecard.complete) candidateLines(outcome.scorecard).forEach(out);
      else {out(
          `${outcome.result.total - outcome.result.graded} cells did not finish; run it again`,
        );}
      const isolation = outcome.isolation === "bwrap"
        ? "sandboxed with bubblewrap (the world's /docs and /out, and its MCP tools; no network)"
        : "NOT isolated (bubblewrap is not available): they ran in their world directories";
      out(`The agents ran ${isolation}.`);
      out(`Report: ${reportPath}`);
      out(`HTML report: ${reports.html}`);
      out(`Next: dvergr benchmark ${DEMO_BUNDLE} --candidate 'mine=cmd:YOUR AGENT COMMAND'`);
      out("A bundle of your own to start from: dvergr init my-workflow");
    }
    return outcome.scorecard.complete ? 0 : stop.exitStatus() ?? 1;
  } finally {
    stop.dispose();
    progress.stop();
    pool.close();
    await home.close();
  }
}
