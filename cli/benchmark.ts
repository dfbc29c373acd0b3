import { resolve } from "node:path";
import { checkOutputFile } from "../adapters/files/output_file.ts";
import { limitsFrom } from "../adapters/candidates/command/limits.ts";
import { rangeFlag } from "./args.ts";
import { parseBundleCommand, readBundleArg } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { onStopSignal } from "./signals.ts";
import { printJson } from "./render.ts";
import { keptReportPath, reportOptions, writeReports } from "./report_files.ts";
import { currentRecords } from "../core/engine/score_experiment.ts";
import type { AttemptRecord } from "../core/bench/records.ts";
import { writeFileAtomic as writeAtomic } from "./write_atomic.ts";
import { benchmarkJunit } from "../core/bench/junit.ts";
import type { Diagnosis } from "../core/bench/diagnosis.ts";
import { brokenLine, outcomeCountsText } from "../core/bench/outcome.ts";
import { itemSummaryLine } from "../core/bench/item_analysis.ts";
import { usageError } from "../core/errors.ts";
import { parseBundle } from "../core/bundle/parse.ts";
import type { Bundle } from "../core/bundle/types.ts";
import { calibrate } from "../core/calibrate/calibrate.ts";
import { paramRuleHelp, readParamFlags } from "../core/bundle/params.ts";
import { writeEdn } from "../core/edn/write.ts";
import type { CandidateKinds, CandidateSpec } from "../core/ports/candidate_kind.ts";
import { composeServices } from "../adapters/compose.ts";
import { benchmarkBundle, type BenchmarkOutcome } from "../core/engine/benchmark.ts";
import { createProgress } from "./progress.ts";
import { formatFixed } from "../core/bench/report.ts";
import type { WebStats } from "../core/bench/web_stats.ts";
import type { Scorecard } from "../core/bench/scorecard.ts";
import { stopText } from "../core/bench/sequential.ts";
import { openHome, resolveHomeDir } from "../adapters/store/kv/home.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";

export const HELP = `dvergr benchmark <bundle> [options]

The bundle is a directory, or ROOM/NAME: workflows/NAME/ of room ROOM in the home
(--home, else $DVERGR_HOME, else .dvergr), which then runs in that room.

Benchmarks candidates on a bundle: every candidate × case × repetition is one cell,
run in a fresh world and graded by the bundle's checker. Running the same command again
resumes: cells with a verdict are kept, cells that faulted run again.

Candidates (at least one):
  --candidate SPEC      repeatable; never split on commas:
                          builtin:reference   writes the calibration reference
                          builtin:noop        writes nothing
                          NAME=cmd:COMMAND    a shell command line run in the world
                          NAME=agent:CLI:MODEL  Claude Code (CLI claude-code) or Codex
                                              (codex) with MODEL, in the world's MCP tools
                          cmd:NAME, NAME      a command or agent of <home>/candidates.edn
                          MODEL               a model id or alias
  --models M1,M2        model ids or aliases, comma-separated

Options:
  --repetitions N       attempts per candidate per case (default 1)
  --cases N             the first N cases of the fixed shuffle (seed 20261001)
  --case-ids A,B        exactly these cases
  --parallel N          cells at once (default 4)
  --timeout-ms MS       per attempt (default: the bundle's :timeout-ms, else 600000)
  --budget-dollars USD  per attempt (default 0.50)
  --param K=V           a task/checker parameter (repeatable):
                        ${paramRuleHelp(24)}
  --baseline NAME       the candidate the others are compared against
  --stop-when-decided   with --baseline: stop comparing a candidate once an anytime-valid
                        confidence sequence of its paired reward difference to the baseline
                        excludes 0 (decided) or lies inside ±delta (equivalent); its cells
                        still to run are skipped as not needed
  --delta D             the equivalence margin (default 0.02; 0 never stops as equivalent)
  --alpha A             the error level of the sequences (default 0.05)
  --mount DIR           a read-only directory for command candidates (repeatable)
  --memory-mib N        memory of a command candidate's processes (default 4096)
  --world-mib N         bytes it may write under each writable world directory and
                        /tmp (default 1024)
  --max-processes N     its processes and threads at once (default 512)
  --open-files N        open files per process (default 1024)
  --home DIR            the home (default: $DVERGR_HOME, else workflow-runs/<bundle>;
                        for ROOM/NAME, else .dvergr)
  --report FILE         where to write the Markdown report, with an HTML page beside it
                        (default <home>/reports/<experiment>/report.md: one per
                        experiment; \`dvergr report\` writes any of them again)
  --junit FILE          also write JUnit XML for CI: one test case per cell (a failed,
                        crashed or timed-out attempt is a failure, a fault an error)
  --check               only calibrate the bundle (prints {:ok? … :problems […]})
  --json                print the scorecard as JSON
  -h, --help            show this help

Command candidates get the task on stdin and in DVERGR_TASK, the case in DVERGR_CASE,
and run with the world as their working directory. With bubblewrap installed they run
sandboxed (the world's directories at /docs, /out, …; no network but the world gateway:
the world's MCP tools at DVERGR_MCP_URL and metered model APIs at ANTHROPIC_BASE_URL and
OPENAI_BASE_URL). Without bubblewrap (or where it cannot build its sandbox) a benchmark
with command candidates stops before any cell with exit 2, unless DVERGR_ISOLATION=none
says to run them unisolated: then they run in their world directory with the user's
files and network, and the report says they were not isolated. Built-in and model
candidates need no bubblewrap.

Example: stop as soon as each candidate is known better, worse or the same as the baseline
  dvergr benchmark examples/workflows/invoice-fields --repetitions 10 \
    --candidate builtin:reference --candidate builtin:noop \
    --baseline builtin:noop --stop-when-decided

Exit status: 0 every cell has a verdict (or is not needed: its comparison stopped); 1 some
cells did not finish (run the same command again to resume); 2 bad input; 130 stopped by
Ctrl-C (SIGINT; 143 by SIGTERM): the cells in flight are stopped, those finished are kept
and the report written, and the same command resumes.
`;

