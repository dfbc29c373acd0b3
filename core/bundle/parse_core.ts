/**
 * The shape check and construction of a bundle from its file map. Pure: no I/O.
 *
 * Unlike the earlier system (docs/compatibility.md §2), every EDN file is parsed and
 * shape-checked, a non-map workflow.edn is a problem, calibration names only cases
 * that exist, and every problem is reported at once with its file and line.
 *
 * The EDN files' schemas are checked by a SchemaCheck: core/bundle/parse.ts's (zod's issues
 * as problems) or, without loading zod, only their success path (analyseAccepted(), which
 * `dvergr check` tries first: core/engine/check.ts).
 */
import { readReviewSpec } from "../review/spec.ts";
import { DvergrError } from "../errors.ts";
import { isKeywordName, readEdn } from "../edn/read.ts";
import { toPlain } from "../edn/plain.ts";
import { Keyword } from "../edn/values.ts";
import type { EdnValue } from "../edn/values.ts";
import { contentId } from "./content_id.ts";
import {
  conflictText,
  type FileBundle,
  fileDirConflict,
  type FileMap,
  relativePathProblem,
} from "./file_map.ts";
import { sandboxNameProblems } from "./sandbox_names.ts";
import { generatorOf, readGeneratedCaseId } from "./generator.ts";
import {
  acceptSchema,
  type CalibrationEdn,
  type SchemaName,
  type WorkflowEdn,
} from "./schema_spec.ts";
import type {
  Bundle,
  BundleCase,
  BundleProblem,
  Calibration,
  WorkflowDefinition,
} from "./types.ts";

/**
 * Checks `value`, the plain form of `file` (`text`), against the schema `name`: what the
 * schema makes of it, or null with its problems added to `problems`.
 */
export type SchemaCheck = (
  name: SchemaName,
  file: string,
  text: string,
  value: unknown,
  problems: BundleProblem[],
) => unknown;

/** A bundle's files read and shape-checked: every problem, and what was read. */
export interface Analysis {
  problems: BundleProblem[];
  parsed: Parsed;
}

/** Thrown by acceptOnly: a schema could not decide without zod. */
const UNDECIDED = new Error("a schema is undecided");

/** The schemas' success path only (acceptSchema of core/bundle/schema_spec.ts). */
const acceptOnly: SchemaCheck = (name, _file, _text, value) => {
  const out = acceptSchema(name, value);
  if (out === null) throw UNDECIDED;
  return out;
};

/**
 * The analysis of a bundle whose EDN files every schema surely accepts, without zod's
 * modules; null when some schema is undecided (analyseBundle() with the zod check decides).
 */
export function analyseAccepted(files: FileMap): Analysis | null {
  try {
    return analyseBundle(files, acceptOnly);
  } catch (e) {
    if (e === UNDECIDED) return null;
    throw e;
  }
}

/**
 * The bundle of an analysis of its files. Throws a BUNDLE_INVALID DvergrError listing every
 * problem (also as `details.problems`).
 */
