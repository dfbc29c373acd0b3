/**
 * One benchmark request for the CLI and MCP: a table of its fields (the flag of
 * `dvergr benchmark`, the argument of catalog_benchmark, how each is written, its doc),
 * from which the CLI's options, parsing and help and the op's zod schema are derived, and
 * one function, benchmarkRequestOf(), that turns what either surface was given into the
 * engine's request. A new field is one entry of BENCHMARK_FIELDS (and its use in
 * benchmarkRequestOf() when the engine takes it).
 */
import { DvergrError, usageError } from "../errors.ts";
import { type RangeName, readRangeText } from "../ranges.ts";
import { limitsFrom, type ResourceLimits } from "../bench/resource_limits.ts";
import { PARAM_TEXTS_DOC, paramRuleHelp, readParamFlag, readParamTexts } from "../bundle/params.ts";
import type { CandidateKindForms, CandidateKinds, CandidateSpec } from "../ports/candidate_kind.ts";
import { sourceProblem, type UserSources } from "../web/policy.ts";
import { type Split, SPLITS } from "../bundle/generator.ts";

/** How a field is written: as text on the command line, as JSON over MCP. */
export type FieldValue =
  /** A number in a range of core/ranges.ts; MCP may allow less (`mcpMax`). */
  | { type: "number"; range: RangeName; mcpMax?: number }
  | { type: "text" }
  /** One of a few words. */
  | { type: "choice"; values: readonly string[] }
  /**
   * Texts: a repeatable flag (`repeat`) whose values may be comma-separated lists
   * (`commas`, naming an item for the error of an empty one); an array over MCP.
   */
  | { type: "list"; repeat: boolean; commas?: string }
  | { type: "switch" }
  /** `--param K=V` (repeatable) on the command line, `{K: "V"}` over MCP. */
  | { type: "params" };

/** One field of the benchmark request. */
export interface BenchmarkField {
  value: FieldValue;
  /** The flag of `dvergr benchmark` (without `--`); null: not on the command line. */
  flag: string | null;
  /** The argument of catalog_benchmark; null: not over MCP. */
  arg: string | null;
  /** The flag's value in `--help` (e.g. `N`, `MS`). */
  meta?: string;
  /**
   * What it is, for `--help` and the MCP schema; `{key}` names another field as each
   * surface does (`--stop-when-decided`, `stop_when_decided`). Lines are `--help`'s lines;
   * MCP joins them.
   */
  doc: string;
  /** The MCP argument's doc, where it differs from the flag's. */
  mcpDoc?: string;
  /** The section of `--help` it is listed in (default "options"). */
  section?: "candidates" | "options";
}

/**
 * Every field of a benchmark request, in the order `--help` lists them. Keys are the
 * request's names; flags and arguments are how each surface spells them.
 */
