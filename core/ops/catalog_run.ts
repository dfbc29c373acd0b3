/**
 * Running a room's bundles: check (shape, and the checker's verdict on an answer),
 * calibrate, build a case pack from a table in the room, and benchmark candidates (a job:
 * it returns at once and is polled with job_status). A bundle lives in its room at
 * `workflows/<name>/`.
 */
import { checkRange } from "../ranges.ts";
import { posix } from "node:path";
import { z } from "zod";
import { DvergrError } from "../errors.ts";
import { checkBundleName } from "../bundle/bundle_name.ts";
import { parseBundle } from "../bundle/parse.ts";
import { answerWorld, gradeAnswer, loadCheck } from "../engine/check.ts";
import { contentId } from "../bundle/content_id.ts";
import { PARAM_TEXTS_DOC, readParamTexts } from "../bundle/params.ts";
import { calibrate } from "../calibrate/calibrate.ts";
import { calibrateReviews } from "../engine/review_calibration.ts";
import { DEFAULT_MIN_MARGIN } from "../calibrate/auto.ts";
import { completeSpec, specFromEdn } from "../casepack/spec.ts";
import { casePackOf } from "../casepack/attachments.ts";
import { parseTable, tableFormatOf } from "../casepack/table.ts";
import { readRoomBundle, roomPathProblem } from "./room_bundles.ts";
import { benchmarkArgsShape } from "./benchmark_args.ts";
import { benchmarkRequestOf, candidateFormsDoc, readBenchmarkArgs } from "./benchmark_request.ts";
import { prepareBenchmark, runBenchmark } from "../engine/benchmark.ts";
import type { ProgressEvent } from "../engine/run_experiment.ts";
import type { Diagnosis } from "../bench/diagnosis.ts";
import { brokenLine } from "../bench/outcome.ts";
import { itemSummaryLine } from "../bench/item_analysis.ts";
import { stopText } from "../bench/sequential.ts";
import { defineOp, type Op, type OpProgress } from "./op.ts";
import { LEADERBOARD_ROW, type LeaderboardRow, leaderboardRows } from "./scorecards.ts";
import { defineFormat, fields, typed } from "../json_format.ts";
import type { ExclusionReason } from "../casepack/certify.ts";

import { CALIBRATE_FORMAT, CHECK_FORMAT, checkReport } from "./check_formats.ts";
export { CALIBRATE_FORMAT, CHECK_FORMAT, checkReport, LISTED_CASE_IDS } from "./check_formats.ts";

/** Why a row of a table is not a case (certification). */
export const EXCLUSION_REASON = typed<ExclusionReason>(z.looseObject({
  reason: z.enum([
    "no-id",
    "duplicate-id",
    "unlabelled",
    "missing-attachment",
    "conflicting-outcomes",
    "outcome-not-gradable",
  ]),
  row: z.number().int().optional(),
  fields: z.array(z.string()).optional(),
  columns: z.array(z.string()).optional(),
}));

const CASES_FORMAT = defineFormat(
  "catalog-cases",
  1,
  "A case pack built in a room from a table, with its certification (catalog_cases).",
  z.object({
    room: fields.room,
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    path: z.string(),
    commit: z.string().nullable().describe("null: the room held exactly this pack already"),
    files: z.number().int(),
    cases: z.number().int().describe("Rows of the table"),
    certified: z.number().int(),
    byReason: z.record(z.string(), z.number().int()),
    excluded: z.array(z.object({ id: z.string(), reasons: z.array(EXCLUSION_REASON) }))
      .describe("The first 50 rows left out, with why"),
    excludedTotal: z.number().int(),
  }),
);

const benchmarkEnd = {
  complete: z.boolean(),
  cancelled: z.boolean(),
  graded: z.number().int(),
  faults: z.number().int(),
  baseline: z.string().nullable(),
  leaderboard: z.array(LEADERBOARD_ROW),
  broken: z.array(z.string()).describe("Candidates every attempt of which crashed or faulted"),
  flaggedCases: z.string().nullable().describe("The cases the item analysis flags, one line"),
  stopped: z.array(z.string()).optional(),
  notNeeded: z.number().int().optional(),
};