export function bundleOf(fb: FileBundle, { problems, parsed }: Analysis): Bundle {
  if (problems.length > 0 || !parsed.workflow) {
    throw new DvergrError(
      "BUNDLE_INVALID",
      `Bundle "${fb.name}" is not well formed: ${problems.map(formatProblem).join("; ")}`,
      {
        hint: `Run \`dvergr check\` on it to list every problem`,
        details: { bundle: fb.name, problems },
      },
    );
  }
  const files = fb.files;
  const w = parsed.workflow;
  const definition: WorkflowDefinition = {
    title: w.title,
    ...(w.doc !== undefined ? { doc: w.doc } : {}),
    params: w.params ?? {},
    task: w.task,
    profile: w.profile ?? "developer",
    capture: w.capture ?? ["/out"],
    ...(w["timeout-ms"] !== undefined ? { timeoutMs: w["timeout-ms"] } : {}),
    fetched: w.fetched ?? false,
    ...(w.judge
      ? { judge: { model: w.judge.model, maxRequests: w.judge["max-requests"] ?? 20 } }
      : {}),
    ...(w["allowed-sources"] ? { allowedSources: w["allowed-sources"] } : {}),
    ...(w["blocked-sources"] ? { blockedSources: w["blocked-sources"] } : {}),
    ...(w.web ? { web: w.web } : {}),
    ...(w.review ? { review: w.review } : {}),
  };
  const c = parsed.calibration;
  const calibration: Calibration | null = c
    ? {
      ...(c.case !== undefined ? { case: c.case } : {}),
      reference: c.reference ?? null,
      fetched: c.fetched ?? {},
      judgements: c.judgements ?? {},
      damaged: c.damaged ?? {},
      reviews: c.reviews ?? {},
    }
    : null;
  return {
    name: fb.name,
    id: contentId(files),
    files,
    definition,
    ...checkerOf(files),
    gold: parsed.gold,
    calibration,
    certification: (parsed.certification as Record<string, unknown> | null) ?? null,
    web: w.web === "frozen"
      ? (parsed.web as Record<string, { title: string; body: string }> | null)
      : null,
    fixtures: fixturesOf(files, "fixtures/"),
    cases: parsed.cases,
  };
}

/** The checker a bundle runs: checker.js when it has one (even beside checker.clj). */
function checkerOf(files: FileMap): Pick<Bundle, "checker" | "checkerFile"> {
  const js = files.get("checker.js");
  if (js !== undefined) return { checker: js, checkerFile: "checker.js" };
  return { checker: files.get("checker.clj") ?? "", checkerFile: "checker.clj" };
}

/** A problem as one line: `file line L, column C: field: message`. */
export function formatProblem(p: BundleProblem): string {
  const at = p.line !== undefined
    ? ` line ${p.line}${p.column !== undefined ? `, column ${p.column}` : ""}`
    : "";
  return `${p.file}${at}: ${p.field ? `${p.field}: ` : ""}${p.message}`;
}

export interface Parsed {
  workflow: WorkflowEdn | null;
  calibration: CalibrationEdn | null;
  /** calibration.edn's plain value even when its schema fails, to check :case anyway. */
  calibrationPlain: Record<string, unknown> | null;
  certification: unknown;
  web: unknown;
  gold: unknown;
  cases: BundleCase[];
}

