import { resolve } from "node:path";
import { checkOutputFile } from "../adapters/files/output_file.ts";
import { type BundleArg, parseBundleCommand, readBundleArg } from "./bundle_arg.ts";
import { lazyRunner } from "./home_arg.ts";
import type { CliContext } from "./context.ts";
import { onStopSignal } from "./signals.ts";
import { printJson } from "./render.ts";
import { keptReportPath, reportOptions, writeReports } from "./report_files.ts";
import { currentRecords } from "../core/engine/score_experiment.ts";
import type { AttemptRecord } from "../core/bench/records.ts";
import { writeFileAtomic as writeAtomic } from "./write_atomic.ts";
import { brokenLine, outcomeCountsText } from "../core/bench/outcome.ts";
import { itemSummaryLine } from "../core/bench/item_analysis.ts";
import { parseBundleLazily } from "../core/bundle/parse_lazily.ts";
import type { Bundle } from "../core/bundle/types.ts";
import type { Services } from "../core/ports/services.ts";
import {
  benchmarkFlagsHelp,
  type BenchmarkInput,
  benchmarkOptions,
  type BenchmarkRequestFields,
  benchmarkRequestOf,
  candidateFormsHelp,
  readBenchmarkFlags,
} from "../core/ops/benchmark_request.ts";
import { composeServices } from "../adapters/compose.ts";
import { candidateKinds } from "../adapters/candidates/registry.ts";
import { benchmarkBundle, type BenchmarkOutcome } from "../core/engine/benchmark.ts";
import { createProgress } from "./progress.ts";
import { formatFixed } from "../core/bench/report.ts";
import type { WebStats } from "../core/bench/web_stats.ts";
import type { Scorecard } from "../core/bench/scorecard.ts";
import { stopText } from "../core/bench/sequential.ts";
import { resolveHomeDir } from "../adapters/store/kv/home.ts";
import { openHomeAt } from "../adapters/compose.ts";
import { storeUrl } from "../adapters/store/postgres/url.ts";
import { blobsTarget, type S3Target } from "../adapters/store/s3/target.ts";
import { usageError } from "../core/errors.ts";
import { createCheckerPool, keptLayouts } from "../sandbox/checker_pool.ts";
import { benchmarkPoolOptions, takeBenchmarkPool } from "./prestart.ts";
import { importLater } from "./import_later.ts";

export const HELP = `dvergr benchmark <bundle> [options]

The bundle is a directory, or ROOM/NAME: workflows/NAME/ of room ROOM in the home
(--home, else $DVERGR_HOME, else .dvergr), which then runs in that room.

Benchmarks candidates on a bundle: every candidate × case × repetition is one cell,
run in a fresh world and graded by the bundle's checker. Running the same command again
resumes: cells with a verdict are kept, cells that faulted run again.

Candidates (at least one):
${
  benchmarkFlagsHelp("candidates", {
    candidates: candidateFormsHelp(candidateKinds.describe()),
  })
}

Options:
${benchmarkFlagsHelp("options")}
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
  dvergr benchmark examples/workflows/invoice-fields --repetitions 10 \\
    --candidate builtin:reference --candidate builtin:noop \\
    --baseline builtin:noop --stop-when-decided

Example: a web bundle whose attempts may not read a review site either (besides the
bundle's own blocked sources; the home's web-policy.edn, when there is one, applies too)
  dvergr benchmark examples/workflows/tool-rivals --models haiku \\
    --block-sources toolreview.example

Example: hand the experiment to workers on other machines
  dvergr benchmark examples/workflows/invoice-fields --candidate builtin:reference \\
    --store postgres://dvergr@db.internal:5432/dvergr --enqueue

Exit status: 0 every cell has a verdict (with --enqueue: enqueued) (or is not needed: its comparison stopped); 1 some
cells did not finish (run the same command again to resume); 2 bad input; 130 stopped by
Ctrl-C (SIGINT; 143 by SIGTERM): the cells in flight are stopped, those finished are kept
and the report written, and the same command resumes.
`;

export const OPTIONS = benchmarkOptions();

/**
 * One summary line per candidate, as room-run prints them (docs/compatibility.md §7.3), followed by its
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

/**
 * What --cases N does when the bundle has fewer cases than N; null otherwise (a bundle
 * without cases refuses --cases before it is planned).
 */