export const BENCHMARK_FIELDS = {
  candidates: {
    value: { type: "list", repeat: true },
    flag: "candidate",
    arg: "candidates",
    meta: "SPEC",
    doc: "repeatable; never split on commas:",
    section: "candidates",
  },
  models: {
    value: { type: "list", repeat: true, commas: "model" },
    flag: "models",
    arg: "models",
    meta: "M1,M2",
    doc: "model ids or aliases, comma-separated",
    mcpDoc: "Model ids or aliases",
    section: "candidates",
  },
  repetitions: {
    value: { type: "number", range: "repetitions", mcpMax: 10 },
    flag: "repetitions",
    arg: "repetitions",
    meta: "N",
    doc: "attempts per candidate per case (default 1)",
  },
  cases: {
    value: { type: "number", range: "cases" },
    flag: "cases",
    arg: "cases",
    meta: "N",
    doc: "the first N cases of the fixed shuffle (seed 20261001); with\n" +
      "generator.js: the N worlds it makes (0..N-1 of {split})",
    mcpDoc: "The first N cases of the fixed shuffle (default: all); with generator.js: " +
      "the N worlds it makes (0..N-1 of split; needed)",
  },
  split: {
    value: { type: "choice", values: SPLITS },
    flag: "split",
    arg: "split",
    meta: "train|test",
    doc: "with generator.js: which split's worlds (default test)",
  },
  seed: {
    value: { type: "number", range: "seed" },
    flag: "seed",
    arg: "seed",
    meta: "S",
    doc: "with generator.js: the seed each world's seed is derived from\n(default 20261001)",
  },
  caseIds: {
    value: { type: "list", repeat: false, commas: "id" },
    flag: "case-ids",
    arg: "case_ids",
    meta: "A,B",
    doc: "exactly these cases",
  },
  parallel: {
    value: { type: "number", range: "parallel", mcpMax: 32 },
    flag: "parallel",
    arg: "parallel",
    meta: "N",
    doc: "cells at once (default 4)",
  },
  timeoutMs: {
    value: { type: "number", range: "timeoutMs", mcpMax: 3_600_000 },
    flag: "timeout-ms",
    arg: "timeout_ms",
    meta: "MS",
    doc: "per attempt (default: the bundle's :timeout-ms, else 600000)",
    mcpDoc: "Time limit per attempt (default: the bundle's :timeout-ms, else 600000)",
  },
  budgetDollars: {
    value: { type: "number", range: "budgetDollars", mcpMax: 100 },
    flag: "budget-dollars",
    arg: "budget_dollars",
    meta: "USD",
    doc: "per attempt (default 0.50)",
    mcpDoc: "Budget per attempt in dollars (default 0.50)",
  },
  params: {
    value: { type: "params" },
    flag: "param",
    arg: "params",
    meta: "K=V",
    doc: `a task/checker parameter (repeatable):\n${paramRuleHelp(0)}`,
    mcpDoc: PARAM_TEXTS_DOC,
  },
  baseline: {
    value: { type: "text" },
    flag: "baseline",
    arg: "baseline",
    meta: "NAME",
    doc: "the candidate the others are compared against",
  },
  stopWhenDecided: {
    value: { type: "switch" },
    flag: "stop-when-decided",
    arg: "stop_when_decided",
    doc: "with {baseline}: stop comparing a candidate once an anytime-valid\n" +
      "confidence sequence of its paired reward difference to the baseline\n" +
      "excludes 0 (decided) or lies inside ±delta (equivalent); its cells\n" +
      "still to run are skipped as not needed",
  },
  delta: {
    value: { type: "number", range: "delta" },
    flag: "delta",
    arg: "delta",
    meta: "D",
    doc: "the equivalence margin (default 0.02; 0 never stops as equivalent)",
    mcpDoc: "With stop_when_decided: the equivalence margin (default 0.02; 0 never stops " +
      "as equivalent)",
  },
  alpha: {
    value: { type: "number", range: "alpha" },
    flag: "alpha",
    arg: "alpha",
    meta: "A",
    doc: "the error level of the sequences (default 0.05)",
    mcpDoc: "With stop_when_decided: the error level of the sequences (default 0.05)",
  },
  allowSources: {
    value: { type: "list", repeat: true, commas: "host" },
    flag: "allow-sources",
    arg: "allow_sources",
    meta: "H1,H2",
    doc: "only these hosts (and their subdomains) may be read, within what\n" +
      "the bundle allows: a user's sources narrow the bundle's web policy,\n" +
      "never widen it nor give a web to a bundle without one",
    mcpDoc: "Host names: only these (and their subdomains) may be read, within what the " +
      "bundle allows (a user's sources narrow the bundle's web policy, never widen it nor " +
      "give a web to a bundle without one)",
  },
  blockSources: {
    value: { type: "list", repeat: true, commas: "host" },
    flag: "block-sources",
    arg: "block_sources",
    meta: "H1,H2",
    doc: "hosts (and their subdomains) never read, besides the bundle's\n" +
      ":blocked-sources; both flags compose with <home>/web-policy.edn",
    mcpDoc: "Host names never read (nor their subdomains), besides the bundle's " +
      ":blocked-sources; both compose with the home's web-policy.edn",
  },
  mounts: {
    value: { type: "list", repeat: true },
    flag: "mount",
    arg: null,
    meta: "DIR",
    doc: "a read-only directory for command candidates (repeatable)",
  },
  memoryMiB: {
    value: { type: "number", range: "memoryMiB" },
    flag: "memory-mib",
    arg: "memory_mib",
    meta: "N",
    doc: "memory of a command candidate's processes (default 4096)",
    mcpDoc: "Memory of a command candidate's processes in MiB (default 4096)",
  },
  worldMiB: {
    value: { type: "number", range: "worldMiB" },
    flag: "world-mib",
    arg: "world_mib",
    meta: "N",
    doc: "bytes it may write under each writable world directory and\n/tmp (default 1024)",
    mcpDoc: "MiB a command candidate may write under each writable world directory and " +
      "/tmp (default 1024)",
  },
  processes: {
    value: { type: "number", range: "processes" },
    flag: "max-processes",
    arg: "max_processes",
    meta: "N",
    doc: "its processes and threads at once (default 512)",
    mcpDoc: "Processes and threads of a command candidate at once (default 512)",
  },
  openFiles: {
    value: { type: "number", range: "openFiles" },
    flag: "open-files",
    arg: "open_files",
    meta: "N",
    doc: "open files per process (default 1024)",
    mcpDoc: "Open files per process of a command candidate (default 1024)",
  },
  home: {
    value: { type: "text" },
    flag: "home",
    arg: null,
    meta: "DIR",
    doc: "the home (default: $DVERGR_HOME, else workflow-runs/<bundle>;\n" +
      "for ROOM/NAME, else .dvergr)",
  },
  store: {
    value: { type: "text" },
    flag: "store",
    arg: null,
    meta: "URL",
    doc: "keep the experiment in a PostgreSQL store shared by workers\n" +
      "(postgres://USER@HOST:PORT/DATABASE; default: $DVERGR_STORE): its\n" +
      "cells are open to `dvergr worker` on any machine while this\n" +
      "command runs them too; the room stays in the home",
  },
  blobs: {
    value: { type: "text" },
    flag: "blobs",
    arg: null,
    meta: "URL",
    doc: "with --store: keep its blobs (evidence, bundle files) in this S3\n" +
      "bucket, s3://BUCKET/PREFIX (default: $DVERGR_BLOBS; credentials,\n" +
      "region and endpoint from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,\n" +
      "AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3)",
  },
  enqueue: {
    value: { type: "switch" },
    flag: "enqueue",
    arg: null,
    doc: "with --store: only plan the experiment into the store (the\n" +
      "bundle's files go with it) and print its id; workers run it",
  },
  report: {
    value: { type: "text" },
    flag: "report",
    arg: null,
    meta: "FILE",
    doc: "where to write the Markdown report, with an HTML page beside it\n" +
      "(default <home>/reports/<experiment>/report.md: one per\n" +
      "experiment; `dvergr report` writes any of them again)",
  },
  junit: {
    value: { type: "text" },
    flag: "junit",
    arg: null,
    meta: "FILE",
    doc: "also write JUnit XML for CI: one test case per cell (a failed,\n" +
      "crashed or timed-out attempt is a failure, a fault an error)",
  },
  check: {
    value: { type: "switch" },
    flag: "check",
    arg: null,
    doc: "only calibrate the bundle (prints {:ok? … :problems […]})",
  },
  json: {
    value: { type: "switch" },
    flag: "json",
    arg: null,
    doc: "print the scorecard as JSON",
  },
} as const satisfies Record<string, BenchmarkField>;

