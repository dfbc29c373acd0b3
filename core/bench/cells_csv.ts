/**
 * An experiment's cells as CSV (RFC 4180, CRLF line ends), one row per planned cell in plan
 * order with its latest try: outcome, reward, cause, cost, tokens, time and one column per
 * check. For spreadsheets and scripts; text a candidate controls (the cause) is written so
 * a spreadsheet shows it as text and never evaluates it as a formula. Pure.
 */
import type { ExperimentDefinition } from "./experiment.ts";
import type { AttemptRecord } from "./records.ts";
import { cellKey } from "./records.ts";
import { causeOf, outcomeOf } from "./outcome.ts";

const COLUMNS = [
  "candidate",
  "case",
  "repetition",
  "try",
  "outcome",
  "passed",
  "reward",
  "cause",
  "started_at",
  "elapsed_ms",
  "billed_dollars",
  "list_dollars",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
];

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
function field(value: string | number | boolean | null): string {
  if (value === null) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Free text as a spreadsheet should show it: a leading =, +, -, @ or tab is not a formula. */
function text(value: string | null): string | null {
  return value !== null && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

function dollars(micros: number): string {
  return (Math.round(micros) / 1e6).toFixed(6);
}

function row(r: AttemptRecord | undefined, checks: readonly string[]): (string | number | null)[] {
  if (!r) return [null, "not run", ...Array(COLUMNS.length - 5 + checks.length).fill(null)];
  const list = r.listMicros ?? r.billedMicros;
  return [
    r.tryNo,
    outcomeOf(r),
    String(r.passed),
    r.verdict ? r.verdict.reward : null,
    text(causeOf(r)?.[1] ?? null),
    r.startedAt,
    r.elapsedMs,
    r.unpriced ? null : dollars(r.billedMicros),
    r.unpriced ? null : dollars(list),
    r.usage.input,
    r.usage.output,
    r.usage.cacheRead,
    r.usage.cacheWrite,
    ...checks.map((c) => {
      const v = r.verdict?.checks[c];
      return v === undefined ? null : String(v === true);
    }),
  ];
}

/**
 * The CSV of an experiment: `records` holds the latest try of each cell that ran (any
 * order); cells without one say "not run". Check columns are named `check:<name>`, in the
 * order the checks first appear.
 */
export function cellsCsv(def: ExperimentDefinition, records: Iterable<AttemptRecord>): string {
  const byKey = new Map<string, AttemptRecord>();
  const checks: string[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    byKey.set(cellKey(r.candidate, r.caseId, r.repetition), r);
    for (const c of Object.keys(r.verdict?.checks ?? {})) {
      if (!seen.has(c)) seen.add(c), checks.push(c);
    }
  }
  const lines = [[...COLUMNS, ...checks.map((c) => `check:${c}`)].map(field).join(",")];
  for (let repetition = 0; repetition < def.repetitions; repetition++) {
    for (const caseId of def.cases ?? [null]) {
      for (const { name } of def.candidates) {
        const r = byKey.get(cellKey(name, caseId, repetition));
        lines.push([name, caseId, repetition, ...row(r, checks)].map(field).join(","));
      }
    }
  }
  return lines.join("\r\n") + "\r\n";
}
