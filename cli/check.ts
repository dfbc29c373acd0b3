import { join } from "../core/path.ts";

import { parseBundleCommand, readBundleArg } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { printJson } from "./render.ts";
import { checkLines, runLine } from "./verdict_text.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import { readEdn } from "../core/edn/read.ts";
import { toPlain } from "../core/edn/plain.ts";
import { formatProblem } from "../core/bundle/parse_core.ts";
import {
  type AnswerVerdict,
  answerWorld,
  gradeAnswer,
  loadCheck,
  loadCheckGrading,
  type ShapeCheck,
} from "../core/engine/check.ts";
import { generatorOf } from "../core/bundle/generator.ts";
import { readBundleDir } from "../adapters/files/bundle_dir.ts";
import { isDir } from "../adapters/files/fs.ts";
import { paramRuleHelp, readParamFlags } from "../core/bundle/params.ts";
import { loadCacheDir, loadCachingRunner } from "../sandbox/load_cache.ts";
import type { CheckerRunner } from "../core/checker.ts";
import type { CheckerPool } from "../sandbox/checker_pool.ts";
import type { FileBundle } from "../core/bundle/file_map.ts";
import { importLater } from "./import_later.ts";

type CheckValues = ReturnType<typeof parse>["values"];

export const HELP =
  `dvergr check <bundle> [--answer DIR [--fetched FILE.edn] [--judgements FILE.edn]] [--case ID]
             [--param K=V]... [--json]

The bundle is a directory, or ROOM/NAME: workflows/NAME/ of room ROOM in the home.

Shape-checks a workflow bundle: prints its name, content id, title and cases, and
every problem with its file and line (exit 2 when there are any).

The checker is checker.js, else checker.clj (the earlier system's Clojure checker, run
by SCI in the same sandbox); a bundle with both runs checker.js. For checker.clj it
warns about Java regex syntax that JavaScript regexes read differently (\p{…}, \A, \z,
possessive quantifiers) and (.length s).

With --answer DIR (a directory laid out like an attempt's world, e.g. DIR/out/answer.edn)
the bundle's checker also grades the files under the bundle's :capture directories and
the verdict is printed (exit 1 when the checker faults).

Options:
  --answer DIR     grade the answer in DIR (world layout: out/answer.edn → /out/answer.edn)
  --case ID        the case whose gold grades the answer (default: calibration's case,
                   else the first case)
  --fetched FILE   with --answer: the pages the checker gets as fetched, an EDN map
                   {"https://…" "page text"} (default: none)
  --judgements FILE
                   with --answer: the judge's answers the checker gets, an EDN map
                   {"request id" "answer"} (default: none; no judge is asked)
  --param K=V      override a parameter (repeatable):
                   ${paramRuleHelp(19)}
  --home DIR       the home of ROOM/NAME bundles (default: $DVERGR_HOME, else .dvergr)
  --json           print the result as JSON
  -h, --help       show this help

Example:
  dvergr check examples/workflows/meeting-actions --answer my-answer

Exit status: 0 well formed (and, with --answer, graded); 1 the checker faulted on the
answer; 2 problems in the bundle, or bad input.
`;

export const OPTIONS = {
  answer: { type: "string" },
  fetched: { type: "string" },
  judgements: { type: "string" },
  case: { type: "string" },
  param: { type: "string", multiple: true },
  home: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  return parseBundleCommand("check", args, OPTIONS);
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const fb = await readBundleArg("check", positionals[0], { home: values.home, ctx });
  const pool = lazyPool();
  // An answer is graded: the sandbox starts now, while the bundle is parsed.
  if (values.answer !== undefined) {
    pool.warm(fb.files.has("checker.js") ? "checker.js" : "checker.clj");
  }
  // Without an answer only the checker's load is asked: a load that succeeded before (same
  // checker, same call, same sandbox) is not asked again.
  const cache = values.answer === undefined ? loadCacheDir(ctx.env) : null;
  try {
    return await checkWith(cache ? loadCachingRunner(pool, cache) : pool, fb, values, ctx);
  } finally {
    pool.close();
  }
}

/**
 * The checker pool, its module loaded (and its worker started) on the first call or warm()
 * only.
 */