/** What a benchmark job's result is (job_status's result, catalog_benchmark without jobs). */
export const BENCHMARK_RESULT = z.object({
  room: fields.room,
  bundle: fields.bundle,
  experiment: fields.experiment,
  cells: z.number().int(),
  ...benchmarkEnd,
});

const BENCHMARK_FORMAT = defineFormat(
  "catalog-benchmark",
  1,
  "A benchmark started as a job (poll job_status), or run to its end where there are no jobs (catalog_benchmark).",
  z.object({
    job: z.string().optional().describe("The job to poll with job_status"),
    pollAfterMs: z.number().int().optional(),
    status: z.literal("running").optional(),
    room: fields.room,
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    experiment: fields.experiment,
    cells: z.number().int(),
    candidates: z.array(z.string()),
    trust: fields.trust,
    ...Object.fromEntries(Object.entries(benchmarkEnd).map(([k, v]) => [k, v.optional()])) as {
      [K in keyof typeof benchmarkEnd]: z.ZodOptional<(typeof benchmarkEnd)[K]>;
    },
  }),
);

const room = z.string().min(1).describe("The room (its slug)");
const name = z.string().min(1).max(64).describe("The bundle's name: workflows/<name>/ in the room");
const params = z.record(z.string().min(1), z.string()).optional().describe(PARAM_TEXTS_DOC);

/** A room path as given over MCP ("/data/cases.csv" or "data/cases.csv"), checked. */
function roomPath(path: string, what: string): string {
  const p = path.replace(/^\/+/, "");
  const problem = roomPathProblem(p);
  if (problem) {
    throw new DvergrError("PATH_INVALID", `Cannot use ${what} "${path}": the path ${problem}`, {
      hint: "Give a path in the room such as /data/cases.csv",
    });
  }
  return p;
}

export const catalogCheck = defineOp({
  name: "catalog_check",
  title: "Check a bundle",
  description: "Shape-checks the bundle workflows/<name>/ of a room: its content id, title, " +
    "cases, and every problem with its file and line. With answer (world path → text, " +
    'e.g. {"/out/answer.edn": "{…}"}) the bundle\'s checker also grades it and the verdict ' +
    "is returned; fetched (URL → page text) and judgements (request id → answer) are what " +
    "the checker gets as the attempt's fetched pages and the judge's answers.",
  kind: "read",
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    name,
    answer: z.record(z.string(), z.string()).optional().describe(
      'Files of an answer by world path, e.g. {"/out/answer.edn": "{...}"}',
    ),
    case: z.string().min(1).optional().describe(
      "The case whose gold grades the answer (default: the calibration's case, else the first)",
    ),
    fetched: z.record(z.string(), z.string()).optional().describe(
      'With answer: pages the checker gets as fetched, e.g. {"https://example.com/": "text"}',
    ),
    judgements: z.record(z.string(), z.string()).optional().describe(
      'With answer: the judge\'s answers the checker gets, e.g. {"request id": "Yes."}',
    ),
    params,
  }),
  output: CHECK_FORMAT,
  async handler(ctx, input) {
    const params = readParamTexts(input.params ?? {});
    const shape = await loadCheck(
      ctx.runner,
      await readRoomBundle(ctx.home.rooms, input.room, input.name),
      params,
    );
    const summary = checkReport(shape);
    if (!shape.ok) return summary;
    const { bundle } = shape;
    if (input.answer === undefined) {
      if (input.fetched !== undefined || input.judgements !== undefined) {
        throw new DvergrError("USAGE", "Cannot use fetched or judgements without an answer", {
          hint: 'Give the answer they go with: answer {"/out/answer.edn": "…"}',
        });
      }
      return summary;
    }
    const world = await answerWorld(bundle, ctx.runner, input.case);
    const files: Record<string, string> = {};
    for (const [p, text] of Object.entries(input.answer)) {
      files["/" + roomPath(p, "answer path")] = text;
    }
    return {
      ...summary,
      verdict: await gradeAnswer(world.bundle, ctx.runner, {
        files,
        caseId: world.caseId,
        params,
        fetched: input.fetched,
        judgements: input.judgements,
      }),
    };
  },
});