export function casesNote(bundle: Bundle, cases: number | undefined): string | null {
  if (cases === undefined) return null;
  const n = bundle.cases.length;
  if (n === 0 || cases <= n) return null;
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

/**
 * Reads the command line: flags and arguments checked (numbers in range, lists split),
 * nothing touched.
 */
export function parse(args: string[]): { input: BenchmarkInput; positionals: string[] } {
  const { values, positionals } = parseBundleCommand(
    "benchmark",
    args,
    OPTIONS,
    "Quote a command candidate: --candidate 'me=cmd:./agent.sh --fast'",
  );
  return { input: readBenchmarkFlags(values), positionals };
}

// What only some runs need (--check, --json, --junit, --enqueue) is imported when they ask:
// the --json formats alone are ~50 modules of schemas that every run would load and build.

/** `--check`: calibrates the bundle only and prints the result. */
async function runCheck(ctx: CliContext, fileBundle: BundleArg, json: boolean): Promise<number> {
  const { calibrate } = await importLater<typeof import("../core/calibrate/calibrate.ts")>(
    "../core/calibrate/calibrate.ts",
    import.meta.url,
  );
  const { CALIBRATE_FORMAT } = await importLater<typeof import("../core/ops/check_formats.ts")>(
    "../core/ops/check_formats.ts",
    import.meta.url,
  );
  const { writeEdn } = await importLater<typeof import("../core/edn/write.ts")>(
    "../core/edn/write.ts",
    import.meta.url,
  );
  const bundle = await parseBundleLazily(fileBundle);
  const pool = createCheckerPool({ workers: 1 });
  try {
    const result = await calibrate(bundle, pool);
    if (json) printJson(ctx, CALIBRATE_FORMAT, { bundle: bundle.name, ...result });
    else {
      ctx.stdout(`Bundle ${bundle.name} ${bundle.id}\n`);
      ctx.stdout(writeEdn({ "ok?": result.ok, problems: result.problems }) + "\n");
    }
  } finally {
    pool.close();
  }
  return 0;
}

/** The experiment's home: the room's, else --home, $DVERGR_HOME or one by the bundle's name. */
function homeDirOf(ctx: CliContext, fileBundle: BundleArg, home: string | undefined): string {
  const { source } = fileBundle;
  return source.kind === "room" ? source.home : resolveHomeDir({
    flag: home,
    env: ctx.env,
    cwd: ctx.cwd,
    bundleName: fileBundle.name,
  });
}

/**
 * The benchmark run with progress on stderr and Ctrl-C stopping it. The home closes as it
 * returns: `closed` settles once it has (the reports are written meanwhile; they are files
 * of their own), and a run that throws has closed it before.
 */
async function runWithProgress(
  ctx: CliContext,
  opts: {
    input: BenchmarkInput;
    fileBundle: BundleArg;
    homeDir: string;
    store: string | null;
    blobs: S3Target | null;
  },
  services: Services,
  request: BenchmarkRequestFields,
) {
  const { input, fileBundle } = opts;
  const home = await openHomeAt(opts.homeDir, opts.store, opts.blobs);
  // Started before this command's modules loaded (cli/prestart.ts), else now: its first
  // worker loads while the bundle is installed and the experiment planned, instead of under
  // the first cells. checker.js wins when a bundle has both.
  const pool = takeBenchmarkPool() ?? createCheckerPool(benchmarkPoolOptions({ keptLayouts }));
  if (fileBundle.files.has("checker.js")) pool.warm("checker.js");
  else if (fileBundle.files.has("checker.clj")) pool.warm("checker.clj");
  const stop = onStopSignal();
  const progress = createProgress({ write: ctx.raw.stderr, isTerminal: ctx.stderrIsTerminal });
  let closed: Promise<void> | undefined;
  try {
    const { source } = fileBundle;
    const outcome = await benchmarkBundle({
      ...request,
      services,
      bundle: fileBundle,
      home,
      room: source.kind === "room" ? source.room : undefined,
      runner: pool,
      env: ctx.env,
      onEvent: progress.onEvent,
      onPlan: ({ bundle }) => {
        if (!input.json) ctx.stdout(`Bundle ${bundle.name} ${bundle.id}\n`);
        const note = casesNote(bundle, request.cases);
        if (note) ctx.stderr(`note: ${note}\n`);
      },
      signal: stop.signal,
    });
    // The cells' latest records, read only for --junit (the rest is folded from a stream).
    const junitRecords: AttemptRecord[] = input.junit === undefined ? [] : await Array.fromAsync(
      currentRecords(home.state.streamCellRecords(outcome.plan.id), outcome.plan),
    );
    const stopped = stop.exitStatus();
    closed = home.close();
    return { outcome, junitRecords, homeDir: home.dir, stopped, closed };
  } finally {
    progress.stop();
    stop.dispose();
    pool.close();
    if (closed === undefined) await home.close();
  }
}

/** The report files, JUnit when asked for, and the ending printed (or the JSON). */
async function finish(
  ctx: CliContext,
  input: BenchmarkInput,
  ran: Awaited<ReturnType<typeof runWithProgress>>,
): Promise<number> {
  const { outcome, homeDir } = ran;
  const reportPath = input.report
    ? resolve(ctx.cwd, input.report)
    : keptReportPath(homeDir, outcome.plan.id);
  const { diagnosis, scorecard } = outcome;
  const reports = await writeReports({ scorecard, options: reportOptions(outcome) }, reportPath);
  if (input.junit !== undefined) {
    const { benchmarkJunit } = await importLater<typeof import("../core/bench/junit.ts")>(
      "../core/bench/junit.ts",
      import.meta.url,
    );
    await writeAtomic(
      resolve(ctx.cwd, input.junit),
      benchmarkJunit(
        outcome.bundle.name,
        [...outcome.plan.cells],
        ran.junitRecords,
        notNeededCandidates(scorecard),
      ),
    );
  }
  if (input.json) {
    const { BENCHMARK_FORMAT, diagnosisJson } = await importLater<
      typeof import("./json_formats.ts")
    >("./json_formats.ts", import.meta.url);
    printJson(ctx, BENCHMARK_FORMAT, {
      bundle: outcome.bundle.name,
      bundleId: outcome.bundle.id,
      experiment: outcome.plan.id,
      home: homeDir,
      room: outcome.room,
      report: reports.markdown,
      reportHtml: reports.html,
      complete: scorecard.complete,
      scorecard,
      ...diagnosisJson(diagnosis),
    });
  } else printOutcome((s) => ctx.stdout(s + "\n"), outcome, reports);
  if (scorecard.complete) return 0;
  // Stopped by Ctrl-C (or SIGTERM): what finished is kept; the shell sees the signal.
  return ran.stopped ?? 1;
}

function enqueueWithoutStore() {
  return usageError(
    "Cannot --enqueue without a store shared by workers",
    "Give --store postgres://USER@HOST:PORT/DATABASE (or set DVERGR_STORE)",
  );
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { input, positionals } = opts;
  const fileBundle = await readBundleArg("benchmark", positionals[0], { home: input.home, ctx });
  if (input.check) return await runCheck(ctx, fileBundle, input.json === true);

  const services = composeServices();
  const request = benchmarkRequestOf(
    { ...input, mounts: input.mounts?.map((m) => resolve(ctx.cwd, m)) },
    services.candidates,
    "cli",
  );
  // Whether bubblewrap works here (short processes, asked once per process) is found while
  // the bundle is installed and planned, not after, when the candidates are resolved; a run
  // of built-ins and models never asks.
  if (!input.enqueue && services.candidates.sandboxed(request.specs)) {
    void importLater<typeof import("../adapters/candidates/command/command.ts")>(
      "../adapters/candidates/command/command.ts",
      import.meta.url,
    ).then((m) => m.bwrapSupport(ctx.env));
  }
  const homeDir = homeDirOf(ctx, fileBundle, input.home);
  // Output files are checked now: a bad one must not surface after every cell has run.
  if (input.report !== undefined) {
    await checkOutputFile(resolve(ctx.cwd, input.report), "--report");
  }
  if (input.junit !== undefined) await checkOutputFile(resolve(ctx.cwd, input.junit), "--junit");
  const store = storeUrl(input.store, ctx.env);
  const blobs = blobsTarget(input.blobs, ctx.env, store);
  if (input.enqueue) {
    if (store === null) throw enqueueWithoutStore();
    const home = await openHomeAt(homeDir, store, blobs);
    const { source } = fileBundle;
    const room = source.kind === "room" ? source.room : undefined;
    const runner = lazyRunner(); // for a generator.js
    const req = { ...request, services, bundle: fileBundle, home, room, env: ctx.env, runner };
    const { enqueueOnly } = await importLater<typeof import("./benchmark_enqueue.ts")>(
      "./benchmark_enqueue.ts",
      import.meta.url,
    );
    try {
      return await enqueueOnly(ctx, req, input.json === true);
    } finally {
      runner.close();
    }
  }
  const ran = await runWithProgress(
    ctx,
    { input, fileBundle, homeDir, store, blobs },
    services,
    request,
  );
  try {
    return await finish(ctx, input, ran);
  } finally {
    await ran.closed;
  }
}