function lazyPool(): CheckerRunner & { warm(file: "checker.js" | "checker.clj"): void } {
  let pool: Promise<CheckerPool> | null = null;
  const get = () =>
    pool ??= importLater<typeof import("../sandbox/checker_pool.ts")>(
      "../sandbox/checker_pool.ts",
      import.meta.url,
    ).then((m) => m.commandCheckerPool());
  let closed = false;
  return {
    check: async (source, input, opts) => (await get()).check(source, input, opts),
    judgeRequests: async (source, input, opts) => (await get()).judgeRequests(source, input, opts),
    warm: (file) => void get().then((p) => p.warm(file)),
    generate: async (source, request, opts) => (await get()).generate(source, request, opts),
    close() {
      if (closed) return;
      closed = true;
      pool?.then((p) => p.close());
    },
  };
}

async function checkWith(
  pool: CheckerRunner,
  fb: FileBundle,
  values: CheckValues,
  ctx: CliContext,
): Promise<number> {
  const params = readParamFlags(values.param ?? [], "check");
  // The answer's files are read while the checker loads; what is wrong with them is said
  // after the bundle's own problems, as before.
  const answerRead = values.answer === undefined ? undefined : settled(readAnswer(values.answer));
  const answer = values.answer;
  // With an answer, graded in the call that also tells whether the checker loads.
  const { shape, graded: verdict } = answer === undefined
    ? { shape: await loadCheck(pool, fb, params) }
    : await loadCheckGrading(pool, fb, params, async (bundle) => {
      const world = await answerWorld(bundle, pool, values.case);
      const files = capturedFiles(await answerRead!(), answer, bundle.definition.capture);
      return await gradeAnswer(world.bundle, pool, {
        files,
        caseId: world.caseId,
        params,
        fetched: values.fetched === undefined
          ? undefined
          : await readStringMapFile(values.fetched, "fetched"),
        judgements: values.judgements === undefined
          ? undefined
          : await readStringMapFile(values.judgements, "judgements"),
      });
    });
  if (!shape.ok) {
    const { problems } = shape;
    if (values.json) await printCheckJson(ctx, shape);
    else {
      ctx.stdout(`Bundle ${shape.name}  ${shape.id}\n`);
      ctx.stdout(`${problems.length} problem${problems.length === 1 ? "" : "s"}:\n`);
      for (const p of problems) ctx.stdout(`  - ${formatProblem(p)}\n`);
    }
    return 2;
  }
  const { bundle } = shape;
  // Without checker.clj there is nothing to lint or leave unused: its lint loads only for one.
  const facts = bundle.files.has("checker.clj")
    ? (await importLater<typeof import("../core/bundle/clojure_lint.ts")>(
      "../core/bundle/clojure_lint.ts",
      import.meta.url,
    )).checkerFacts(bundle)
    : { unused: null, warnings: [] };
  const { warnings } = facts;

  for (const flag of ["fetched", "judgements"] as const) {
    if (values[flag] !== undefined && values.answer === undefined) {
      throw usageError(
        `--${flag} needs --answer DIR`,
        `Give the answer it goes with: --answer DIR --${flag} ${values[flag]}`,
      );
    }
  }

  if (values.json) {
    await printCheckJson(ctx, shape, verdict);
  } else {
    ctx.stdout(`Bundle ${bundle.name}  ${bundle.id}\n`);
    ctx.stdout(`Title  ${bundle.definition.title}\n`);
    ctx.stdout(
      generatorOf(bundle) !== null
        ? `Cases  generated by ${generatorOf(bundle)!.file} (splits train and test; the ` +
          "first world of each generated twice: the same)\n"
        : bundle.cases.length === 0
        ? "Cases  none (a single environment)\n"
        : `Cases  ${bundle.cases.length}: ${bundle.cases.slice(0, 8).map((c) => c.id).join(", ")}${
          bundle.cases.length > 8 ? ", …" : ""
        }\n`,
    );
    ctx.stdout(
      `Checker  ${bundle.checkerFile}${
        bundle.checkerFile === "checker.clj"
          ? " (Clojure, run by SCI in the sandbox)"
          : facts.unused
          ? " (checker.clj is also present and not used: checker.js grades)"
          : ""
      }\n`,
    );
    ctx.stdout("Problems  none\n");
    for (const w of warnings) {
      ctx.stdout(`Warning  checker.clj line ${w.line}, column ${w.column}: ${w.message}\n`);
    }
    if (verdict) {
      ctx.stdout(
        `Answer ${values.answer} (${verdict.files.length} captured file${
          verdict.files.length === 1 ? "" : "s"
        }${verdict.case ? `, case ${verdict.case}` : ""})\n`,
      );
      ctx.stdout(`  ${runLine(verdict.run)}\n`);
      for (const l of checkLines(verdict.run)) ctx.stdout(l + "\n");
    }
  }
  return verdict && !verdict.run.ok ? 1 : 0;
}