export const OPTIONS = {
  candidate: { type: "string", multiple: true },
  models: { type: "string", multiple: true },
  repetitions: { type: "string" },
  cases: { type: "string" },
  "case-ids": { type: "string" },
  parallel: { type: "string" },
  "timeout-ms": { type: "string" },
  "budget-dollars": { type: "string" },
  param: { type: "string", multiple: true },
  baseline: { type: "string" },
  "stop-when-decided": { type: "boolean" },
  delta: { type: "string" },
  alpha: { type: "string" },
  mount: { type: "string", multiple: true },
  "memory-mib": { type: "string" },
  "world-mib": { type: "string" },
  "max-processes": { type: "string" },
  "open-files": { type: "string" },
  home: { type: "string" },
  report: { type: "string" },
  junit: { type: "string" },
  check: { type: "boolean" },
  json: { type: "boolean" },
} as const;

function dollarsFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = rangeFlag("benchmark", "budget-dollars", value, "budgetDollars")!;
  return Math.round(n * 1_000_000);
}

function caseIdsFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const ids = value.split(",").map((s) => s.trim());
  if (ids.some((s) => s === "")) {
    throw usageError(
      `Cannot use --case-ids "${value}": it has an empty id`,
      "Write --case-ids a,b",
    );
  }
  return ids;
}

/**
 * One summary line per candidate, as room-run prints them (REFERENCE §7.3), followed by its
 * outcomes when some attempt crashed, timed out, hit the budget or faulted ("2 passed, 1 crashed").
 */
/** A candidate's web in a few words: searches, pages, refusals, judge calls. */
function webLineText(w: WebStats): string {
  const denied = Object.values(w.denials).reduce((a, b) => a + b, 0);
  return [
    w.attempts > 0 ? `web: ${w.searches} searches, ${w.pages} pages` : null,
    denied > 0 ? `${denied} refused` : null,
    w.judge ? `judge: ${w.judge.calls} calls` : null,
  ].filter((x) => x !== null).join(", ");
}

export function candidateLines(scorecard: Scorecard): string[] {
  return scorecard.candidates.map((c) => {
    const o = c.outcomes;
    // "passed k/n" already says passed and failed; other outcomes need words.
    const mixed = o !== undefined && o.passed + o.failed < Object.values(o).reduce((a, b) => a + b);
    return `${c.candidate.padEnd(40)} reward ${
      formatFixed(c.meanReward ?? 0, 3)
    }  passed ${c.passes}/${c.attempts}  ${
      (c.cost.unpricedAttempts ?? 0) > 0
        ? "cost unknown (no prices in the model registry)"
        : `billed $${formatFixed(c.cost.billedMicros / 1e6, 4)}  list price $${
          formatFixed(c.cost.listMicros / 1e6, 4)
        }`
    }` +
      (c.unfinished > 0 ? `  unfinished ${c.unfinished} of ${c.plannedCells}` : "") +
      ((c.notNeeded ?? 0) > 0 ? `  not needed ${c.notNeeded} of ${c.plannedCells}` : "") +
      (mixed ? `  (${outcomeCountsText(o)})` : "") +
      (c.web ? `  ${webLineText(c.web)}` : "");
  });
}