export type BenchmarkFieldName = keyof typeof BENCHMARK_FIELDS;

type ValueOf<V extends FieldValue> = V extends { type: "number" } ? number
  : V extends { type: "text" } ? string
  : V extends { type: "choice"; values: readonly (infer W)[] } ? W
  : V extends { type: "list" } ? string[]
  : V extends { type: "switch" } ? boolean
  : Record<string, string>;

/**
 * What a benchmark was given, by field, whichever surface gave it: numbers read, lists
 * split, params as their texts. Absent: not given.
 */
export type BenchmarkInput = {
  -readonly [K in BenchmarkFieldName]?: ValueOf<(typeof BENCHMARK_FIELDS)[K]["value"]>;
};

const FIELDS = Object.entries(BENCHMARK_FIELDS) as [BenchmarkFieldName, BenchmarkField][];

/** Which surface a request came from: names and refusals differ, the request does not. */
export type Surface = "cli" | "mcp";

/** A field as a surface names it: `--stop-when-decided` or `stop_when_decided`. */
export function fieldName(key: BenchmarkFieldName, surface: Surface): string {
  const f: BenchmarkField = BENCHMARK_FIELDS[key];
  return surface === "cli" ? `--${f.flag}` : String(f.arg);
}

export function docOf(f: BenchmarkField, surface: Surface): string {
  const doc = (surface === "mcp" && f.mcpDoc) || f.doc;
  return doc.replace(
    /\{(\w+)\}/g,
    (_, k: string) => fieldName(k as BenchmarkFieldName, surface),
  );
}

