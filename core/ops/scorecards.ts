/**
 * Reading what benchmarks found, per room: the scorecards of its experiments (leaderboard
 * rows with intervals; the full scorecard with paired comparisons), the Markdown report,
 * and the progress of experiments still running. Scorecards of complete experiments are
 * read as stored; others are computed from the attempt records as they stand.
 */
import { z } from "zod";
import { DvergrError } from "../errors.ts";
import { type Scorecard, scorecardOfFold, scorecardRecordCheck } from "../bench/scorecard.ts";
import { renderReport, type ReportOptions } from "../bench/report.ts";
import { reportOptionsOf } from "../bench/report_options.ts";
import { diagnosisOfFold } from "../bench/diagnosis.ts";
import { brokenCandidate, brokenLine } from "../bench/outcome.ts";
import { foldGroupedHistory, HistoryFold } from "../bench/history_fold.ts";
import type { ExperimentDefinition } from "../bench/experiment.ts";
import type { Interval } from "../bench/stats.ts";
import type { TrustTier } from "../bench/records.ts";
import { type ExperimentMeta, trustOf } from "../ports/state_store.ts";
import type { Home } from "../ports/home.ts";
import { pageParams, pageText } from "./paging.ts";
import { experimentBundle } from "../engine/experiment_bundle.ts";
import { compareRegrade } from "../engine/regrade.ts";
import { planOfDefinition } from "../bench/experiment.ts";
import { defineOp, type Op, type OpContext } from "./op.ts";
import { defineFormat, fields, typed } from "../json_format.ts";
import { scorecardShape } from "./formats.ts";
import { textPageFields } from "./paging.ts";
import { JOB_SHAPE, jobsOf, jobView } from "./jobs.ts";

const room = z.string().min(1).describe("The room (its slug)");
const experiment = z.string().min(4).max(64).describe(
  "The experiment id catalog_benchmark returned (or a unique prefix of it)",
);
/** The candidate the others are compared against. */
const baselineField = z.string().min(1).optional().describe(
  "The candidate to compare the others against (default: the leaderboard's top)",
);

function dollars(micros: number): number {
  return Math.round(micros) / 1e6;
}

/** A candidate's line on a leaderboard. */
export interface LeaderboardRow {
  rank: number;
  candidate: string;
  meanReward: number | null;
  rewardInterval: Interval | null;
  passRate: number | null;
  passInterval: Interval | null;
  passes: number;
  attempts: number;
  faults: number;
  /** Cells planned for the candidate; the rank counts all of them. */
  planned: number;
  /** Planned cells without a verdict, counted as not passed. */
  unfinished: number;
  /** Cells skipped as not needed (sequential stopping); absent without it. */
  notNeeded?: number;
  /** What the rank is by: reward summed over graded cells ÷ planned cells. */
  rankedReward: number;
  /** Passes ÷ planned cells. */
  rankedPassRate: number;
  /** null when the cost is unknown (a model without prices in the registry). */
  listDollars: number | null;
  billedDollars: number | null;
  trust: TrustTier;
}

/**
 * One leaderboard row per candidate, best first (by reward over every planned cell, unfinished
 * ones counting 0): reward and pass rate with their 95% intervals.
 */
export function leaderboardRows(sc: Scorecard): LeaderboardRow[] {
  const byName = new Map(sc.candidates.map((c) => [c.candidate, c]));
  return sc.leaderboard.map((name, i) => {
    const c = byName.get(name)!;
    const unknownCost = (c.cost.unpricedAttempts ?? 0) > 0;
    return {
      rank: i + 1,
      candidate: name,
      meanReward: c.meanReward,
      rewardInterval: c.rewardInterval,
      passRate: c.passRate,
      passInterval: c.passInterval,
      passes: c.passes,
      attempts: c.attempts,
      faults: c.faults,
      planned: c.plannedCells,
      unfinished: c.unfinished,
      ...(c.notNeeded !== undefined ? { notNeeded: c.notNeeded } : {}),
      rankedReward: c.rankedReward,
      rankedPassRate: c.rankedPassRate,
      listDollars: unknownCost ? null : dollars(c.cost.listMicros),
      billedDollars: unknownCost ? null : dollars(c.cost.billedMicros),
      trust: c.trust,
    };
  });
}

async function requireRoom(ctx: OpContext, slug: string): Promise<void> {
  if (!(await ctx.home.rooms.hasRoom(slug))) {
    throw new DvergrError("NOT_FOUND", `Cannot open room "${slug}": no such room in this home`, {
      hint: "room_list shows the rooms; room_create makes one",
    });
  }
}

