import { resolve } from "node:path";
import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { diagnosisJson, REGRADE_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { checkOutputFile } from "../adapters/files/output_file.ts";
import { composeServices } from "../adapters/compose.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import { EXPERIMENT_HOME_HELP, withExperiment } from "./experiment_homes.ts";
import { readBundleArg } from "./bundle_arg.ts";
import { onStopSignal } from "./signals.ts";
import { createProgress } from "./progress.ts";
import { keptReportPath, writeReports } from "./report_files.ts";
import { writeFileAtomic } from "./write_atomic.ts";
import { candidateLines } from "./benchmark.ts";
import { regradeExperiment, type RegradeOutcome } from "../core/engine/regrade.ts";
import { currentRecords } from "../core/engine/score_experiment.ts";
import { reportOptionsOf } from "../core/bench/report_options.ts";
import { benchmarkJunit } from "../core/bench/junit.ts";
import { formatFixed } from "../core/bench/format_fixed.ts";
import { changeLine, countsLine, reasonText } from "../core/bench/regrade_comparison.ts";
import type { AttemptRecord } from "../core/bench/records.ts";
import type { Home } from "../core/ports/home.ts";
import type { ExperimentMeta } from "../core/ports/state_store.ts";

export const HELP = `dvergr regrade <experiment> --bundle BUNDLE [options]

Grades the attempts of an experiment again with a changed checker, from the evidence the
home kept (the files each attempt left, the pages it fetched, its judge answers), without
running any candidate. The bundle (a directory, or ROOM/NAME) must pose the same task: the
same task text, fixtures, cases, capture and web; only the checker, gold, calibration and
judge may differ (else exit 2, naming what differs). The re-grade is a new experiment
(another verifier, the same candidates) whose cells say where they came from and keep the
original attempts' outcome, usage, cost and times. Judge answers are reused when the same
judge gets the same request; only new requests are asked. Attempts whose evidence is gone
are listed, not graded: they stay without a verdict (unfinished, like a fault, not a
failure). The report compares the two verifiers cell by cell. Running the same command
again resumes. The experiment is its id or a unique prefix (the benchmark prints it).

Options:
  --bundle BUNDLE  the changed bundle: a directory, or ROOM/NAME of the home (required)
${EXPERIMENT_HOME_HELP}
  --parallel N     cells graded at once (default 4)
  --junit FILE     also write JUnit XML, one test case per cell
  --json           print the scorecard and the comparison as JSON
  -h, --help       show this help

Example: a stricter checker, then the verdicts it changes
  dvergr regrade 3f2a --bundle my-workflow --home workflow-runs/my-workflow

Exit status: 0 every cell has a new verdict; 1 some cells have none (evidence gone, the
original attempt faulted, the checker faulted; they are listed); 2 bad input (no such
experiment, another task, a bad bundle); 130 stopped by Ctrl-C (143 by SIGTERM): the
cells graded are kept and the same command resumes.
`;

export const OPTIONS = {
  bundle: { type: "string" },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  parallel: { type: "string" },
  junit: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("regrade", args, OPTIONS);
  if (positionals.length !== 1) {
    throw usageError(
      `"dvergr regrade" takes one experiment, got ${positionals.length}`,
      "Write dvergr regrade <experiment> --bundle BUNDLE",
    );
  }
  if (values.bundle === undefined) {
    throw usageError(
      "Cannot re-grade without --bundle",
      "Name the changed bundle: --bundle path/to/bundle (or ROOM/NAME)",
    );
  }
  let parallel: number | undefined;
  if (values.parallel !== undefined) {
    parallel = Number(values.parallel);
    if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) {
      throw usageError(
        `Cannot use --parallel ${values.parallel}: it must be a whole number from 1 to 64`,
        "e.g. --parallel 4",
      );
    }
  }
  return {
    experiment: positionals[0],
    bundle: values.bundle,
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    parallel,
    junit: values.junit,
    json: values.json === true,
  };
}

type Options = ReturnType<typeof parse>;