// ---- the command line ----

/** The options of `dvergr benchmark` (node:util parseArgs), one per field with a flag. */
export function benchmarkOptions(): Record<
  string,
  { type: "string" | "boolean"; multiple?: boolean }
> {
  const out: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {};
  for (const [, f] of FIELDS) {
    if (f.flag === null) continue;
    const v = f.value;
    out[f.flag] = v.type === "switch"
      ? { type: "boolean" }
      : (v.type === "list" && v.repeat) || v.type === "params"
      ? { type: "string", multiple: true }
      : { type: "string" };
  }
  return out;
}

function splitList(flag: string, text: string, item: string): string[] {
  const items = text.split(",").map((s) => s.trim());
  if (items.some((s) => s === "")) {
    if (item === "model") {
      // As `--models` has always said it: the list names candidates.
      throw new DvergrError(
        "CANDIDATE_INVALID",
        `Cannot use candidate "${text}": the model list has an empty item`,
        { hint: "Write --models a,b without empty items" },
      );
    }
    throw usageError(
      `Cannot use --${flag} "${text}": it has an empty ${item}`,
      `Write --${flag} a,b`,
    );
  }
  return items;
}

function flagValue(f: BenchmarkField & { flag: string }, given: string | boolean | string[]) {
  const v = f.value;
  const hint = "Run `dvergr benchmark --help`";
  if (v.type === "number") return readRangeText(v.range, given as string, `--${f.flag}`, hint);
  if (v.type === "switch" || v.type === "text") return given;
  if (v.type === "choice") {
    if (!v.values.includes(given as string)) {
      throw usageError(
        `Cannot use --${f.flag} "${given}": it is not one of ${v.values.join(", ")}`,
        `Write --${f.flag} ${v.values.join(" or --" + f.flag + " ")}`,
      );
    }
    return given;
  }
  if (v.type === "params") {
    const texts: Record<string, string> = {};
    for (const t of given as string[]) {
      readParamFlag(t, "benchmark"); // refuses K=V without K, and bad EDN, naming --param
      const eq = t.indexOf("=");
      texts[t.slice(0, eq).replace(/^:/, "")] = t.slice(eq + 1);
    }
    return texts;
  }
  const texts = Array.isArray(given) ? given : [given as string];
  return v.commas ? texts.flatMap((t) => splitList(f.flag, t, v.commas!)) : texts;
}

/**
 * The input of `dvergr benchmark`'s flags (parseArgs values): numbers in range, lists split
 * (`--mount` directories as given); a bad value is a USAGE error naming the flag.
 */
export function readBenchmarkFlags(
  values: Record<string, string | boolean | (string | boolean)[] | undefined>,
): BenchmarkInput {
  const input: Record<string, unknown> = {};
  for (const [key, f] of FIELDS) {
    if (f.flag === null) continue;
    const given = values[f.flag];
    if (given === undefined) continue;
    input[key] = flagValue(
      f as BenchmarkField & { flag: string },
      given as string | boolean | string[],
    );
  }
  return input as BenchmarkInput;
}