export const catalogCalibrate = defineOp({
  name: "catalog_calibrate",
  title: "Calibrate a bundle",
  description: "Proves that the checker of workflows/<name>/ grades right: the reference " +
    "answer of calibration.edn must pass every check and each damaged variant must lose " +
    "the checks it names. With auto the checker also grades mechanical mutations of the " +
    "reference (auto.mutations): damaging ones must score below it (auto.margin, the " +
    "reference's reward minus the highest damaging reward, at least min_margin), " +
    "invariances (whitespace, key order, 1.0 for 1, lists for vectors) must not move it " +
    "(auto.brittle names those that did). calibration.edn's :reviews (updates and whether " +
    "the bundle's :review must approve them) are put to the review, its reviewer model " +
    "included. ok is false, with the problems, when it does not calibrate.",
  kind: "read",
  openWorld: true,
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    name,
    auto: z.boolean().optional().describe(
      "Also grade the automatic mutations of the reference (default false)",
    ),
    min_margin: z.number().optional().describe(
      "With auto: the least margin that calibrates, 0 to 1 (default 0.2)",
    ),
  }),
  output: CALIBRATE_FORMAT,
  async handler(ctx, input) {
    if (input.min_margin !== undefined && !input.auto) {
      throw new DvergrError("USAGE", "Cannot use min_margin without auto", {
        hint: "Add auto: true: the margin is measured on the automatic mutations",
      });
    }
    const minMargin = input.min_margin === undefined
      ? DEFAULT_MIN_MARGIN
      : checkRange("minMargin", input.min_margin, "min_margin");
    const bundle = parseBundle(await readRoomBundle(ctx.home.rooms, input.room, input.name));
    const result = await calibrate(bundle, ctx.runner, {
      auto: input.auto ? { minMargin } : undefined,
    });
    // calibration.edn's :reviews are asked of the bundle's review (its reviewer model too).
    const reviews = await calibrateReviews(bundle, ctx.runner, {
      services: ctx.services,
      env: ctx.env,
      homeDir: ctx.home.dir,
      signal: ctx.signal,
    });
    if (!reviews) return { bundle: bundle.name, ...result };
    return {
      bundle: bundle.name,
      ...result,
      ok: result.ok && reviews.ok,
      problems: [...result.problems, ...reviews.problems],
      reviews,
    };
  },
});