/** Reads and shape-checks a bundle's files, its EDN files against the schemas by `check`. */
export function analyseBundle(files: FileMap, check: SchemaCheck): Analysis {
  const problems: BundleProblem[] = [];
  const parsed: Parsed = {
    workflow: null,
    calibration: null,
    calibrationPlain: null,
    certification: null,
    web: null,
    gold: null,
    cases: [],
  };

  for (const path of files.keys()) {
    const why = relativePathProblem(path);
    if (why) problems.push({ file: path, message: `path ${why}` });
  }
  const conflict = fileDirConflict(files.keys());
  if (conflict) {
    problems.push({ file: conflict.file, message: `path ${conflictText(conflict)}` });
  }

  // workflow.edn
  const wfText = files.get("workflow.edn");
  if (wfText === undefined) {
    problems.push({
      file: "workflow.edn",
      message: "workflow.edn is missing: every bundle needs one with at least :title and :task",
    });
  } else {
    const raw = readEdnProblem("workflow.edn", wfText, problems);
    if (raw !== undefined) {
      if (!(raw instanceof Map)) {
        problems.push({
          file: "workflow.edn",
          message: `expected a map such as {:title "…" :task "…"}, found ${describeEdn(raw)}`,
        });
      } else if (keywordKeysOnly("workflow.edn", wfText, raw, problems)) {
        const workflow = check(
          "workflow",
          "workflow.edn",
          wfText,
          toPlain(raw),
          problems,
        ) as WorkflowEdn | null;
        // The schema sees plain values, where :foo and "foo" look alike; tell them apart here.
        parsed.workflow = textOrKeywordOk(wfText, raw, problems) ? workflow : null;
      }
    }
  }

  // the checker: checker.js, or the earlier system's checker.clj
  if (!files.has("checker.js") && !files.has("checker.clj")) {
    problems.push({
      file: "checker.js",
      message:
        "checker.js is missing: an ES module exporting check(input) grades each attempt (or checker.clj, a Clojure namespace with `check`)",
    });
  }

  problems.push(...worldSourceProblems(files));

  // other EDN files
  const gold = files.get("gold.edn");
  if (gold !== undefined) {
    const v = readEdnProblem("gold.edn", gold, problems);
    if (v !== undefined) parsed.gold = toPlain(v);
  }
  readCalibration(files.get("calibration.edn"), parsed, problems, check);
  const cert = files.get("certification.edn");
  if (cert !== undefined) {
    const v = readEdnProblem("certification.edn", cert, problems);
    if (v !== undefined) {
      parsed.certification = check(
        "certification",
        "certification.edn",
        cert,
        toPlain(v),
        problems,
      );
    }
  }
  const web = files.get("web.edn");
  if (web !== undefined) {
    const v = readEdnProblem("web.edn", web, problems);
    if (v !== undefined) parsed.web = check("web", "web.edn", web, toPlain(v), problems);
  }
  if (parsed.workflow?.web === "frozen" && web === undefined) {
    problems.push({
      file: "workflow.edn",
      field: ":web",
      message: "workflow.edn says :web :frozen but web.edn is missing",
    });
  }

  if (wfText !== undefined && parsed.workflow?.review) {
    for (const p of readReviewSpec(parsed.workflow.review).problems) {
      const tokens = p.field.split(" ").filter((t) => t.startsWith(":"));
      problems.push({ file: "workflow.edn", line: lineOf(wfText, tokens), ...p });
    }
  }
  parsed.cases = readCases(files, problems);
  worldConflicts(files, parsed.cases, problems);
  const captureLine = wfText === undefined ? undefined : lineOf(wfText, [":capture"]);
  problems.push(...sandboxNameProblems(files, parsed.workflow?.capture ?? [], captureLine));
  checkCalibrationRefs(files, parsed, problems);

  problems.sort((a, b) =>
    a.file === b.file ? (a.line ?? 0) - (b.line ?? 0) : a.file < b.file ? -1 : 1
  );
  return { problems, parsed };
}

/** Where the worlds come from: fixtures/, cases/ or generator.js (beside fixtures/, not cases/). */
function worldSourceProblems(files: FileMap): BundleProblem[] {
  const paths = [...files.keys()];
  const generator = generatorOf({ files });
  if (generator && paths.some((p) => p.startsWith("cases/"))) {
    return [{
      file: generator.file,
      message: `a bundle's worlds come from cases/ or from ${generator.file}, not both: remove ` +
        `one (fixtures/ beside ${generator.file} is shared by every generated world)`,
    }];
  }
  if (!generator && !paths.some((p) => p.startsWith("fixtures/") || p.startsWith("cases/"))) {
    return [{
      file: "fixtures/",
      message: "fixtures/ is empty and there are no cases/ (nor a generator.js): every " +
        "attempt's world would start with nothing",
    }];
  }
  return [];
}

/** Reads calibration.edn (when the bundle has one) into `parsed`, its problems into `problems`. */
function readCalibration(
  cal: string | undefined,
  parsed: Parsed,
  problems: BundleProblem[],
  check: SchemaCheck,
): void {
  if (cal === undefined) return;
  const v = readEdnProblem("calibration.edn", cal, problems);
  if (v === undefined) return;
  if (!(v instanceof Map)) {
    problems.push({
      file: "calibration.edn",
      message: `expected a map {:reference {…} :damaged {…}}, found ${describeEdn(v)}`,
    });
    return;
  }
  parsed.calibrationPlain = toPlain(v) as Record<string, unknown>;
  parsed.calibration = check(
    "calibration",
    "calibration.edn",
    cal,
    parsed.calibrationPlain,
    problems,
  ) as CalibrationEdn | null;
}

