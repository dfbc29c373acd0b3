/**
 * The generated bundle of a case pack (docs/compatibility.md §6.7): workflow.edn with the
 * generated task, checker.js, calibration.edn, certification.edn, shared fixtures and
 * one cases/<id>/ per certified row. Pure: table, spec and attachment texts in, a file
 * map out.
 */
import { DvergrError } from "../errors.ts";
import type { FileMap } from "../bundle/file_map.ts";
import { writeEdn } from "../edn/write.ts";
import { type EdnValue, kw } from "../edn/values.ts";
import { CASE_CHECKER_SOURCE } from "./checker_source.ts";
import {
  attachmentRef,
  type CaseVerdict,
  type Certification,
  certifyCases,
  fieldsParam,
  plainCell,
} from "./certify.ts";
import {
  casepackCheckKey,
  casepackFieldRight,
  casepackGrade,
  casepackNumber,
  casepackText,
} from "./rules.ts";
import type { CasePackSpec, FieldSpec } from "./spec.ts";
import { columnIndex, type Table } from "./table.ts";

/** What building a case pack gives: the certification and, when a case is certified, files. */
export interface CasePackBuild {
  certification: Certification;
  /** The bundle's files; null when no case is certified. */
  files: FileMap | null;
}

/**
 * Certifies the table under the spec and, when at least one case is certified,
 * generates the bundle's files. `attachments` maps each attachment reference (see
 * attachmentRef) that could be read to its text.
 */
export function buildCasePack(
  table: Table,
  spec: CasePackSpec,
  attachments: ReadonlyMap<string, string>,
): CasePackBuild {
  const certification = certifyCases(table, spec, attachments);
  if (certification.certified === 0) return { certification, files: null };
  return { certification, files: casePackFiles(table, spec, certification, attachments) };
}

function typeHint(f: FieldSpec): string {
  if (f.rule === "number") return " (a number)";
  if (f.rule === "set") return " (a vector of values)";
  if (f.rule === "date") return " (a date, yyyy-mm-dd)";
  return "";
}

/** The answer contract: where the answer goes and one line per expected field. */
export function answerContract(spec: CasePackSpec): string {
  const lines = spec.expected.map((f) =>
    `\n- ${JSON.stringify(f.field)}${f.doc ? `: ${f.doc}` : ""}${typeHint(f)}`
  );
  return "write /out/answer.edn: an EDN map from each of these fields (the name as a string) " +
    `to its value:${lines.join("")}`;
}

/**
 * The task of the bundle. Generated: where the case is (and its documents), then the
 * answer contract. A task of the spec is kept and followed by where the case is and
 * the answer contract, so a task need not repeat them.
 */
export function generatedTask(spec: CasePackSpec): string {
  const inputs = spec.inputs.map((c) => JSON.stringify(c)).join(", ");
  const docs = spec.attachments.length > 0
    ? ` (${spec.attachments.join(", ")} column${spec.attachments.length > 1 ? "s" : ""})`
    : "";
  // Shared files are named so an agent knows they are there (the reference task did not).
  const shared = spec.shared.size > 0
    ? ` Every case also has ${[...spec.shared.keys()].join(", ")}.`
    : "";
  if (spec.task === undefined) {
    return `A case is in /docs/case.edn: a map of ${inputs}.` +
      (docs ? ` Its documents are in /docs/${docs}.` : "") + shared +
      ` Determine its outcome and ${answerContract(spec)}`;
  }
  return `${spec.task.trimEnd()}\n\nThe case is in /docs/case.edn: a map of ${inputs}.` +
    (docs ? ` Its documents are in /docs/${docs}.` : "") + shared +
    ` Write ${answerContract(spec).slice("write ".length)}`;
}