/** `  --flag META` and its doc, the doc's lines from column 24. */
function flagHelp(f: BenchmarkField & { flag: string }, extra: string[]): string[] {
  const head = `  --${f.flag}${f.meta ? ` ${f.meta}` : ""}`;
  const lines = [...docOf(f, "cli").split("\n"), ...extra];
  const pad = " ".repeat(24);
  const first = head.length <= 22 ? head.padEnd(24) + lines[0] : `${head}\n${pad}${lines[0]}`;
  return [first, ...lines.slice(1).map((l) => pad + l)];
}

/**
 * The flags of a section of `dvergr benchmark --help`, each with its doc; `extra` adds
 * lines under a flag's doc (the candidate forms under --candidate).
 */
export function benchmarkFlagsHelp(
  section: "candidates" | "options",
  extra: Partial<Record<BenchmarkFieldName, string[]>> = {},
): string {
  return FIELDS
    .filter(([, f]) => f.flag !== null && (f.section ?? "options") === section)
    .flatMap(([k, f]) => flagHelp(f as BenchmarkField & { flag: string }, extra[k] ?? []))
    .join("\n");
}

// ---- MCP ----

/** The input of catalog_benchmark's arguments (already checked by the op's schema). */
export function readBenchmarkArgs(args: Record<string, unknown>): BenchmarkInput {
  const input: Record<string, unknown> = {};
  for (const [key, f] of FIELDS) {
    if (f.arg !== null && args[f.arg] !== undefined) input[key] = args[f.arg];
  }
  return input as BenchmarkInput;
}

// ---- the request ----

/** What the engine takes from a benchmark's input (benchmarkBundle and its parts). */
export interface BenchmarkRequestFields {
  specs: CandidateSpec[];
  repetitions?: number;
  cases?: number;
  caseIds?: string[];
  split?: Split;
  seed?: number;
  parallel?: number;
  timeoutMs?: number;
  budgetMicros?: number;
  params: Record<string, unknown>;
  baseline?: string;
  stopWhenDecided?: { alpha?: number; delta?: number };
  mounts?: string[];
  limits: ResourceLimits;
  /** The user's sources (`--allow-sources`, `--block-sources`); absent: none given. */
  sources?: UserSources;
}

/**
 * The engine's request from what a surface was given: candidate specs read by the kinds
 * (MCP refuses inline command lines: a caller could otherwise run any command on this
 * host), dollars as micros, the limits, the stopping rule. Refuses a request without
 * candidates and `delta`/`alpha` without `stop_when_decided`, naming the surface's fields.
 */
export function benchmarkRequestOf(
  input: BenchmarkInput,
  kinds: CandidateKinds,
  surface: Surface,
): BenchmarkRequestFields {
  const specs = candidateSpecsOf(input, kinds, surface);
  const budget = input.budgetDollars;
  return {
    specs,
    repetitions: input.repetitions,
    cases: input.cases,
    caseIds: input.caseIds,
    ...(input.split !== undefined ? { split: input.split } : {}),
    ...(input.seed !== undefined ? { seed: input.seed } : {}),
    parallel: input.parallel ?? 4,
    timeoutMs: input.timeoutMs,
    budgetMicros: budget === undefined ? undefined : Math.round(budget * 1_000_000),
    params: readParamTexts(input.params ?? {}),
    baseline: input.baseline,
    ...stoppingOf(input, surface),
    mounts: input.mounts,
    limits: limitsFrom({
      memoryMiB: input.memoryMiB,
      worldMiB: input.worldMiB,
      processes: input.processes,
      openFiles: input.openFiles,
    }),
    ...sourcesOfInput(input, surface),
  };
}

/** `allow-sources` and `block-sources`, each entry a host name as source lists hold them. */
function sourcesOfInput(input: BenchmarkInput, surface: Surface): { sources?: UserSources } {
  const { allowSources: allow, blockSources: block } = input;
  if (allow === undefined && block === undefined) return {};
  for (const [key, list] of [["allowSources", allow], ["blockSources", block]] as const) {
    for (const entry of list ?? []) {
      const why = sourceProblem(entry);
      if (why !== null) {
        throw usageError(
          `Cannot use ${fieldName(key, surface)}: ${why}`,
          surface === "cli"
            ? `Write ${fieldName(key, surface)} example.com,docs.example.org`
            : `Give ${fieldName(key, surface)}: ["example.com", "docs.example.org"]`,
        );
      }
    }
  }
  return {
    sources: {
      ...(allow !== undefined ? { allow } : {}),
      ...(block !== undefined ? { block } : {}),
    },
  };
}

