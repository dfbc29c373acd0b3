import { dirname, join } from "node:path";
import { writeFileAtomic as writeAtomic } from "./write_atomic.ts";
import type { BenchmarkOutcome } from "../core/engine/benchmark.ts";
import { renderReport, type ReportOptions } from "../core/bench/report.ts";
import { renderReportHtml } from "../core/bench/report_html.ts";
import { reportOptionsOf } from "../core/bench/report_options.ts";
import type { Scorecard } from "../core/bench/scorecard.ts";

/** The report options of a benchmark outcome: title, case-pack certification, isolation. */
export function reportOptions(outcome: BenchmarkOutcome): ReportOptions {
  return reportOptionsOf({
    definition: outcome.plan.definition,
    bundleName: outcome.bundle.name,
    bundle: outcome.bundle,
    scorecard: outcome.scorecard,
    diagnosis: outcome.diagnosis,
  });
}

/**
 * Where an experiment's reports are kept in its home: a directory per experiment, so a new
 * experiment of the same bundle never overwrites another's (`dvergr report` writes them again).
 */
export function keptReportPath(homeDir: string, experimentId: string): string {
  return join(homeDir, "reports", experimentId, "report.md");
}

/**
 * Writes the Markdown report to `markdownPath` and the self-contained HTML page (with the
 * cost/reward plot) beside it, each atomically (temporary sibling, then rename).
 */
export async function writeReports(
  report: { scorecard: Scorecard; options: ReportOptions },
  markdownPath: string,
): Promise<{ markdown: string; html: string }> {
  const html = markdownPath.replace(/\.md$/i, "") + ".html";
  await Deno.mkdir(dirname(markdownPath), { recursive: true });
  // Side by side (each waits on the file system more than it works); both end before a
  // failure of either is thrown.
  const written = await Promise.allSettled([
    writeAtomic(markdownPath, renderReport(report.scorecard, report.options)),
    writeAtomic(html, renderReportHtml(report.scorecard, report.options)),
  ]);
  for (const w of written) if (w.status === "rejected") throw w.reason;
  return { markdown: markdownPath, html };
}