/** workflow.edn of the case pack. */
export function workflowEdn(spec: CasePackSpec): string {
  const fields = new Map<EdnValue, EdnValue>();
  for (const f of spec.expected) {
    const m = new Map<EdnValue, EdnValue>([[kw("rule"), kw(f.rule)]]);
    if (f.tolerance !== undefined) m.set(kw("tolerance"), f.tolerance);
    if (f.doc !== undefined) m.set(kw("doc"), f.doc);
    fields.set(f.field, m);
  }
  return writeEdn({
    title: spec.title ?? spec.name,
    ...(spec.doc !== undefined ? { doc: spec.doc } : {}),
    task: generatedTask(spec),
    params: { fields },
    capture: ["/out"],
  }, { pretty: true }) + "\n";
}

/** certification.edn: counts, counts by reason and every excluded case with its reasons. */
export function certificationEdn(cert: Certification): string {
  const byReason = new Map<EdnValue, EdnValue>();
  for (const [k, n] of Object.entries(cert.byReason)) byReason.set(kw(k), n);
  const excluded = cert.verdicts.filter((v) => v.status === "excluded").map((v) =>
    new Map<EdnValue, EdnValue>([
      [kw("id"), v.id],
      [kw("status"), kw("excluded")],
      [kw("reasons"), v.reasons.map(reasonEdn)],
    ])
  );
  return writeEdn(
    new Map<EdnValue, EdnValue>([
      [kw("cases"), cert.cases],
      [kw("certified"), cert.certified],
      [kw("by-reason"), byReason],
      [kw("excluded"), excluded],
    ]),
    { pretty: true },
  ) + "\n";
}

function reasonEdn(r: CaseVerdict["reasons"][number]): EdnValue {
  const m = new Map<EdnValue, EdnValue>([[kw("reason"), kw(r.reason)]]);
  if (r.reason === "no-id") m.set(kw("row"), r.row);
  if (r.reason === "unlabelled" || r.reason === "outcome-not-gradable") {
    m.set(kw("fields"), r.fields);
  }
  if (r.reason === "missing-attachment") m.set(kw("columns"), r.columns);
  return m;
}

/** A value that the field's rule must grade wrong against `value` (docs/compatibility.md §6.7). */
function wrongValue(f: FieldSpec, value: EdnValue | undefined): string {
  if (f.rule === "number") {
    // Offset from the value as the checker reads it, so the damage is always beyond
    // the tolerance (the reference parsed with "," → "." and could land on the value).
    const want = plainCell(value);
    const n = casepackNumber(want) ?? 0;
    const wrong = String(n + 1000 + 1000 * (f.tolerance ?? 1));
    // Beyond 2^53 an offset of 1000 can round away; twice the value cannot.
    return casepackFieldRight("number", f.tolerance, want, wrong) ? String(n * 2) : wrong;
  }
  return `not ${casepackText(plainCell(value))}`;
}

function answerMap(spec: CasePackSpec, values: (EdnValue | undefined)[]): Map<EdnValue, EdnValue> {
  return new Map(spec.expected.map((f, k) => [f.field, values[k] ?? null]));
}

/**
 * calibration.edn: the reference is the first certified case's outcome; per field one
 * damaged variant with that field replaced by a wrong value, which must lose exactly
 * that field's check. Verified on the host with the checker's own rules.
 */
export function calibrationEdn(
  spec: CasePackSpec,
  caseId: string,
  outcome: (EdnValue | undefined)[],
): string {
  const fields = fieldsParam(spec.expected);
  const gold = Object.fromEntries(spec.expected.map((f, k) => [f.field, plainCell(outcome[k])]));
  const reference = writeEdn(answerMap(spec, outcome));
  const damaged = new Map<EdnValue, EdnValue>();
  spec.expected.forEach((f, k) => {
    const values = [...outcome];
    values[k] = wrongValue(f, outcome[k]);
    const key = casepackCheckKey(f.field);
    const verdict = casepackGrade(
      Object.fromEntries(spec.expected.map((g, j) => [g.field, plainCell(values[j])])),
      fields,
      gold,
    );
    const lost = Object.entries(verdict.checks).filter(([, ok]) => !ok).map(([c]) => c);
    if (lost.length !== 1 || lost[0] !== key) {
      throw new Error(`case pack calibration: damaging "${f.field}" loses [${lost}], not [${key}]`);
    }
    damaged.set(
      kw(key),
      new Map<EdnValue, EdnValue>([
        [kw("files"), new Map([["/out/answer.edn", writeEdn(answerMap(spec, values))]])],
        [kw("loses"), [kw(key)]],
      ]),
    );
  });
  return writeEdn(
    new Map<EdnValue, EdnValue>([
      [kw("case"), caseId],
      [kw("reference"), new Map([["/out/answer.edn", reference]])],
      [kw("damaged"), damaged],
    ]),
    { pretty: true },
  ) + "\n";
}