export const catalogCases = defineOp({
  name: "catalog_cases",
  title: "Build a case pack",
  description: "Turns a table of historical cases in the room (CSV, TSV, JSON lines or EDN) " +
    "into a dataset bundle at workflows/<name>/, written as one commit: one case per " +
    "certified row, a generated checker, task and calibration, and certification.edn " +
    "saying why the other rows cannot grade an answer. Returns the certification counts. " +
    'spec is EDN: {:id "no" :inputs ["vendor" "text"] :expected {"account" {:rule ' +
    ':exact} "amount" {:rule :number :tolerance 0.01}}} (rules: exact, ci, number, set, ' +
    "date; optional :attachments :task :title :doc :shared).",
  kind: "write",
  idempotent: true,
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    name,
    table: z.string().min(1).describe("The table's path in the room, e.g. /data/cases.csv"),
    spec: z.string().min(1).describe("The case-pack spec as EDN text"),
    delimiter: z.string().min(1).max(1).optional().describe(
      "The CSV delimiter (default: detected from , ; or tab)",
    ),
  }),
  output: CASES_FORMAT,
  async handler(ctx, input) {
    checkBundleName(input.name);
    const tablePath = roomPath(input.table, "table");
    const { rooms } = ctx.home;
    const files = await rooms.readFiles(
      input.room,
      posix.dirname(tablePath) === "." ? undefined : posix.dirname(tablePath),
    );
    const raw = files.get(tablePath);
    if (raw === undefined) {
      throw new DvergrError(
        "NOT_FOUND",
        `Cannot read the table "${input.table}": room "${input.room}" has no such file`,
        { hint: "room_write puts a table into the room; room_files lists its files" },
      );
    }
    const draft = specFromEdn(input.spec, "spec");
    draft.name = input.name;
    const spec = completeSpec(draft);
    const table = parseTable(raw.replace(/^\uFEFF/, ""), {
      file: input.table,
      format: tableFormatOf(tablePath),
      delimiter: input.delimiter,
    });
    const dir = posix.dirname(tablePath);
    const build = await casePackOf(
      table,
      spec,
      posix.join("/", dir),
      (rel) => Promise.resolve(files.get(posix.join(dir, rel)) ?? null),
    );
    const cert = build.certification;
    const excluded = cert.verdicts.filter((v) => v.status === "excluded").map((v) => ({
      id: v.id,
      reasons: v.reasons,
    }));
    const counts = {
      cases: cert.cases,
      certified: cert.certified,
      byReason: cert.byReason,
      excluded: excluded.slice(0, 50),
      excludedTotal: excluded.length,
    };
    if (build.files === null) {
      throw new DvergrError(
        "NOT_CERTIFIED",
        `No case of "${input.table}" is certified, so nothing was written (${cert.cases} cases)`,
        {
          result: true,
          hint: "certification reasons per row are in details; fix the table or the spec",
          details: counts,
        },
      );
    }
    const prefix = `workflows/${input.name}`;
    const commit = await rooms.replaceDir(
      input.room,
      prefix,
      build.files,
      `Case pack ${input.name} from ${tablePath} (${cert.certified} of ${cert.cases} cases)`,
    );
    return {
      room: input.room,
      bundle: input.name,
      bundleId: contentId(build.files),
      path: `${prefix}/`,
      commit,
      files: build.files.size,
      ...counts,
    };
  },
});

/** What a benchmark job returns when it ends. */
export interface BenchmarkJobResult {
  room: string;
  bundle: string;
  experiment: string;
  complete: boolean;
  cancelled: boolean;
  cells: number;
  graded: number;
  faults: number;
  baseline: string | null;
  leaderboard: LeaderboardRow[];
  /** Candidates every attempt of which crashed or faulted: one line each, cause and hint. */
  broken: string[];
  /** The cases the item analysis flags, in one line; null when none is. */
  flaggedCases: string | null;
  /** Sequential stopping: one line per comparison (where it stopped, its sequence). */
  stopped?: string[];
  /** Sequential stopping: cells skipped as not needed. */
  notNeeded?: number;
}

/** The end of a benchmark job's answer that says why: broken candidates and flagged cases. */
function whatWentWrong(d: Diagnosis): { broken: string[]; flaggedCases: string | null } {
  return { broken: d.broken.map(brokenLine), flaggedCases: itemSummaryLine(d.items) };
}

/** A benchmark's progress event as op progress (MCP notifications, job records). */
export function opProgressOf(e: ProgressEvent): OpProgress {
  if (e.type === "start") return { progress: e.kept, total: e.total, faults: 0, phase: "running" };
  if (e.type === "stopped") {
    return {
      progress: e.done,
      total: e.total - e.notNeeded,
      faults: e.faults,
      phase: "running",
      message: stopText(e.comparison),
    };
  }
  const phase = e.type === "attempt" ? "running" : e.type === "waiting" ? "waiting" : "scoring";
  return { progress: e.done, total: e.total, faults: e.faults, phase };
}