/**
 * A world is the shared fixtures overlaid by a case's: a path that is a file in one and a
 * directory in the other cannot be made (the first such case is named).
 */
function worldConflicts(files: FileMap, cases: BundleCase[], problems: BundleProblem[]): void {
  const shared = Object.keys(fixturesOf(files, "fixtures/"));
  for (const c of cases) {
    const conflict = fileDirConflict([...shared, ...Object.keys(c.fixtures)]);
    if (conflict) {
      problems.push({
        file: `cases/${c.id}/`,
        message: `the world of case "${c.id}" (fixtures/ overlaid by the case's) cannot be ` +
          `made: world path ${
            conflictText({
              file: "/" + conflict.file.replace(/^\//, ""),
              inside: "/" + conflict.inside.replace(/^\//, ""),
            })
          }`,
      });
      return;
    }
  }
}

function readCases(files: FileMap, problems: BundleProblem[]): BundleCase[] {
  const byId = new Map<string, BundleCase>();
  for (const [path, text] of files) {
    if (!path.startsWith("cases/")) continue;
    const rest = path.slice("cases/".length);
    const slash = rest.indexOf("/");
    if (slash <= 0) {
      problems.push({
        file: path,
        message: "files under cases/ belong in a case directory: cases/<id>/…",
      });
      continue;
    }
    const id = rest.slice(0, slash);
    const inner = rest.slice(slash + 1);
    const c = byId.get(id) ?? { id, gold: null, fixtures: {} };
    byId.set(id, c);
    if (inner === "gold.edn") {
      const v = readEdnProblem(path, text, problems);
      if (v !== undefined) c.gold = toPlain(v);
    } else if (inner.startsWith("fixtures/")) {
      c.fixtures["/" + inner.slice("fixtures/".length)] = text;
    }
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function checkCalibrationRefs(files: FileMap, parsed: Parsed, problems: BundleProblem[]): void {
  const text = files.get("calibration.edn") ?? "";
  const named = parsed.calibrationPlain?.case;
  if (typeof named === "string" && generatorOf({ files }) !== null) {
    if (readGeneratedCaseId(named) === null) {
      problems.push({
        file: "calibration.edn",
        field: ":case",
        line: lineOf(text, [":case"]),
        message: `names "${named}", which is no generated world: write gen-<split>-<index> ` +
          `such as "gen-test-0000" (the world generate gives for that split and index)`,
      });
    }
  } else if (typeof named === "string" && !parsed.cases.some((k) => k.id === named)) {
    problems.push({
      file: "calibration.edn",
      field: ":case",
      line: lineOf(text, [":case"]),
      message: `names case "${named}", which the bundle does not have (no cases/${named}/)`,
    });
  }
  const c = parsed.calibration;
  if (!c) return;
  const worldPaths = (where: string[], m: Record<string, string> | undefined) => {
    for (const p of Object.keys(m ?? {})) {
      if (!p.startsWith("/") || relativePathProblem(p.slice(1)) !== null) {
        problems.push({
          file: "calibration.edn",
          field: where.join(" "),
          line: lineOf(text, where),
          message: `"${p}" is not an absolute world path such as "/out/answer.edn"`,
        });
      }
    }
  };
  worldPaths([":reference"], c.reference);
  for (const [name, v] of Object.entries(c.damaged ?? {})) {
    worldPaths([":damaged", `:${name}`, ":files"], v.files);
  }
}

function fixturesOf(files: FileMap, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, t] of files) if (p.startsWith(prefix)) out["/" + p.slice(prefix.length)] = t;
  return out;
}