function basenameOf(ref: string): string {
  const parts = ref.split("/");
  return parts[parts.length - 1];
}

/**
 * The bundle's files for a certification with at least one certified case. Each case's
 * text is built once; the keys of case.edn and gold.edn are printed once for all cases.
 */
export function casePackFiles(
  table: Table,
  spec: CasePackSpec,
  cert: Certification,
  attachments: ReadonlyMap<string, string>,
): FileMap {
  const idx = columnIndex(table);
  const inputCols = spec.inputs.map((c) => idx.get(c)!);
  const expCols = spec.expected.map((f) => idx.get(f.field)!);
  const attCols = spec.attachments.map((c) => idx.get(c)!);
  const inputKeys = spec.inputs.map((c) => writeEdn(c) + " ");
  const fieldKeys = spec.expected.map((f) => writeEdn(f.field) + " ");
  const goldPrefix = "{" + writeEdn(kw("expected")) + " {";

  const files: FileMap = new Map();
  files.set("workflow.edn", workflowEdn(spec));
  files.set("checker.js", CASE_CHECKER_SOURCE);
  files.set("certification.edn", certificationEdn(cert));
  for (const [world, text] of spec.shared) files.set("fixtures" + world, text);

  let first: { id: string; outcome: (EdnValue | undefined)[] } | null = null;
  const cellEdn = (v: EdnValue | undefined) => writeEdn(v ?? null);
  cert.verdicts.forEach((verdict, i) => {
    if (verdict.status !== "certified") return;
    const values = table.rows[i].values;
    const dir = `cases/${verdict.id}/`;
    // Joined from parts (not concatenated) so each text is one flat string in memory.
    const caseParts = inputCols.map((j, k) => inputKeys[k] + cellEdn(values[j]));
    files.set(dir + "fixtures/docs/case.edn", "{" + caseParts.join(", ") + "}\n");
    const goldParts = expCols.map((j, k) => fieldKeys[k] + cellEdn(values[j]));
    files.set(dir + "gold.edn", goldPrefix + goldParts.join(", ") + "}}\n");
    const placed = new Map<string, string>([["case.edn", "the case itself"]]);
    attCols.forEach((j, k) => {
      const ref = attachmentRef(values[j])!;
      const name = basenameOf(ref);
      const clash = placed.get(name);
      if (clash !== undefined) {
        throw new DvergrError(
          "TABLE_INVALID",
          `Cannot build case "${verdict.id}" of "${table.file}"${
            verdict.line ? ` (line ${verdict.line})` : ""
          }: its attachment "${ref}" (${
            spec.attachments[k]
          }) and ${clash} would both be /docs/${name}`,
          { hint: "Rename one of the files so that each case's documents have distinct names" },
        );
      }
      placed.set(name, `"${ref}" (${spec.attachments[k]})`);
      files.set(dir + "fixtures/docs/" + name, attachments.get(ref)!);
    });
    if (first === null) first = { id: verdict.id, outcome: expCols.map((j) => values[j]) };
  });
  const ref = first as { id: string; outcome: (EdnValue | undefined)[] } | null;
  if (ref === null) throw new Error("casePackFiles() needs a certification with a certified case");
  files.set("calibration.edn", calibrationEdn(spec, ref.id, ref.outcome));
  return files;
}
