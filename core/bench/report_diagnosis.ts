/**
 * The report's sections that say why: "What went wrong" (per candidate each distinct cause
 * of the attempts that did not pass, with its count and one example), "Per-case results"
 * (cases × candidates, shaded as a heat map in HTML) and "Item analysis" (the cases worth a
 * look, a sentence each). Pure: built from a Diagnosis.
 */
import type { ReportBlock, ReportTable } from "./report_blocks.ts";
import type { Diagnosis } from "./diagnosis.ts";
import { formatFixed } from "./format_fixed.ts";
import { type FailureCause, OUTCOME_TEXT } from "./outcome.ts";
import { itemSentence } from "./item_analysis.ts";
import { markdownCodeSpan, markdownSafe } from "./markdown_safe.ts";

/** Rows of the per-case table in a report; `--json` has every case. */
export const REPORT_CASE_ROWS = 200;

/** "case `c1`, repetition 0" (paragraph markup), or plain text for a table cell. */
function cellName(caseId: string | null, repetition: number, plain = false): string {
  const name = caseId === null ? "" : `case ${plain ? caseId : markdownCodeSpan(caseId)}, `;
  return `${name}repetition ${repetition}`;
}

function elapsed(ms: number): string {
  return ms < 950 ? `${ms} ms` : `${formatFixed(ms / 1000, 1)} s`;
}

function exampleText(candidate: string, c: FailureCause): string {
  const e = c.example;
  const parts = [
    `**${markdownSafe(candidate)}**, ${OUTCOME_TEXT[c.outcome]} (${
      cellName(e.caseId, e.repetition)
    }`,
  ];
  if (e.signal) parts.push(`, killed by ${markdownSafe(e.signal)}`);
  else if (e.exitCode !== null) parts.push(`, exit status ${e.exitCode}`);
  parts.push(`, after ${elapsed(e.elapsedMs)})`);
  const reason = c.outcome === "failed" || c.outcome === "crashed" ? null : e.message;
  return parts.join("") + (reason ? `: ${markdownSafe(reason.split("\n")[0])}` : "") +
    (e.stderrTail ? ". The last lines of its stderr:" : ".");
}

/** "What went wrong": present when some attempt did not pass. */
export function whatWentWrongBlocks(d: Diagnosis): ReportBlock[] {
  const withCauses = d.candidates.filter((c) => c.causes.length > 0);
  if (withCauses.length === 0) return [];
  const blocks: ReportBlock[] = [{ kind: "heading", text: "What went wrong" }];
  for (const b of d.broken) {
    const every = b.attempts === 1 ? "its only attempt" : `every attempt (${b.attempts})`;
    blocks.push({
      kind: "paragraph",
      text: `**${markdownSafe(b.candidate)}**: ${every} ${b.how}, so its scores say nothing ` +
        `about the task. First cause: ${markdownSafe(b.cause.cause)}. ${b.hint}.`,
    });
  }
  blocks.push({
    kind: "paragraph",
    text: "Each distinct cause of the attempts that did not pass, per candidate, with how " +
      "many attempts it covers and one example below. `dvergr show` shows any attempt in full.",
  });
  const table: ReportTable = {
    header: ["Candidate", "Outcome", "Cause", "Attempts", "Example"],
    align: ["left", "left", "left", "right", "left"],
    rows: withCauses.flatMap((c) =>
      c.causes.map((cause) => [
        c.candidate,
        OUTCOME_TEXT[cause.outcome],
        cause.cause,
        String(cause.count),
        cellName(cause.example.caseId, cause.example.repetition, true),
      ])
    ),
  };
  blocks.push({ kind: "table", table });
  for (const c of withCauses) {
    for (const cause of c.causes) {
      if (cause.outcome === "failed") continue; // "Where answers fail" has the checks.
      blocks.push({ kind: "paragraph", text: exampleText(c.candidate, cause) });
      if (cause.example.stderrTail) blocks.push({ kind: "code", text: cause.example.stderrTail });
    }
  }
  return blocks;
}

function casesRanText(d: Diagnosis): string {
  const ran = d.cases.ran;
  if (ran === null) return "The bundle has one environment (no cases).";
  if (ran.length === d.cases.ofBundle) {
    return `All ${ran.length} cases of the bundle ran.`;
  }
  const shown = ran.slice(0, 50).map(markdownCodeSpan).join(", ");
  return `${ran.length} of the bundle's ${d.cases.ofBundle} cases ran: ${shown}` +
    (ran.length > 50 ? `, and ${ran.length - 50} more (\`--json\` lists them)` : "") + ".";
}

/** "Per-case results": each candidate's mean reward and passes per case. */
export function caseResultBlocks(d: Diagnosis): ReportBlock[] {
  if (d.caseResults.length === 0) return [];
  const candidates = d.caseResults[0].cells.map((c) => c.candidate);
  const shown = d.caseResults.slice(0, REPORT_CASE_ROWS);
  const table: ReportTable = {
    header: ["Case", ...candidates],
    align: ["left", ...candidates.map(() => "right" as const)],
    rows: shown.map((res) => [
      res.caseId ?? "(the environment)",
      ...res.cells.map((c) =>
        c.graded === 0
          ? (c.faults > 0 ? `fault (${c.faults})` : "–")
          : `${formatFixed(c.reward ?? 0, 3)} (${c.passes}/${c.graded})`
      ),
    ]),
    heat: shown.map((res) => [null, ...res.cells.map((c) => (c.graded > 0 ? c.reward : null))]),
  };
  const more = d.caseResults.length - shown.length;
  return [
    { kind: "heading", text: "Per-case results" },
    {
      kind: "paragraph",
      text: casesRanText(d) + " Each cell is the candidate's mean reward on the case and how " +
        "many of its graded repetitions passed." +
        (more > 0 ? ` The first ${shown.length} cases are shown; \`--json\` has all.` : ""),
    },
    { kind: "table", table },
  ];
}

/** "Item analysis": the flagged cases, a sentence each. */
export function itemAnalysisBlocks(d: Diagnosis): ReportBlock[] {
  if (d.cases.ran === null) return [];
  const flagged = d.items.filter((i) => i.flag !== null);
  const blocks: ReportBlock[] = [
    { kind: "heading", text: "Item analysis" },
    {
      kind: "paragraph",
      text: "Per case, the pass rate over every candidate's attempts and its discrimination: " +
        "the correlation, across candidates, of their pass share on the case with their mean " +
        "reward on the other cases (with at least 3 candidates). " +
        (flagged.length === 0
          ? "No case is flagged: none is failed by every candidate while others pass, passed " +
            "by every candidate, or failed more by stronger candidates than by weaker ones."
          : `${flagged.length} of ${d.items.length} case${
            d.items.length === 1 ? "" : "s"
          } deserve a look:`),
    },
  ];
  for (const item of flagged) blocks.push({ kind: "paragraph", text: itemSentence(item) });
  return blocks;
}