/** Reads one EDN file, turning a syntax error into a located problem. */
function readEdnProblem(
  file: string,
  text: string,
  problems: BundleProblem[],
): EdnValue | undefined {
  try {
    return readEdn(text, { file });
  } catch (e) {
    if (e instanceof DvergrError && e.code === "EDN_SYNTAX") {
      const d = e.details ?? {};
      const line = typeof d.line === "number" ? d.line : undefined;
      const column = typeof d.column === "number" ? d.column : undefined;
      const reason = typeof d.reason === "string"
        ? d.reason
        : e.message.replace(/^.*?line \d+, column \d+: /, "");
      problems.push({ file, line, column, message: `not EDN: ${reason}` });
      return undefined;
    }
    throw e;
  }
}

function keywordKeysOnly(
  file: string,
  text: string,
  m: Map<EdnValue, EdnValue>,
  problems: BundleProblem[],
): boolean {
  let ok = true;
  for (const k of m.keys()) {
    if (!(k instanceof Keyword)) {
      ok = false;
      const printed = typeof k === "string" ? `"${k}"` : String(k);
      problems.push({
        file,
        line: lineOf(text, [printed]),
        message: `key ${printed} should be a keyword such as :${
          typeof k === "string" ? k : "title"
        }`,
      });
    }
  }
  return ok;
}

/** workflow.edn keys whose values are text, and those whose values are keywords. */
const TEXT_KEYS = ["title", "doc", "task", "profile"];
const TEXT_VECTOR_KEYS = ["capture", "allowed-sources", "blocked-sources"];
const KEYWORD_KEYS = ["web"];

/**
 * Refuses a keyword where workflow.edn wants text (`:title :foo`) and text where it wants
 * a keyword (`:web "frozen"`), which the plain form cannot tell apart.
 */
function textOrKeywordOk(text: string, m: Map<EdnValue, EdnValue>, problems: BundleProblem[]) {
  const before = problems.length;
  const wrong = (key: string, message: string) =>
    problems.push({
      file: "workflow.edn",
      field: `:${key}`,
      line: lineOf(text, [`:${key}`]),
      message,
    });
  for (const key of TEXT_KEYS) {
    const v = m.get(Keyword.of(key));
    if (v instanceof Keyword) {
      const text = v.ns === null ? v.name : `${v.ns}/${v.name}`;
      wrong(key, `expected a string, found the keyword ${v}: write "${text}" (in double quotes)`);
    }
  }
  for (const key of TEXT_VECTOR_KEYS) {
    const v = m.get(Keyword.of(key));
    if (Array.isArray(v) && v.some((x) => x instanceof Keyword)) {
      wrong(key, "expected a vector of strings, found a keyword in it");
    }
  }
  for (const key of KEYWORD_KEYS) {
    const v = m.get(Keyword.of(key));
    if (typeof v === "string") {
      wrong(key, `expected a keyword such as :${v}, found the string "${v}"`);
    }
  }
  return problems.length === before;
}

/** A map key as the EDN it was written as: `:title` for a keyword name, else `"/out/a"`. */
export function fieldName(key: string): string {
  return isKeywordName(key) && !key.includes("/") ? `:${key}` : JSON.stringify(key);
}

/**
 * The 1-based line where a field's keys appear in order in the text, found by
 * searching each token after the previous one: good enough to point a person at it.
 */
export function lineOf(text: string, tokens: string[]): number | undefined {
  let at = 0;
  let found = -1;
  for (const t of tokens) {
    const re = new RegExp(`${escapeRe(t)}(?![A-Za-z0-9*+!_?<>=/.-])`, "g");
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) break;
    found = m.index;
    at = m.index + t.length;
  }
  return found < 0 ? undefined : text.slice(0, found).split("\n").length;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function describeEdn(v: EdnValue): string {
  if (v === null) return "nil (an empty file?)";
  if (Array.isArray(v)) return "a vector";
  if (v instanceof Map) return "a map";
  if (typeof v === "string") return "a string";
  if (typeof v === "number" || typeof v === "bigint") return "a number";
  if (typeof v === "boolean") return "a boolean";
  if (v instanceof Keyword) return `the keyword ${v}`;
  return "a " + (v as object).constructor.name.replace(/^Edn/, "").toLowerCase();
}