/** The experiment of a room by id or unique prefix; NOT_FOUND names the room's recent ones. */
export async function findExperiment(
  ctx: OpContext,
  slug: string,
  id: string,
): Promise<ExperimentMeta> {
  await requireRoom(ctx, slug);
  const all = await ctx.home.state.listExperiments(slug);
  const exact = all.find((m) => m.id === id);
  if (exact) return exact;
  const matches = all.filter((m) => m.id.startsWith(id));
  if (matches.length === 1) return matches[0];
  const recent = all.slice(-5).reverse().map((m) => `${m.id} (${m.bundleName})`);
  if (matches.length > 1) {
    throw new DvergrError(
      "USAGE",
      `Cannot tell which experiment "${id}" means in room "${slug}": ${matches.length} ids start with it`,
      { hint: "Give more of the id, as catalog_benchmark or scorecard_list returned it" },
    );
  }
  throw new DvergrError("NOT_FOUND", `Room "${slug}" has no experiment "${id}"`, {
    hint: recent.length
      ? `Its latest experiments: ${recent.join(", ")}`
      : "It has none yet: catalog_benchmark starts one",
  });
}

/** The scorecard of an experiment: stored when complete, else from its records as they stand. */
export async function scorecardOf(
  home: Home,
  meta: ExperimentMeta,
  baseline?: string,
): Promise<Scorecard> {
  const { state } = home;
  if (baseline === undefined) {
    const stored = await state.getScorecard(meta.id);
    if (stored) return stored as Scorecard;
  }
  const def = meta.definition as unknown as ExperimentDefinition;
  const opts = {
    candidates: def.candidates.map((c) => c.name),
    expectedCells: meta.cells,
    baseline,
    trust: await trustOf(state, meta.bundleId),
    bundleId: meta.bundleId,
    experimentId: meta.id,
  };
  const fold = new HistoryFold(opts.candidates);
  await foldGroupedHistory(state.streamAttemptHistory(meta.id), fold, scorecardRecordCheck(opts));
  return scorecardOfFold(fold, opts);
}

/**
 * How far an experiment is: the cells whose latest try has a verdict (read from its stored
 * scorecard when it is complete, else counted from the records as they stream).
 */
export async function experimentStanding(
  home: Home,
  meta: ExperimentMeta,
): Promise<{ graded: number; complete: boolean }> {
  if (await home.state.getScorecard(meta.id)) return { graded: meta.cells, complete: true };
  let graded = 0;
  for await (const r of home.state.streamCellRecords(meta.id)) if (r.verdict !== null) graded++;
  return { graded, complete: graded >= meta.cells };
}

/** An experiment's records folded as they stream: every try, or the latest of each cell. */
async function foldedRecords(
  home: Home,
  meta: ExperimentMeta,
  which: "history" | "latest",
): Promise<HistoryFold> {
  const def = meta.definition as unknown as ExperimentDefinition;
  const fold = new HistoryFold(def.candidates.map((c) => c.name));
  const { state } = home;
  await foldGroupedHistory(
    which === "history" ? state.streamAttemptHistory(meta.id) : state.streamCellRecords(meta.id),
    fold,
  );
  return fold;
}

/** What an experiment's report is made of, as the home keeps it. */
export interface ExperimentReportParts {
  scorecard: Scorecard;
  options: ReportOptions;
}

/**
 * The scorecard and report options of an experiment, from the home: the same report the
 * benchmark wrote when it ended (or, while it runs, the report of its cells so far).
 */
export async function experimentReportParts(
  home: Home,
  meta: ExperimentMeta,
  baseline?: string,
): Promise<ExperimentReportParts> {
  const scorecard = await scorecardOf(home, meta, baseline);
  const bundle = await experimentBundle(home, meta);
  const definition = meta.definition as unknown as ExperimentDefinition;
  const diagnosis = diagnosisOfFold(await foldedRecords(home, meta, "history"), {
    candidates: definition.candidates.map((c) => c.name),
    cases: definition.cases,
    // Generated worlds are not kept with the bundle: the set it made is all its cases.
    bundleCases: definition.generated?.count ?? bundle?.cases.length ??
      definition.cases?.length ?? 0,
  });
  const options = reportOptionsOf({
    definition,
    bundleName: meta.bundleName,
    bundle,
    scorecard,
    diagnosis,
  });
  const from = definition.regradeOf ? await home.state.getExperiment(definition.regradeOf) : null;
  if (from) {
    const originalPlan = planOfDefinition(
      from.definition as unknown as ExperimentDefinition,
      from.id,
    );
    options.regrade = await compareRegrade(
      home.state,
      originalPlan,
      planOfDefinition(definition, meta.id),
    );
  }
  return { scorecard, options };
}