/** The re-grade with progress on stderr and Ctrl-C stopping it; its records for --junit. */
async function regradeIn(ctx: CliContext, opts: Options, home: Home, meta: ExperimentMeta) {
  const bundle = await readBundleArg("regrade", opts.bundle, { home: opts.home, ctx });
  const pool = createCheckerPool({ workers: 2 });
  const stop = onStopSignal();
  const progress = createProgress({ write: ctx.raw.stderr, isTerminal: ctx.stderrIsTerminal });
  try {
    const outcome = await regradeExperiment({
      services: composeServices(),
      home,
      original: meta,
      bundle,
      env: ctx.env,
      runner: pool,
      parallel: opts.parallel,
      onEvent: progress.onEvent,
      signal: stop.signal,
    });
    const records: AttemptRecord[] = opts.junit === undefined ? [] : await Array.fromAsync(
      currentRecords(home.state.streamCellRecords(outcome.plan.id), outcome.plan),
    );
    const report = { scorecard: outcome.scorecard, options: reportOptions(outcome) };
    const reports = await writeReports(report, keptReportPath(home.dir, outcome.plan.id));
    return { outcome, records, reports, homeDir: home.dir, stopped: stop.exitStatus() };
  } finally {
    progress.stop();
    stop.dispose();
    pool.close();
  }
}

function reportOptions(o: RegradeOutcome) {
  return {
    ...reportOptionsOf({
      definition: o.plan.definition,
      bundleName: o.bundle.name,
      bundle: o.bundle,
      scorecard: o.scorecard,
      diagnosis: o.diagnosis,
    }),
    note: `Re-graded from experiment \`${o.original.id}\` (bundle ${o.originalBundle.id}) ` +
      "without running any candidate.",
    regrade: o.comparison,
  };
}

/** The re-grade's ending for people: the candidates, what changed, what was not graded. */
function printOutcome(out: (line: string) => void, done: Awaited<ReturnType<typeof regradeIn>>) {
  const { outcome, reports } = done;
  const c = outcome.comparison;
  out(
    `Experiment ${outcome.plan.id}: ${outcome.plan.cells.length} cells re-graded from ` +
      `${outcome.original.id}; no candidate ran`,
  );
  candidateLines(outcome.scorecard).forEach(out);
  out(`Changed verdicts: ${countsLine(c)}`);
  for (const ch of c.changes) out(`  ${changeLine(ch)}`);
  if (c.changesNotListed > 0) out(`  … ${c.changesNotListed} more`);
  const gone = Object.entries(c.notRegraded);
  if (gone.length > 0) {
    out(
      `Not re-graded (no verdict, counted as unfinished, not as failures): ${
        gone.map(([k, n]) => `${n} ${reasonText(k)}`).join(", ")
      }`,
    );
    for (const m of c.notRegradedCells) {
      out(`  ${m.candidate} / ${m.caseId ?? "-"} / ${m.repetition}: ${m.message}`);
    }
  }
  if (c.judge.reused + c.judge.asked > 0) {
    out(
      `Judge: ${c.judge.reused} answers reused, ${c.judge.asked} asked anew ($${
        formatFixed(c.judge.billedMicros / 1e6, 4)
      })`,
    );
  }
  out("Outcomes, usage, cost and times are the original attempts'.");
  out(`Report: ${reports.markdown}`);
  out(`HTML report: ${reports.html}`);
}

export async function run(ctx: CliContext, opts: Options): Promise<number> {
  const junit = opts.junit === undefined ? undefined : resolve(ctx.cwd, opts.junit);
  if (junit !== undefined) await checkOutputFile(junit, "--junit");
  const done = await withExperiment(
    ctx,
    { home: opts.home, store: opts.store, blobs: opts.blobs },
    opts.experiment,
    "re-grade",
    (home, meta) => regradeIn(ctx, opts, home, meta),
  );
  const { outcome } = done;
  if (junit !== undefined) {
    await writeFileAtomic(
      junit,
      benchmarkJunit(outcome.bundle.name, [...outcome.plan.cells], done.records),
    );
  }
  if (opts.json) {
    printJson(ctx, REGRADE_FORMAT, {
      original: outcome.original.id,
      experiment: outcome.plan.id,
      bundle: outcome.bundle.name,
      bundleId: outcome.bundle.id,
      home: done.homeDir,
      room: outcome.room,
      report: done.reports.markdown,
      reportHtml: done.reports.html,
      complete: outcome.scorecard.complete,
      scorecard: outcome.scorecard,
      comparison: outcome.comparison,
      ...diagnosisJson(outcome.diagnosis),
    });
  } else printOutcome((s) => ctx.stdout(s + "\n"), done);
  if (outcome.scorecard.complete) return 0;
  return done.stopped ?? 1;
}
