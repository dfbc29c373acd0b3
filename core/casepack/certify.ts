/**
 * Certification (docs/compatibility.md §6.6): which rows of a table can grade an answer, and
 * why the others cannot. Pure: the attachments are given as a map of texts read at the
 * edge.
 */
import { writeEdn } from "../edn/write.ts";
import { toPlain } from "../edn/plain.ts";
import type { EdnValue } from "../edn/values.ts";
import { caseId, isBlankCell } from "./case_id.ts";
import { casepackCheckKey, casepackGrade } from "./rules.ts";
import type { CasePackSpec, FieldSpec } from "./spec.ts";
import { columnIndex, type Table, type TableRow } from "./table.ts";

/** Why a row is not a certified case, in the order they are checked. */
export type ExclusionReason =
  | { reason: "no-id"; row: number }
  | { reason: "duplicate-id" }
  | { reason: "unlabelled"; fields: string[] }
  | { reason: "missing-attachment"; columns: string[] }
  | { reason: "conflicting-outcomes" }
  | { reason: "outcome-not-gradable"; fields: string[] };

/** The reasons' names in their order. */
export const REASON_ORDER = [
  "no-id",
  "duplicate-id",
  "unlabelled",
  "missing-attachment",
  "conflicting-outcomes",
  "outcome-not-gradable",
] as const;

export interface CaseVerdict {
  /** The case id, or `row-<n>` when the row has none. */
  id: string;
  status: "certified" | "excluded";
  reasons: ExclusionReason[];
  /** The row (1-based among data rows) and, when known, its line in the file. */
  row: number;
  line?: number;
}

export interface Certification {
  cases: number;
  certified: number;
  /** Reasons counted over all verdicts (a certified row once under "certified"), keys sorted. */
  byReason: Record<string, number>;
  /** One verdict per row, in table order. */
  verdicts: CaseVerdict[];
}

/**
 * The attachment reference of a cell: its text trimmed, backslashes as `/` (Windows
 * paths in Excel exports); null when blank.
 */
export function attachmentRef(cell: EdnValue | undefined): string | null {
  if (cell === undefined || isBlankCell(cell)) return null;
  const text = typeof cell === "string" ? cell : String(toPlain(cell));
  return text.trim().replace(/\\/g, "/");
}

/** Every distinct attachment reference of the table's attachment columns. */
export function attachmentRefs(table: Table, spec: CasePackSpec): string[] {
  const idx = columnIndex(table);
  const cols = spec.attachments.map((c) => idx.get(c)!);
  const refs = new Set<string>();
  for (const r of table.rows) {
    for (const j of cols) {
      const ref = attachmentRef(r.values[j]);
      if (ref !== null) refs.add(ref);
    }
  }
  return [...refs];
}

/** A cell as the checker sees it (plain JSON); strings are themselves. */
export function plainCell(v: EdnValue | undefined): unknown {
  if (v === undefined) return null;
  return typeof v === "string" ? v : toPlain(v);
}

/** The field specs as the checker reads them from `params.fields`. */
export function fieldsParam(
  expected: FieldSpec[],
): Record<string, { rule: string; tolerance?: number }> {
  // No prototype, so a field named "__proto__" is an own property like any other.
  const out: Record<string, { rule: string; tolerance?: number }> = Object.create(null);
  for (const f of expected) {
    out[f.field] = f.tolerance === undefined
      ? { rule: f.rule }
      : { rule: f.rule, tolerance: f.tolerance };
  }
  return out;
}

// Cell identity for conflict detection: strings by their text, other values by type
// and printed EDN, so "4210" and 4210 differ as they do in the reference.
function identity(values: (EdnValue | undefined)[]): string {
  return JSON.stringify(
    values.map((v) =>
      typeof v === "string" ? v : v === undefined || v === null ? null : ["edn", writeEdn(v)]
    ),
  );
}

/** Whether a cell holds NaN or an infinity anywhere (EDN ##NaN, ##Inf, a JSON 1e400). */
export function hasNonFinite(v: EdnValue | undefined): boolean {
  if (typeof v === "number") return !Number.isFinite(v);
  if (v === null || v === undefined || typeof v !== "object") return false;
  if (Array.isArray(v)) return v.some(hasNonFinite);
  if (v instanceof Map) {
    for (const [k, x] of v) if (hasNonFinite(k) || hasNonFinite(x)) return true;
    return false;
  }
  const items = (v as { items?: unknown }).items;
  if (Array.isArray(items)) return items.some((x) => hasNonFinite(x as EdnValue));
  const value = (v as { value?: unknown }).value;
  return typeof value === "number" && !Number.isFinite(value);
}