/** A leaderboard row as the formats carry it. */
export const LEADERBOARD_ROW = z.object({
  rank: z.number().int(),
  candidate: z.string(),
  meanReward: z.number().nullable(),
  rewardInterval: fields.interval.nullable(),
  passRate: z.number().nullable(),
  passInterval: fields.interval.nullable(),
  passes: z.number().int(),
  attempts: z.number().int(),
  faults: z.number().int(),
  planned: z.number().int().describe("Cells planned for the candidate; the rank counts all"),
  unfinished: z.number().int(),
  notNeeded: z.number().int().optional(),
  rankedReward: z.number().describe("Reward summed over graded cells ÷ planned cells"),
  rankedPassRate: z.number(),
  listDollars: z.number().nullable().describe("null: the cost is unknown (a model without prices)"),
  billedDollars: z.number().nullable(),
  trust: fields.trust,
});

const SCORECARD_LIST_FORMAT = defineFormat(
  "scorecard-list",
  1,
  "The experiments of a room, newest first, each with its leaderboard (scorecard_list).",
  z.object({
    room: fields.room,
    experiments: z.array(z.object({
      experiment: fields.experiment,
      bundle: fields.bundle,
      bundleId: fields.bundleId,
      createdAt: fields.time,
      cells: z.number().int(),
      graded: z.number().int(),
      complete: z.boolean(),
      trust: fields.trust,
      baseline: z.string().nullable(),
      leaderboard: z.array(LEADERBOARD_ROW),
    })),
    total: z.number().int(),
  }),
);

const SCORECARD_DETAIL_FORMAT = defineFormat(
  "scorecard-detail",
  1,
  "An experiment's leaderboard and full scorecard (scorecard_detail).",
  z.object({
    room: fields.room,
    experiment: fields.experiment,
    bundle: fields.bundle,
    leaderboard: z.array(LEADERBOARD_ROW),
    scorecard: scorecardShape,
  }),
);

const REPORT_FORMAT = defineFormat(
  "experiment-report",
  1,
  "A page of an experiment's Markdown report (experiment_report).",
  z.object({
    room: fields.room,
    experiment: fields.experiment,
    complete: z.boolean(),
    ...textPageFields,
    markdown: z.string(),
  }),
);

const PROGRESS_FORMAT = defineFormat(
  "experiment-progress",
  1,
  "Where a room's experiments stand, per candidate, with failure causes and running jobs (experiment_progress).",
  z.object({
    room: fields.room,
    experiments: z.array(z.object({
      experiment: fields.experiment,
      bundle: fields.bundle,
      createdAt: fields.time,
      cells: z.number().int(),
      graded: z.number().int(),
      faults: z.number().int(),
      complete: z.boolean(),
      candidates: z.array(z.object({
        candidate: z.string(),
        cells: z.number(),
        verdicts: z.number().int(),
        passes: z.number().int(),
        faults: z.number().int(),
        meanReward: z.number().nullable(),
        billedDollars: z.number().nullable(),
        listDollars: z.number().nullable(),
        outcomes: z.record(z.string(), z.number().int()),
        failureCauses: typed<unknown[]>(z.array(z.looseObject({}))),
      })),
      broken: z.array(z.string()),
    })),
    runningJobs: z.array(JOB_SHAPE),
  }),
);

export const scorecardList = defineOp({
  name: "scorecard_list",
  title: "List scorecards",
  description: "The experiments of a room, newest first, each with its leaderboard: per " +
    "candidate the mean reward and pass rate with 95% intervals, faults and cost. " +
    "scorecard_detail gives one in full.",
  kind: "read",
  toolset: "scorecards",
  roomScoped: true,
  input: z.strictObject({
    room,
    limit: z.number().int().min(1).max(100).optional().describe(
      "At most this many experiments (default 10)",
    ),
  }),
  output: SCORECARD_LIST_FORMAT,
  async handler(ctx, input) {
    await requireRoom(ctx, input.room);
    const all = (await ctx.home.state.listExperiments(input.room)).reverse();
    const shown = all.slice(0, input.limit ?? 10);
    const experiments = [];
    for (const meta of shown) {
      const sc = await scorecardOf(ctx.home, meta);
      experiments.push({
        experiment: meta.id,
        bundle: meta.bundleName,
        bundleId: meta.bundleId,
        createdAt: meta.createdAt,
        cells: meta.cells,
        graded: sc.gradedCells,
        complete: sc.complete,
        trust: sc.trust,
        baseline: sc.baseline,
        leaderboard: leaderboardRows(sc),
      });
    }
    return { room: input.room, experiments, total: all.length };
  },
});