function candidateSpecsOf(
  input: BenchmarkInput,
  kinds: CandidateKinds,
  surface: Surface,
): CandidateSpec[] {
  const specs: CandidateSpec[] = [];
  for (const c of input.candidates ?? []) {
    const spec = kinds.parse(c);
    if (surface === "mcp" && kinds.isInlineCommand(spec)) {
      throw new DvergrError(
        "CANDIDATE_INVALID",
        `Cannot use candidate "${c}": inline commands are not accepted here`,
        {
          hint: 'Configure the command in the home\'s candidates.edn ({"NAME" {:command "…"}}) ' +
            "and name it as cmd:NAME",
        },
      );
    }
    specs.push(spec);
  }
  for (const m of input.models ?? []) specs.push(kinds.model(m));
  if (specs.length === 0) {
    throw usageError(
      "Cannot benchmark without candidates",
      surface === "cli"
        ? "Add --candidate builtin:reference, --candidate 'me=cmd:COMMAND' or --models m1,m2"
        : 'Give candidates: ["builtin:reference", "builtin:noop"] or models: ["…"]',
    );
  }
  return specs;
}

/** stop-when-decided, delta and alpha as the request takes them. */
function stoppingOf(
  input: BenchmarkInput,
  surface: Surface,
): { stopWhenDecided?: { alpha?: number; delta?: number } } {
  if (!input.stopWhenDecided) {
    if (input.delta !== undefined || input.alpha !== undefined) {
      throw usageError(
        `Cannot use ${fieldName("delta", surface)} or ${fieldName("alpha", surface)} without ${
          fieldName("stopWhenDecided", surface)
        }`,
        surface === "cli"
          ? "Add --stop-when-decided --baseline NAME"
          : "Add stop_when_decided: true and a baseline",
      );
    }
    return {};
  }
  return { stopWhenDecided: { alpha: input.alpha, delta: input.delta } };
}

// ---- the candidate kinds' forms, as each surface shows them ----

/** Words of `text` in lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/**
 * The candidate forms under `--candidate` in `--help`, one `FORM  what` per form, what
 * wrapped under itself (the lines start at --help's doc column).
 */
export function candidateFormsHelp(kinds: readonly CandidateKindForms[]): string[] {
  const formWidth = 18;
  return kinds.flatMap((k) => k.forms).flatMap((f) => {
    const head = `  ${f.form.padEnd(formWidth)}  `;
    const [first, ...rest] = wrap(f.what, 64 - head.length);
    return [head + first, ...rest.map((l) => " ".repeat(head.length) + l)];
  });
}

/**
 * The candidate forms catalog_benchmark accepts (an inline command line is refused over
 * MCP), for its description and its `candidates` argument.
 */
export function candidateFormsDoc(kinds: readonly CandidateKindForms[]): string {
  const accepted = kinds.filter((k) => !k.inlineCommand).flatMap((k) => k.forms);
  const refused = kinds.filter((k) => k.inlineCommand).flatMap((k) => k.forms);
  return "Candidate specs: " +
    accepted.map((f) => `${f.form} (${f.what}, e.g. ${f.example})`).join("; ") +
    (refused.length > 0
      ? `. Not accepted here: ${refused.map((f) => f.form).join(", ")} (configure the command ` +
        "in the home's candidates.edn and name it cmd:NAME)"
      : "");
}

/** The README's candidate table: one row per form, as `describe()` gives them. */
export function candidateFormsTable(kinds: readonly CandidateKindForms[]): string[] {
  return [
    "| Spec | Candidate | Example |",
    "| --- | --- | --- |",
    ...kinds.flatMap((k) => k.forms).map((f) =>
      `| ${f.form.split(", ").map((x) => `\`${x}\``).join(", ")} | ${f.what} | \`${f.example}\` |`
    ),
  ];
}
