import { resolve } from "node:path";
import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { usageError } from "../core/errors.ts";
import type { Home } from "../core/ports/home.ts";
import type { ExperimentMeta } from "../core/ports/state_store.ts";
import { checkOutputFile } from "../adapters/files/output_file.ts";
import type { ExperimentDefinition } from "../core/bench/experiment.ts";
import { renderReport } from "../core/bench/report.ts";
import { renderReportHtml } from "../core/bench/report_html.ts";
import { benchmarkJunit } from "../core/bench/junit.ts";
import { cellsCsv } from "../core/bench/cells_csv.ts";
import { experimentReportParts } from "../core/ops/scorecards.ts";
import { writeFileAtomic } from "./write_atomic.ts";
import { EXPERIMENT_HOME_HELP, withExperiment } from "./experiment_homes.ts";

export const HELP =
  `dvergr report <experiment> [--format md|html|junit|csv] [-o FILE] [--baseline NAME] [--home DIR]

Writes an experiment's report again, from what its home keeps: the Markdown report or the
HTML page the benchmark wrote (scorecard, cost/reward frontier, paired comparisons,
failure causes, per-case results), JUnit XML (one test case per cell), or CSV (one row per
cell: outcome, reward, cause, cost, tokens, time and every check). For an experiment still
running, the report of the cells graded so far.

The experiment is its id or a unique prefix (\`dvergr experiments\` lists them).

Options:
  --format F         md (default), html, junit or csv
  -o, --output FILE  write to FILE (atomically) instead of stdout
  --baseline NAME    the candidate the others are compared against (md, html)
${EXPERIMENT_HOME_HELP}
  -h, --help         show this help

Example:
  dvergr report 0578d195 --format html -o report.html

Exit status: 0 written; 2 bad input (no such experiment, a bad format or file).
`;

export const OPTIONS = {
  format: { type: "string" },
  output: { type: "string", short: "o" },
  baseline: { type: "string" },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
} as const;

const FORMATS = ["md", "html", "junit", "csv"] as const;
type Format = typeof FORMATS[number];

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("report", args, OPTIONS);
  if (positionals.length !== 1) {
    throw usageError(
      `"dvergr report" takes one experiment, got ${positionals.length}`,
      "Write dvergr report <experiment> (`dvergr experiments` lists them)",
    );
  }
  const format = (values.format ?? "md") as Format;
  if (!FORMATS.includes(format)) {
    throw usageError(
      `Cannot write a report as "${values.format}"`,
      `Give --format ${FORMATS.join(", ")}`,
    );
  }
  if (values.baseline !== undefined && (format === "junit" || format === "csv")) {
    throw usageError(
      `--baseline has no effect on --format ${format}: it lists cells, not comparisons`,
      "Leave out --baseline, or use --format md or html",
    );
  }
  return { experiment: positionals[0], format, values };
}

/** The latest try of each cell of an experiment. */
function latestRecords(home: Home, meta: ExperimentMeta) {
  return Array.fromAsync(home.state.streamCellRecords(meta.id));
}

async function render(
  home: Home,
  meta: ExperimentMeta,
  format: Format,
  baseline: string | undefined,
): Promise<string> {
  const def = meta.definition as unknown as ExperimentDefinition;
  if (format === "csv") return cellsCsv(def, await latestRecords(home, meta));
  if (format === "junit") {
    const cells = [];
    for (let repetition = 0; repetition < def.repetitions; repetition++) {
      for (const caseId of def.cases ?? [null]) {
        for (const { name } of def.candidates) cells.push({ candidate: name, caseId, repetition });
      }
    }
    return benchmarkJunit(meta.bundleName, cells, await latestRecords(home, meta));
  }
  const { scorecard, options } = await experimentReportParts(home, meta, baseline);
  return format === "html"
    ? renderReportHtml(scorecard, options)
    : renderReport(scorecard, options);
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, format } = opts;
  const output = values.output === undefined ? undefined : resolve(ctx.cwd, values.output);
  if (output !== undefined) await checkOutputFile(output, "--output");
  const text = await withExperiment(
    ctx,
    values,
    opts.experiment,
    "report",
    (home, meta) => render(home, meta, format, values.baseline),
  );
  // The same bytes as the file -o writes (CSV's CRLF included): the formats escape their text.
  if (output === undefined) ctx.raw.stdout(text);
  else {
    await writeFileAtomic(output, text);
    ctx.stderr(`Wrote ${output}\n`);
  }
  return 0;
}
