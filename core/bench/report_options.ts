/**
 * What a report says besides the scorecard, from what the home keeps of an experiment: its
 * title, a case pack's certification, the resource limits of its command candidates, and
 * whether they ran without isolation. One function, so the report a benchmark writes and the
 * one `dvergr report` or MCP `experiment_report` writes again later are the same. Pure.
 */
import type { Bundle } from "../bundle/types.ts";
import type { CertificationSummary, ReportOptions } from "./report.ts";
import type { Diagnosis } from "./diagnosis.ts";
import type { ExperimentDefinition } from "./experiment.ts";
import type { Scorecard } from "./scorecard.ts";
import { markdownSafe } from "./markdown_safe.ts";

/** The note of a report whose command candidates ran without bubblewrap. */
export const UNISOLATED_NOTE =
  "bubblewrap is not installed or cannot run here, so command candidates ran in their world directory without isolation";

/** A case pack's certification counts, when the bundle has certification.edn. */
export function certificationSummary(bundle: Bundle): CertificationSummary | null {
  const c = bundle.certification;
  if (!c) return null;
  const byReason = (c["by-reason"] ?? {}) as Record<string, number>;
  return { cases: Number(c.cases), certified: Number(c.certified), byReason };
}

type Candidates = ExperimentDefinition["candidates"];

/** The resource limits of the command candidates, as their identities record them. */
function limitsNoteOf(candidates: Candidates): string {
  const byLimits = new Map<string, string[]>();
  for (const c of candidates) {
    const l = c.identity.limits as Record<string, number> | undefined;
    if (!l) continue;
    const text = `memory ${l.memoryMiB} MiB, ${l.worldMiB} MiB written under each writable ` +
      `world directory, ${l.processes} processes, ${l.openFiles} open files`;
    byLimits.set(text, [...(byLimits.get(text) ?? []), c.name]);
  }
  return `Limits per attempt of command candidates (going over one fails the attempt): ${
    [...byLimits].map(([text, names]) => `${names.map(markdownSafe).join(", ")}: ${text}`)
      .join("; ")
  }.`;
}

/**
 * The report options of an experiment: `bundle` is the version it ran (null when the home no
 * longer has it: the title is then the bundle's name, and a case pack's counts are left out).
 */
export function reportOptionsOf(
  parts: {
    definition: ExperimentDefinition;
    bundleName: string;
    bundle: Bundle | null;
    scorecard: Scorecard;
    diagnosis: Diagnosis;
  },
): ReportOptions {
  const { definition, bundle, scorecard } = parts;
  const commands = definition.candidates.some((c) => c.identity.kind === "command");
  return {
    title: bundle ? bundle.definition.title : parts.bundleName,
    certification: bundle ? certificationSummary(bundle) : null,
    diagnosis: parts.diagnosis,
    ...(commands ? { limitsNote: limitsNoteOf(definition.candidates) } : {}),
    ...(commands && !scorecard.isolated ? { isolatedNote: UNISOLATED_NOTE } : {}),
  };
}