/** The diagnosis as `--json` carries it: causes per candidate, per-case results, items. */
export function diagnosisJson(d: Diagnosis): Record<string, unknown> {
  return {
    cases: d.cases,
    failureCauses: Object.fromEntries(d.candidates.map((c) => [c.candidate, c.causes])),
    broken: d.broken,
    caseResults: d.caseResults,
    items: d.items,
  };
}

/** `--stop-when-decided`, `--delta`, `--alpha` as the benchmark request takes them. */
function stoppingFlags(values: {
  "stop-when-decided"?: boolean;
  delta?: string;
  alpha?: string;
}): { stopWhenDecided?: { alpha?: number; delta?: number } } {
  const delta = rangeFlag("benchmark", "delta", values.delta, "delta");
  const alpha = rangeFlag("benchmark", "alpha", values.alpha, "alpha");
  if (!values["stop-when-decided"]) {
    if (delta !== undefined || alpha !== undefined) {
      throw usageError(
        "Cannot use --delta or --alpha without --stop-when-decided",
        "Add --stop-when-decided --baseline NAME",
      );
    }
    return {};
  }
  return { stopWhenDecided: { alpha, delta } };
}

/** The candidates whose cells without a verdict are not needed (sequential stopping). */
export function notNeededCandidates(scorecard: Scorecard): Set<string> {
  return new Set(
    scorecard.candidates.filter((c) => (c.notNeeded ?? 0) > 0).map((c) => c.candidate),
  );
}

/** One line per comparison of a run with sequential stopping, and the cells it skipped. */
export function stoppingLines(scorecard: Scorecard): string[] {
  const s = scorecard.sequential;
  if (!s) return [];
  return [
    ...s.comparisons.map((c) => (c.status === "open" ? "" : "stopped: ") + stopText(c)),
    `${s.notNeeded} of ${scorecard.expectedCells} cells not needed (alpha ${s.alpha}, delta ${s.delta})`,
  ];
}

/** What --cases N does when the bundle has fewer cases than N, or none; null otherwise. */
export function casesNote(bundle: Bundle, cases: number | undefined): string | null {
  if (cases === undefined) return null;
  const n = bundle.cases.length;
  if (n === 0) {
    return `--cases ${cases} has no effect: bundle ${bundle.name} has no cases (one environment)`;
  }
  if (cases <= n) return null;
  return `--cases ${cases} asks for more cases than bundle ${bundle.name} has: ` +
    `it has ${n}, so all ${n} run`;
}

/** The benchmark's ending for people: one line per candidate, what went wrong, the reports. */
function printOutcome(
  out: (line: string) => void,
  outcome: BenchmarkOutcome,
  reports: { markdown: string; html: string },
): void {
  const { result, scorecard, diagnosis } = outcome;
  if (scorecard.complete) candidateLines(scorecard).forEach(out);
  for (const line of stoppingLines(scorecard)) out(line);
  for (const b of diagnosis.broken) out(brokenLine(b));
  const items = itemSummaryLine(diagnosis.items);
  if (items) out(items);
  if (!scorecard.complete) {
    const unfinished = result.total - result.graded - result.notNeeded;
    const faulted = result.faults > 0 ? ` (${result.faults} faulted)` : "";
    out(
      `${unfinished} of ${result.total} cells did not finish${faulted}; run the same command again to resume them`,
    );
  }
  out(`Report: ${reports.markdown}`);
  out(`HTML report: ${reports.html}`);
}

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  return parseBundleCommand(
    "benchmark",
    args,
    OPTIONS,
    "Quote a command candidate: --candidate 'me=cmd:./agent.sh --fast'",
  );
}