const BENCHMARK_DESCRIPTION = "Benchmarks candidates on workflows/<name>/ of a room: every " +
  "candidate × case × repetition is one cell, run in a fresh world and graded by the " +
  "bundle's checker. Returns a job at once, with the experiment id; poll job_status {job, " +
  "wait_ms: 25000} until it ends, then read scorecard_detail / experiment_report. Running " +
  "the same benchmark again resumes it.";

export const catalogBenchmark = defineOp({
  name: "catalog_benchmark",
  title: "Benchmark candidates on a bundle",
  description: BENCHMARK_DESCRIPTION + " Candidates: the specs the candidates argument " +
    "lists; models: model ids or aliases.",
  kind: "write",
  openWorld: true,
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    name,
    ...benchmarkArgsShape(),
  }),
  output: BENCHMARK_FORMAT,
  explain(services) {
    const forms = candidateFormsDoc(services.candidates.describe());
    return {
      description: `${BENCHMARK_DESCRIPTION} ${forms}; models: model ids or aliases.`,
      args: { candidates: forms },
    };
  },
  async handler(ctx, input) {
    const { parallel, ...request } = benchmarkRequestOf(
      readBenchmarkArgs(input),
      ctx.services.candidates,
      "mcp",
    );
    const { home } = ctx;
    // Resolving, planning and preflight happen now: a bad request fails here, not in the job.
    const prepared = await prepareBenchmark({
      ...request,
      services: ctx.services,
      bundle: await readRoomBundle(home.rooms, input.room, input.name),
      room: input.room,
      home,
      env: ctx.env,
      runner: ctx.runner,
    });
    const { bundle, plan, candidates, trust } = prepared;

    const work = async (
      signal: AbortSignal,
      progress: (p: OpProgress) => void,
    ): Promise<BenchmarkJobResult> => {
      progress({ progress: 0, total: plan.cells.length, faults: 0, phase: "running" });
      const { result, scorecard, diagnosis } = await runBenchmark(home, prepared, {
        services: ctx.services,
        runner: ctx.runner,
        parallel,
        signal,
        clock: ctx.clock,
        onEvent: (e) => progress(opProgressOf(e)),
      });
      return {
        room: input.room,
        bundle: bundle.name,
        experiment: plan.id,
        complete: scorecard.complete,
        cancelled: result.cancelled,
        cells: result.total,
        graded: result.graded,
        faults: result.faults,
        baseline: scorecard.baseline,
        leaderboard: leaderboardRows(scorecard),
        ...whatWentWrong(diagnosis),
        ...(scorecard.sequential
          ? {
            stopped: scorecard.sequential.comparisons.map(stopText),
            notNeeded: scorecard.sequential.notNeeded,
          }
          : {}),
      };
    };

    const started = {
      room: input.room,
      bundle: bundle.name,
      bundleId: bundle.id,
      experiment: plan.id,
      cells: plan.cells.length,
      candidates: candidates.map((c) => c.name),
      trust,
    };
    if (!ctx.jobs) {
      // No job runner (a one-shot call): run to the end here.
      return {
        ...started,
        ...(await work(ctx.signal ?? new AbortController().signal, (p) => {
          ctx.progress?.(p);
        })),
      };
    }
    const { job } = await ctx.jobs.start("benchmark", input.room, work, {
      op: "catalog_benchmark",
      input,
    });
    ctx.progress?.({
      progress: 0,
      total: plan.cells.length,
      phase: "started",
      message: `job ${job} started: ${plan.cells.length} cells`,
    });
    return { job, pollAfterMs: 2000, status: "running" as const, ...started };
  },
});

/** The ops that run a room's bundles, in the order tools are listed. */
export const CATALOG_RUN_OPS: Op[] = [
  catalogCheck,
  catalogCalibrate,
  catalogCases,
  catalogBenchmark,
];
