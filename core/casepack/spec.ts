/**
 * The spec of a case pack (docs/compatibility.md §6.3): which column names a case, which are
 * its inputs and attachments, which outcomes are expected and by which rule. Given as
 * flags (`--outcome col:rule[:tolerance]`) or as an EDN file, validated here.
 */
import { caseId, isBlankCell } from "./case_id.ts";
import { DvergrError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { EdnFloat, type EdnValue, Keyword } from "../edn/values.ts";
import { conflictText, fileDirConflict, relativePathProblem } from "../bundle/file_map.ts";
import { casepackCheckKey, type Rule, RULES } from "./rules.ts";
import type { Table } from "./table.ts";

export interface FieldSpec {
  /** The column holding the expected value. */
  field: string;
  rule: Rule;
  /** Only for `number`. */
  tolerance?: number;
  doc?: string;
}

export interface CasePackSpec {
  /** The bundle's name (title fallback). */
  name: string;
  title?: string;
  doc?: string;
  /** The column naming a case. */
  id: string;
  /** Columns copied to each case's /docs/case.edn, in this order. */
  inputs: string[];
  /** Columns naming text files beside the table, copied to /docs/. */
  attachments: string[];
  /** The expected fields, in the order the task lists them. */
  expected: FieldSpec[];
  /** What to do with a case; the answer contract is appended. */
  task?: string;
  /** Files every case's world has, by world path ("/docs/accounts.txt"). */
  shared: Map<string, string>;
  /** Where each column-naming part came from, for messages ("--id", "spec.edn :inputs"). */
  origin?: Partial<Record<"id" | "inputs" | "attachments" | "expected", string>>;
}

/** A spec being assembled from an EDN file and flags; completeSpec validates it. */
export type SpecDraft = Partial<CasePackSpec>;

const SPEC_KEYS = [
  "name",
  "title",
  "doc",
  "id",
  "inputs",
  "attachments",
  "expected",
  "task",
  "shared",
] as const;
const FIELD_KEYS = ["rule", "tolerance", "doc"] as const;

function specError(message: string, hint: string, details?: Record<string, unknown>) {
  return new DvergrError("SPEC_INVALID", message, { hint, details });
}

function parseTolerance(text: string): number | null {
  const t = text.trim();
  if (!/^\d+([.,]\d+)?$|^[.,]\d+$/.test(t)) return null;
  return Number(t.replace(",", "."));
}

/**
 * Parses one `--outcome column:rule[:tolerance]` value. The column may itself hold
 * colons (the rule is found from the right); the tolerance is allowed for `number` only.
 */
export function parseOutcome(text: string, flag = "--outcome"): FieldSpec {
  const parts = text.split(":");
  const hint = `Write ${flag} column:rule[:tolerance] with a rule of ${RULES.join(", ")}, ` +
    `e.g. ${flag} account:exact or ${flag} amount:number:0.01`;
  const isRule = (s: string | undefined) =>
    s !== undefined && (RULES as readonly string[]).includes(s.trim().toLowerCase());
  let column: string;
  let rule: Rule;
  let tolerance: number | undefined;
  if (parts.length >= 2 && isRule(parts[parts.length - 1])) {
    rule = parts[parts.length - 1].trim().toLowerCase() as Rule;
    column = parts.slice(0, -1).join(":");
  } else if (parts.length >= 3 && isRule(parts[parts.length - 2])) {
    rule = parts[parts.length - 2].trim().toLowerCase() as Rule;
    column = parts.slice(0, -2).join(":");
    const tol = parseTolerance(parts[parts.length - 1]);
    if (tol === null) {
      throw specError(
        `Cannot use ${flag} "${text}": the tolerance "${
          parts[parts.length - 1]
        }" is not a number ≥ 0`,
        hint,
        { flag },
      );
    }
    tolerance = tol;
  } else {
    throw specError(`Cannot use ${flag} "${text}": no rule after the column name`, hint, { flag });
  }
  column = column.trim();
  if (column === "") {
    throw specError(`Cannot use ${flag} "${text}": the column name is empty`, hint, { flag });
  }
  if (tolerance !== undefined && rule !== "number") {
    throw specError(
      `Cannot use ${flag} "${text}": a tolerance applies to the number rule only, not ${rule}`,
      hint,
      { flag },
    );
  }
  return tolerance === undefined ? { field: column, rule } : { field: column, rule, tolerance };
}

/** A comma-separated column list of a flag (`--inputs a,b`), trimmed, blanks dropped. */
export function parseColumnList(text: string): string[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

function keyName(k: EdnValue): string | null {
  if (k instanceof Keyword) return k.name;
  if (typeof k === "string") return k;
  return null;
}

function describe(v: EdnValue | undefined): string {
  if (v === undefined || v === null) return "nil";
  if (typeof v === "string") return "a string";
  if (typeof v === "number" || typeof v === "bigint" || v instanceof EdnFloat) return "a number";
  if (typeof v === "boolean") return "a boolean";
  if (v instanceof Keyword) return "a keyword";
  if (Array.isArray(v)) return "a vector";
  if (v instanceof Map) return "a map";
  return "another value";
}

function asNumber(v: EdnValue | undefined): number | null {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof EdnFloat) return v.value;
  return null;
}

/**
 * Reads a spec from EDN text (the keys of docs/compatibility.md §6.3: :name :title :doc :id
 * :inputs :attachments :expected :task :shared). Unknown keys and values of the wrong
 * type are SPEC_INVALID errors naming the file and key.
 */
export function specFromEdn(text: string, file: string): SpecDraft {
  const value = readEdn(text, { file });
  if (!(value instanceof Map)) {
    throw specError(
      `Cannot read the spec "${file}": it is ${describe(value)}, expected a map`,
      'A spec is a map such as {:id "no" :inputs ["text"] :expected {"account" {:rule :exact}}}',
      { file },
    );
  }
  const at = (key: string) => `${file} :${key}`;
  const fail = (key: string, what: string, hint: string) =>
    specError(`Cannot read the spec "${file}": :${key} ${what}`, hint, { file, field: `:${key}` });
  const str = (key: string, v: EdnValue | undefined): string => {
    if (typeof v === "string") return v;
    if (v instanceof Keyword && key !== "task" && key !== "doc") return v.name;
    throw fail(key, `is ${describe(v)}, expected a string`, `Write :${key} "…"`);
  };
  const strList = (key: string, v: EdnValue | undefined): string[] => {
    if (!Array.isArray(v)) {
      throw fail(
        key,
        `is ${describe(v)}, expected a vector of column names`,
        `Write :${key} ["a" "b"]`,
      );
    }
    return v.map((x, i) => {
      const name = keyName(x);
      if (name === null) {
        throw fail(
          key,
          `element ${i + 1} is ${describe(x)}, expected a column name`,
          `Write :${key} ["a" "b"]`,
        );
      }
      return name;
    });
  };
  const draft: SpecDraft = { origin: {} };
  for (const [k, v] of value) {
    const name = k instanceof Keyword ? k.name : null;
    if (name === null || !(SPEC_KEYS as readonly string[]).includes(name)) {
      throw specError(
        `Cannot read the spec "${file}": unknown key ${
          k instanceof Keyword ? k.toString() : JSON.stringify(String(k))
        }`,
        `A spec has the keys ${SPEC_KEYS.map((s) => ":" + s).join(" ")}`,
        { file },
      );
    }
    switch (name) {
      case "name":
      case "title":
      case "doc":
      case "task":
      case "id":
        draft[name] = str(name, v);
        if (name === "id") draft.origin!.id = at("id");
        break;
      case "inputs":
      case "attachments":
        draft[name] = strList(name, v);
        draft.origin![name] = at(name);
        break;
      case "expected":
        draft.expected = expectedFromEdn(v, file);
        draft.origin!.expected = at("expected");
        break;
      case "shared": {
        if (!(v instanceof Map)) {
          throw fail(
            "shared",
            `is ${describe(v)}, expected a map from world path to text`,
            'Write :shared {"/docs/accounts.txt" "…"}',
          );
        }
        const shared = new Map<string, string>();
        for (const [p, t] of v) {
          if (typeof p !== "string" || typeof t !== "string") {
            throw fail(
              "shared",
              "holds an entry that is not a path string to a text string",
              'Write :shared {"/docs/accounts.txt" "…"}',
            );
          }
          shared.set(p, t);
        }
        draft.shared = shared;
        break;
      }
    }
  }
  return draft;
}

function expectedFromEdn(v: EdnValue | undefined, file: string): FieldSpec[] {
  const hint = 'Write :expected {"account" {:rule :exact :doc "…"} "amount" {:rule :number ' +
    ":tolerance 0.01}} (rules: " + RULES.join(", ") + ")";
  const fail = (what: string) =>
    specError(`Cannot read the spec "${file}": :expected ${what}`, hint, {
      file,
      field: ":expected",
    });
  if (!(v instanceof Map)) throw fail(`is ${describe(v)}, expected a map from column to rule`);
  const out: FieldSpec[] = [];
  for (const [k, spec] of v) {
    const field = keyName(k);
    if (field === null) throw fail(`has a key that is ${describe(k)}, expected a column name`);
    const ruleOf = (r: EdnValue | undefined): Rule => {
      if (r === undefined || r === null) return "exact";
      const name = r instanceof Keyword ? r.name : typeof r === "string" ? r : null;
      if (name === null || !(RULES as readonly string[]).includes(name)) {
        throw fail(`"${field}" has the rule ${name === null ? describe(r) : `"${name}"`}, unknown`);
      }
      return name as Rule;
    };
    if (spec instanceof Keyword || typeof spec === "string") {
      out.push({ field, rule: ruleOf(spec) });
      continue;
    }
    if (!(spec instanceof Map)) throw fail(`"${field}" is ${describe(spec)}, expected a map`);
    const fs: FieldSpec = { field, rule: "exact" };
    for (const [fk, fv] of spec) {
      const fname = fk instanceof Keyword ? fk.name : null;
      if (fname === null || !(FIELD_KEYS as readonly string[]).includes(fname)) {
        throw fail(`"${field}" has an unknown key (${FIELD_KEYS.map((s) => ":" + s).join(" ")})`);
      }
      if (fname === "rule") fs.rule = ruleOf(fv);
      else if (fname === "doc") {
        if (typeof fv !== "string") throw fail(`"${field}" :doc is ${describe(fv)}, expected text`);
        fs.doc = fv;
      } else {
        const n = asNumber(fv);
        if (n === null || !Number.isFinite(n) || n < 0) {
          throw fail(`"${field}" :tolerance is ${describe(fv)}, expected a number ≥ 0`);
        }
        fs.tolerance = n;
      }
    }
    if (fs.tolerance !== undefined && fs.rule !== "number") {
      throw fail(`"${field}" has a :tolerance, which applies to the number rule only`);
    }
    out.push(fs);
  }
  return out;
}

/**
 * Validates an assembled spec: a name, an id column, at least one input column and
 * one expected field; no column twice; no expected field that is also an input; check
 * names that are distinct and not `answer-present`; shared paths inside /.
 * Returns the complete spec (attachments and shared default to empty).
 */
export function completeSpec(draft: SpecDraft): CasePackSpec {
  const origin = draft.origin ?? {};
  const { name, id, inputs, expected } = requiredParts(draft);
  const attachments = (draft.attachments ?? []).map((c) => c.trim());
  refuseTwice(inputs, origin.inputs ?? "the inputs");
  refuseTwice(attachments, origin.attachments ?? "the attachments");
  refuseTwice(expected.map((f) => f.field), origin.expected ?? "the outcomes");
  checkOutcomes(expected, id, new Set([...inputs, ...attachments]));
  const shared = sharedFiles(draft.shared ?? new Map<string, string>());
  return {
    name,
    ...(draft.title !== undefined ? { title: draft.title } : {}),
    ...(draft.doc !== undefined ? { doc: draft.doc } : {}),
    id,
    inputs,
    attachments,
    expected,
    ...(draft.task !== undefined && draft.task.trim() !== "" ? { task: draft.task } : {}),
    shared,
    origin,
  };
}

/** The parts a spec cannot do without (name, id column, inputs, outcomes), trimmed. */
function requiredParts(draft: SpecDraft) {
  if (!draft.name || draft.name.trim() === "") {
    throw specError("Cannot build the case pack: it has no name", "Pass --name NAME or --out DIR");
  }
  if (!draft.id || draft.id.trim() === "") {
    throw specError(
      "Cannot build the case pack: no column names a case",
      "Pass --id COLUMN (or :id in the spec), e.g. --id invoice_no",
    );
  }
  const inputs = (draft.inputs ?? []).map((c) => c.trim());
  if (inputs.length === 0) {
    throw specError(
      "Cannot build the case pack: it has no input columns",
      "Pass --inputs a,b (or :inputs in the spec): the columns an agent sees in /docs/case.edn " +
        "and that tell cases apart",
    );
  }
  const expected = (draft.expected ?? []).map((f) => ({ ...f, field: f.field.trim() }));
  if (expected.length === 0) {
    throw specError(
      "Cannot build the case pack: it expects no outcome",
      "Pass --outcome column:rule (once per column), e.g. --outcome account:exact",
    );
  }
  return { name: draft.name.trim(), id: draft.id.trim(), inputs, expected };
}

/** Refuses a column named twice in one list (`where`: the list, as the user gave it). */
function refuseTwice(list: string[], where: string): void {
  const seen = new Set<string>();
  for (const c of list) {
    if (seen.has(c)) {
      throw specError(
        `Cannot build the case pack: column "${c}" is named twice in ${where}`,
        "Name each column once",
      );
    }
    seen.add(c);
  }
}

/**
 * Refuses an outcome the agent would see (the id column, an input), a tolerance outside
 * the number rule, and check names that are reserved or shared.
 */
function checkOutcomes(
  expected: CasePackSpec["expected"],
  idColumn: string,
  inputSet: Set<string>,
): void {
  const keys = new Map<string, string>();
  for (const f of expected) {
    if (f.field === idColumn) {
      throw specError(
        `Cannot build the case pack: column "${f.field}" is both the id and an expected outcome`,
        "The case id reaches the agent (DVERGR_CASE, /docs/case.edn, the world's paths), so it " +
          "would see the answer; expect another column",
      );
    }
    if (inputSet.has(f.field)) {
      throw specError(
        `Cannot build the case pack: column "${f.field}" is both an input and an expected outcome`,
        "An agent would see the answer in its case; drop it from --inputs/--attachments or " +
          "from --outcome",
      );
    }
    if (
      f.tolerance !== undefined &&
      (f.rule !== "number" || !(f.tolerance >= 0) || !Number.isFinite(f.tolerance))
    ) {
      throw specError(
        `Cannot build the case pack: outcome "${f.field}" has a tolerance but the rule ${f.rule}`,
        "A tolerance (≥ 0) applies to the number rule only",
      );
    }
    const key = casepackCheckKey(f.field);
    if (key === "answer-present" || key === "" || key === "-") {
      throw specError(
        `Cannot build the case pack: outcome "${f.field}" would have the check name "${key}"`,
        "Rename the column (its check name is it lower-cased, non-alphanumerics as -)",
      );
    }
    const other = keys.get(key);
    if (other !== undefined) {
      throw specError(
        `Cannot build the case pack: outcomes "${other}" and "${f.field}" share the check name "${key}"`,
        "Rename one of the columns (check names are lower-cased, non-alphanumerics as -)",
      );
    }
    keys.set(key, f.field);
  }
}

/** The shared files at world paths (a leading "/" added), none where case.edn goes. */
function sharedFiles(draft: Map<string, string>): Map<string, string> {
  const shared = new Map<string, string>();
  for (const [p, text] of draft) {
    const world = p.startsWith("/") ? p : "/" + p;
    const why = relativePathProblem("fixtures" + world);
    if (why) {
      throw specError(
        `Cannot build the case pack: the shared file "${p}" ${why}`,
        'Shared files are world paths such as "/docs/accounts.txt"',
      );
    }
    if (world === "/docs/case.edn") {
      throw specError(
        'Cannot build the case pack: a shared file at "/docs/case.edn" would be hidden by ' +
          "every case's own case.edn",
        "Give the shared file another name",
      );
    }
    shared.set(world, text);
  }
  const conflict = fileDirConflict([...shared.keys(), "/docs/case.edn"]);
  if (conflict) {
    throw specError(
      `Cannot build the case pack: shared file ${conflictText(conflict)}`,
      "A world path is either a file or a directory; rename one of them",
    );
  }
  return shared;
}

function normColumn(s: string): string {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * Checks that every column the spec names is in the table; else a SPEC_INVALID error
 * naming the column, where it was named, the table's columns and a near match.
 */
export function checkSpecColumns(spec: CasePackSpec, table: Table): void {
  // JSON lines and EDN tables without rows have no columns either: nothing to check.
  if (table.rows.length === 0 && table.format !== "csv" && table.format !== "tsv") return;
  const have = new Set(table.columns);
  const origin = spec.origin ?? {};
  const named: [string, string][] = [
    [spec.id, origin.id ?? "the id"],
    ...spec.inputs.map((c): [string, string] => [c, origin.inputs ?? "the inputs"]),
    ...spec.attachments.map((c): [string, string] => [c, origin.attachments ?? "the attachments"]),
    ...spec.expected.map((f): [string, string] => [f.field, origin.expected ?? "the outcomes"]),
  ];
  for (const [column, where] of named) {
    if (have.has(column)) continue;
    const near = table.columns.find((c) => normColumn(c) === normColumn(column));
    const list = table.columns.map((c) => JSON.stringify(c)).join(", ");
    throw specError(
      `Cannot build the case pack: column "${column}" (${where}) is not in "${table.file}"`,
      near !== undefined
        ? `Did you mean "${near}"? The table's columns are: ${list}`
        : `The table's columns are: ${list}`,
      { column, file: table.file },
    );
  }
  // An outcome column that repeats the id column row for row leaks the answer just as well.
  const idAt = table.columns.indexOf(spec.id);
  for (const f of spec.expected) {
    const at = table.columns.indexOf(f.field);
    const rows = table.rows.filter((r) => !isBlankCell(r.values[at]));
    if (
      rows.length > 0 &&
      rows.every((r) =>
        caseId(r.values[at]) !== null && caseId(r.values[at]) === caseId(r.values[idAt])
      )
    ) {
      throw specError(
        `Cannot build the case pack: outcome column "${f.field}" holds the case id of every row`,
        "The case id reaches the agent (DVERGR_CASE, /docs/case.edn), so it would see the " +
          "answer; expect another column",
        { column: f.field, file: table.file },
      );
    }
  }
}