/** The candidates `--candidate` and `--models` name, read by the candidate kinds. */
function candidateSpecsOf(
  values: { candidate?: string[]; models?: string[] },
  kinds: CandidateKinds,
): CandidateSpec[] {
  return [
    ...(values.candidate ?? []).map((c) => kinds.parse(c)),
    ...(values.models ?? []).flatMap((m) => kinds.parseModels(m)),
  ];
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const fileBundle = await readBundleArg("benchmark", positionals[0], { home: values.home, ctx });
  const out = (s: string) => ctx.stdout(s + "\n");

  if (values.check) {
    const bundle = parseBundle(fileBundle);
    const pool = createCheckerPool({ workers: 1 });
    try {
      const result = await calibrate(bundle, pool);
      if (values.json) printJson(ctx, { name: bundle.name, ...result });
      else {
        out(`Bundle ${bundle.name} ${bundle.id}`);
        out(writeEdn({ "ok?": result.ok, problems: result.problems }));
      }
    } finally {
      pool.close();
    }
    return 0;
  }

  const services = composeServices();
  const specs = candidateSpecsOf(values, services.candidates);
  if (specs.length === 0) {
    throw usageError(
      "Cannot benchmark without candidates",
      "Add --candidate builtin:reference, --candidate 'me=cmd:COMMAND' or --models m1,m2",
    );
  }
  const params = readParamFlags(values.param ?? [], "benchmark");
  const { source } = fileBundle;
  const homeDir = source.kind === "room" ? source.home : resolveHomeDir({
    flag: values.home,
    env: ctx.env,
    cwd: ctx.cwd,
    bundleName: fileBundle.name,
  });
  // Output files are checked now: a bad one must not surface after every cell has run.
  if (values.report !== undefined) {
    await checkOutputFile(resolve(ctx.cwd, values.report), "--report");
  }
  if (values.junit !== undefined) await checkOutputFile(resolve(ctx.cwd, values.junit), "--junit");
  const request = {
    repetitions: rangeFlag("benchmark", "repetitions", values.repetitions, "repetitions"),
    cases: rangeFlag("benchmark", "cases", values.cases, "cases"),
    caseIds: caseIdsFlag(values["case-ids"]),
    parallel: rangeFlag("benchmark", "parallel", values.parallel, "parallel") ?? 4,
    timeoutMs: rangeFlag("benchmark", "timeout-ms", values["timeout-ms"], "timeoutMs"),
    budgetMicros: dollarsFlag(values["budget-dollars"]),
    params,
    baseline: values.baseline,
    ...stoppingFlags(values),
    mounts: (values.mount ?? []).map((m) => resolve(ctx.cwd, m)),
    limits: limitsFrom({
      memoryMiB: rangeFlag("benchmark", "memory-mib", values["memory-mib"], "memoryMiB"),
      worldMiB: rangeFlag("benchmark", "world-mib", values["world-mib"], "worldMiB"),
      processes: rangeFlag("benchmark", "max-processes", values["max-processes"], "processes"),
      openFiles: rangeFlag("benchmark", "open-files", values["open-files"], "openFiles"),
    }),
  };

  const home = await openHome(homeDir);
  const pool = createCheckerPool({ workers: 2 });
  // A checker worker starts now, while the bundle is installed and the experiment planned,
  // instead of under the first cells. checker.js wins when a bundle has both.
  if (fileBundle.files.has("checker.js")) pool.warm("checker.js");
  else if (fileBundle.files.has("checker.clj")) pool.warm("checker.clj");
  const stop = onStopSignal();
  const progress = createProgress({ write: ctx.raw.stderr, isTerminal: ctx.stderrIsTerminal });
  let outcome: BenchmarkOutcome;
  /** The cells' latest records, read only for --junit (the rest is folded from a stream). */
  let junitRecords: AttemptRecord[] = [];
  try {
    outcome = await benchmarkBundle({
      ...request,
      services,
      bundle: fileBundle,
      specs,
      home,
      room: source.kind === "room" ? source.room : undefined,
      runner: pool,
      env: ctx.env,
      onEvent: progress.onEvent,
      onPlan: ({ bundle }) => {
        if (!values.json) out(`Bundle ${bundle.name} ${bundle.id}`);
        const note = casesNote(bundle, request.cases);
        if (note) ctx.stderr(`note: ${note}\n`);
      },
      signal: stop.signal,
    });
    if (values.junit !== undefined) {
      const { plan } = outcome;
      junitRecords = await Array.fromAsync(
        currentRecords(home.state.streamCellRecords(plan.id), plan),
      );
    }
  } finally {
    progress.stop();
    stop.dispose();
    pool.close();
    await home.close();
  }

  const reportPath = values.report
    ? resolve(ctx.cwd, values.report)
    : keptReportPath(home.dir, outcome.plan.id);
  const { diagnosis } = outcome;
  const reports = await writeReports(
    { scorecard: outcome.scorecard, options: reportOptions(outcome) },
    reportPath,
  );
  if (values.junit !== undefined) {
    await writeAtomic(
      resolve(ctx.cwd, values.junit),
      benchmarkJunit(
        outcome.bundle.name,
        [...outcome.plan.cells],
        junitRecords,
        notNeededCandidates(outcome.scorecard),
      ),
    );
  }
  const { scorecard } = outcome;
  if (values.json) {
    printJson(ctx, {
      bundle: { name: outcome.bundle.name, id: outcome.bundle.id },
      experiment: outcome.plan.id,
      home: home.dir,
      room: outcome.room,
      report: reports.markdown,
      reportHtml: reports.html,
      complete: scorecard.complete,
      scorecard,
      ...diagnosisJson(diagnosis),
    });
  } else printOutcome(out, outcome, reports);
  if (scorecard.complete) return 0;
  // Stopped by Ctrl-C (or SIGTERM): what finished is kept; the shell sees the signal.
  return stop.exitStatus() ?? 1;
}