/**
 * The result as JSON. Its format's schemas load only here: building them is ~10 ms of a
 * text-only check's start.
 */
async function printCheckJson(
  ctx: CliContext,
  shape: ShapeCheck,
  verdict?: AnswerVerdict,
): Promise<void> {
  const { CHECK_FORMAT, checkReport } = await importLater<
    typeof import("../core/ops/check_formats.ts")
  >("../core/ops/check_formats.ts", import.meta.url);
  printJson(ctx, CHECK_FORMAT, { ...checkReport(shape), ...(verdict ? { verdict } : {}) });
}

/**
 * `promise`, to be awaited later: what it settles to, or its error thrown then (never an
 * unhandled rejection meanwhile).
 */
function settled<T>(promise: Promise<T>): () => Promise<T> {
  promise.catch(() => {});
  return () => promise;
}

/** The files of an answer directory, by path relative to it; null when it is no directory. */
async function readAnswer(dir: string): Promise<Map<string, string> | null> {
  if (!(await isDir(dir))) return null;
  return (await readBundleDir(dir)).files;
}

/** The files of the answer directory `dir` under the capture dirs, by world path. */
function capturedFiles(
  files: Map<string, string> | null,
  dir: string,
  capture: string[],
): Record<string, string> {
  if (files === null) {
    throw usageError(
      `Cannot read the answer directory "${dir}": it is not a directory`,
      `Give --answer a directory laid out like a world: ${
        join(dir, capture[0].slice(1))
      }/answer.edn`,
    );
  }
  const out: Record<string, string> = {};
  for (const [rel, text] of files) {
    const worldPath = "/" + rel;
    if (capture.some((c) => worldPath.startsWith(c.endsWith("/") ? c : c + "/"))) {
      out[worldPath] = text;
    }
  }
  if (Object.keys(out).length === 0 && files.size > 0) {
    // Nothing under :capture: say so rather than grading an empty answer silently.
    throw usageError(
      `Answer directory "${dir}" has no files under ${capture.join(", ")}`,
      `Lay it out like a world: ${join(dir, capture[0].slice(1), "answer.edn")}`,
    );
  }
  return out;
}

/** An EDN file holding a map of strings to strings (--fetched, --judgements). */
async function readStringMapFile(path: string, flag: string): Promise<Record<string, string>> {
  // Loaded here only: it imports node:fs, whose first import costs a check ~10 ms.
  const { INPUT_LIMITS, readInputFile } = await importLater<
    typeof import("../adapters/files/input_file.ts")
  >("../adapters/files/input_file.ts", import.meta.url);
  const bytes = await readInputFile(path, {
    shown: path,
    what: `--${flag} file`,
    maxBytes: INPUT_LIMITS.text,
    hint: `Give an EDN file such as {"https://example.com/" "page text"}`,
  });
  const text = new TextDecoder().decode(bytes);
  const value = toPlain(readEdn(text, { file: path }));
  const bad = value === null || typeof value !== "object" || Array.isArray(value)
    ? "it is not a map"
    : Object.entries(value as Record<string, unknown>).filter(([, v]) => typeof v !== "string")
      .map(([k]) => `the value of ${JSON.stringify(k)} is not a string`)[0];
  if (bad) {
    throw new DvergrError("BUNDLE_INVALID", `Cannot use --${flag} file "${path}": ${bad}`, {
      hint: `--${flag} takes an EDN map of strings to strings, e.g. {"id" "text"}`,
      details: { file: path },
    });
  }
  return value as Record<string, string>;
}
