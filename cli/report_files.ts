import { dirname } from "node:path";
import { writeFileAtomic as writeAtomic } from "./write_atomic.ts";
import type { BenchmarkOutcome } from "../core/engine/benchmark.ts";
import { certificationSummary } from "../core/engine/benchmark.ts";
import { renderReport, type ReportOptions } from "../core/bench/report.ts";
import { renderReportHtml } from "../core/bench/report_html.ts";
/** The report options of a benchmark outcome: title, case-pack certification, isolation. */
export function reportOptions(outcome: BenchmarkOutcome): ReportOptions {
  const commands = outcome.candidates.some((c) => c.identity.kind === "command");
  return {
    title: outcome.bundle.definition.title,
    certification: certificationSummary(outcome.bundle),
    diagnosis: outcome.diagnosis,
    ...(commands ? { limitsNote: limitsNoteOf(outcome) } : {}),
    ...(commands && outcome.isolation === "none"
      ? {
        isolatedNote:
          "bubblewrap is not installed or cannot run here, so command candidates ran in their world directory without isolation",
      }
      : {}),
  };
}

/** The resource limits of the command candidates, as their identities record them. */
function limitsNoteOf(outcome: BenchmarkOutcome): string {
  const byLimits = new Map<string, string[]>();
  for (const c of outcome.candidates) {
    const l = c.identity.limits as Record<string, number> | undefined;
    if (!l) continue;
    const text = `memory ${l.memoryMiB} MiB, ${l.worldMiB} MiB written under each writable ` +
      `world directory, ${l.processes} processes, ${l.openFiles} open files`;
    byLimits.set(text, [...(byLimits.get(text) ?? []), c.name]);
  }
  return `Limits per attempt of command candidates (going over one fails the attempt): ${
    [...byLimits].map(([text, names]) => `${names.join(", ")}: ${text}`).join("; ")
  }.`;
}

/** The Markdown report of a benchmark outcome. */
export function reportFor(outcome: BenchmarkOutcome): string {
  return renderReport(outcome.scorecard, reportOptions(outcome));
}

/**
 * Writes the Markdown report to `markdownPath` and the self-contained HTML page (with the
 * cost/reward plot) beside it, each atomically (temporary sibling, then rename).
 */
export async function writeReports(
  outcome: BenchmarkOutcome,
  markdownPath: string,
): Promise<{ markdown: string; html: string }> {
  const html = markdownPath.replace(/\.md$/i, "") + ".html";
  const opts = reportOptions(outcome);
  await Deno.mkdir(dirname(markdownPath), { recursive: true });
  await writeAtomic(markdownPath, renderReport(outcome.scorecard, opts));
  await writeAtomic(html, renderReportHtml(outcome.scorecard, opts));
  return { markdown: markdownPath, html };
}