/**
 * Certifies every row of the table under the spec. Reasons, in this order: no-id (blank
 * id cell), duplicate-id (every row whose case id occurs more than once), unlabelled
 * (blank expected fields), missing-attachment (blank cell or no such text in
 * `attachments`), conflicting-outcomes (another row has the same inputs but other
 * expected values), outcome-not-gradable (for rows with an id and no blank outcome:
 * fields the generated checker does not accept when the row's own outcome is the
 * answer). A row is certified iff it has no reason.
 */
export function certifyCases(
  table: Table,
  spec: CasePackSpec,
  attachments: ReadonlyMap<string, string>,
): Certification {
  const idx = columnIndex(table);
  const idCol = idx.get(spec.id)!;
  const inputCols = spec.inputs.map((c) => idx.get(c)!);
  const expCols = spec.expected.map((f) => idx.get(f.field)!);
  const attCols = spec.attachments.map((c) => idx.get(c)!);
  const rows = table.rows;
  const ids = rows.map((r) => caseId(r.values[idCol]));

  const idCount = new Map<string, number>();
  for (const id of ids) if (id !== null) idCount.set(id, (idCount.get(id) ?? 0) + 1);

  // Inputs → the first outcome combination seen, and whether another one exists.
  const groups = new Map<string, { outcome: string; conflict: boolean }>();
  const inputKeys = rows.map((r) => identity(inputCols.map((j) => r.values[j])));
  rows.forEach((r, i) => {
    const outcome = identity(expCols.map((j) => r.values[j]));
    const g = groups.get(inputKeys[i]);
    if (g === undefined) groups.set(inputKeys[i], { outcome, conflict: false });
    else if (g.outcome !== outcome) g.conflict = true;
  });

  const fields = fieldsParam(spec.expected);
  const verdicts: CaseVerdict[] = rows.map((r: TableRow, i) => {
    const id = ids[i];
    const reasons: ExclusionReason[] = [];
    if (id === null) reasons.push({ reason: "no-id", row: r.row });
    else if (idCount.get(id)! > 1) reasons.push({ reason: "duplicate-id" });
    const unlabelled = spec.expected.filter((_, k) => isBlankCell(r.values[expCols[k]]));
    if (unlabelled.length > 0) {
      reasons.push({ reason: "unlabelled", fields: unlabelled.map((f) => f.field) });
    }
    const missing = spec.attachments.filter((_, k) => {
      const ref = attachmentRef(r.values[attCols[k]]);
      return ref === null || !attachments.has(ref);
    });
    if (missing.length > 0) reasons.push({ reason: "missing-attachment", columns: missing });
    if (groups.get(inputKeys[i])!.conflict) reasons.push({ reason: "conflicting-outcomes" });
    if (id !== null && unlabelled.length === 0) {
      const outcome: Record<string, unknown> = Object.create(null);
      spec.expected.forEach((f, k) => {
        outcome[f.field] = plainCell(r.values[expCols[k]]);
      });
      const { checks } = casepackGrade(outcome, fields, outcome);
      // NaN and infinities do not survive JSON or EDN round trips: no answer can match them.
      const wrong = spec.expected.filter((f, k) =>
        !checks[casepackCheckKey(f.field)] || hasNonFinite(r.values[expCols[k]])
      );
      if (wrong.length > 0) {
        reasons.push({ reason: "outcome-not-gradable", fields: wrong.map((f) => f.field) });
      }
    }
    const verdict: CaseVerdict = {
      id: id ?? `row-${r.row}`,
      status: reasons.length === 0 ? "certified" : "excluded",
      reasons,
      row: r.row,
    };
    if (r.line !== undefined) verdict.line = r.line;
    return verdict;
  });

  const counts = new Map<string, number>();
  let certified = 0;
  for (const v of verdicts) {
    if (v.status === "certified") {
      certified++;
      counts.set("certified", (counts.get("certified") ?? 0) + 1);
    }
    for (const reason of v.reasons) counts.set(reason.reason, (counts.get(reason.reason) ?? 0) + 1);
  }
  const byReason: Record<string, number> = {};
  for (const k of [...counts.keys()].sort()) byReason[k] = counts.get(k)!;
  return { cases: rows.length, certified, byReason, verdicts };
}