export const scorecardDetail = defineOp({
  name: "scorecard_detail",
  title: "Scorecard of an experiment",
  description: "The full scorecard of an experiment: per candidate reward, pass rate and " +
    "per-check pass rates with intervals, faults, cost, tokens and time; the paired " +
    "comparison of every candidate against the baseline (reward difference, McNemar).",
  kind: "read",
  toolset: "scorecards",
  roomScoped: true,
  input: z.strictObject({
    room,
    experiment,
    baseline: baselineField,
  }),
  output: SCORECARD_DETAIL_FORMAT,
  async handler(ctx, input) {
    const meta = await findExperiment(ctx, input.room, input.experiment);
    const scorecard = await scorecardOf(ctx.home, meta, input.baseline);
    return {
      room: input.room,
      experiment: meta.id,
      bundle: meta.bundleName,
      leaderboard: leaderboardRows(scorecard),
      scorecard,
    };
  },
});

export const experimentReport = defineOp({
  name: "experiment_report",
  title: "Experiment report",
  description: "The Markdown report of an experiment: the cost/reward frontier, resources, " +
    "the paired comparisons against the baseline, the failing checks, and for case packs " +
    "the cases that could not grade. A page of at most 40,000 characters from `offset`; a " +
    "longer report says the offset of the next page (`nextOffset`).",
  kind: "read",
  toolset: "scorecards",
  roomScoped: true,
  input: z.strictObject({
    room,
    experiment,
    baseline: baselineField,
    ...pageParams("character", 40_000, 40_000),
  }),
  output: REPORT_FORMAT,
  async handler(ctx, input) {
    const meta = await findExperiment(ctx, input.room, input.experiment);
    const { scorecard, options } = await experimentReportParts(ctx.home, meta, input.baseline);
    const markdown = renderReport(scorecard, options);
    const { text, ...page } = pageText(
      markdown,
      input.offset ?? 0,
      input.limit,
      "experiment_report with offset",
    );
    return {
      room: input.room,
      experiment: meta.id,
      complete: scorecard.complete,
      ...page,
      markdown: text,
    };
  },
});

export const experimentProgress = defineOp({
  name: "experiment_progress",
  title: "Experiment progress",
  description: "Where the experiments of a room stand: per experiment and candidate the " +
    "cells with a verdict, outcome counts (passed, failed, crashed, timed-out, budget, " +
    "fault), failureCauses (each distinct cause with its count and an example: exit " +
    "status, stderr's last lines, the fault's reason), mean reward and spend; candidates " +
    "whose every attempt crashed or faulted; and the room's running jobs. attempt_export " +
    "shows one attempt in full.",
  kind: "read",
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    limit: z.number().int().min(1).max(100).optional().describe(
      "At most this many experiments, newest first (default 5)",
    ),
  }),
  output: PROGRESS_FORMAT,
  async handler(ctx, input) {
    await requireRoom(ctx, input.room);
    const { state } = ctx.home;
    const metas = (await state.listExperiments(input.room)).reverse().slice(0, input.limit ?? 5);
    const experiments = [];
    for (const meta of metas) {
      const def = meta.definition as unknown as ExperimentDefinition;
      const fold = await foldedRecords(ctx.home, meta, "latest");
      const candidates = def.candidates.map(({ name }) => {
        const c = fold.candidates.get(name)!;
        let rewards = 0;
        for (const i of fold.canonicalRows(name)) rewards += c.reward.at(i);
        return {
          candidate: name,
          cells: meta.cells / Math.max(1, def.candidates.length),
          verdicts: c.graded,
          passes: c.passes,
          faults: c.latest - c.graded,
          meanReward: c.graded ? rewards / c.graded : null,
          // A model without prices has no known cost: null, never $0.
          billedDollars: c.unpriced > 0 ? null : dollars(c.billed),
          listDollars: c.unpriced > 0 ? null : dollars(c.list),
          outcomes: { ...c.outcomes },
          // Each distinct cause of the attempts that did not pass, with one example.
          failureCauses: c.causes.causes(),
        };
      });
      const broken = candidates.flatMap((c) => {
        const b = brokenCandidate(c.candidate, c.outcomes, () => c.failureCauses);
        return b ? [b] : [];
      });
      const graded = fold.graded;
      experiments.push({
        experiment: meta.id,
        bundle: meta.bundleName,
        createdAt: meta.createdAt,
        cells: meta.cells,
        graded,
        faults: fold.latest - graded,
        complete: graded >= meta.cells,
        candidates,
        // Candidates every attempt of which crashed or faulted: one line each, with a hint.
        broken: broken.map(brokenLine),
      });
    }
    const running = (await jobsOf(ctx).list(input.room)).filter((j) => j.status === "running");
    return {
      room: input.room,
      experiments,
      runningJobs: running.map((j) => jobView(j, { result: false })),
    };
  },
});

/** The scorecard ops, in the order tools are listed. */
export const SCORECARD_OPS: Op[] = [
  scorecardList,
  scorecardDetail,
  experimentReport,
  experimentProgress,
];
