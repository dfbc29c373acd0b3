/**
 * Grading as a measured science over MCP: plan a benchmark's size from a pilot experiment
 * (cases × repetitions for a fixed-size paired interval, and the cells sequential stopping
 * is expected to use), and grade an experiment's kept evidence again with a changed checker.
 */
import { z } from "zod";
import { RANGES } from "../ranges.ts";
import { DEFAULT_ALPHA, DEFAULT_DELTA } from "../bench/sequential.ts";
import { planFromPilot } from "../engine/plan_from_pilot.ts";
import { defineOp, type Op, type OpProgress } from "./op.ts";
import { findExperiment, LEADERBOARD_ROW, leaderboardRows } from "./scorecards.ts";
import type { RegradeComparison } from "../bench/regrade_comparison.ts";
import { readRoomBundle } from "./room_bundles.ts";
import { opProgressOf } from "./catalog_run.ts";
import { defineFormat, fields, typed } from "../json_format.ts";
import type { PilotPlan } from "../engine/plan_from_pilot.ts";

const room = z.string().min(1).describe("The room (its slug)");
const experiment = z.string().min(4).max(64).describe(
  "The experiment id catalog_benchmark returned (or a unique prefix of it)",
);

/** A plan from a pilot experiment (experiment_plan, `dvergr plan`). */
export const PLAN_FORMAT = defineFormat(
  "plan",
  1,
  "How many cases × repetitions each comparison of a pilot experiment needs (experiment_plan / `dvergr plan`).",
  z.object({
    room: fields.room.optional().describe("experiment_plan: the room"),
    experiment: fields.experiment,
    bundle: fields.bundle,
    baseline: z.string(),
    halfWidth: z.number(),
    alpha: z.number(),
    delta: z.number(),
    casesAvailable: z.number().int().nullable(),
    comparisons: typed<PilotPlan["comparisons"]>(z.array(z.object({
      candidate: z.string(),
      baseline: z.string(),
      plan: z.looseObject({}).nullable(),
    }))),
  }),
);

export const experimentPlan = defineOp({
  name: "experiment_plan",
  title: "Plan a benchmark from a pilot",
  description: "Reads the paired reward differences (candidate − baseline, same case and " +
    "repetition) of a pilot experiment and plans each comparison: how many cases × " +
    "repetitions a fixed-size paired interval of half_width needs (fixed), the cheapest " +
    "plan that fits the bundle's cases (recommended), and the cells a run with " +
    "stop_when_decided is expected to use on it (sequential, simulated from the pilot).",
  kind: "read",
  toolset: "scorecards",
  roomScoped: true,
  input: z.strictObject({
    room,
    experiment,
    half_width: z.number().min(RANGES.halfWidth.min).max(RANGES.halfWidth.max).describe(
      "The half-width the paired interval of the reward difference should have, e.g. 0.05",
    ),
    alpha: z.number().min(RANGES.alpha.min).max(RANGES.alpha.max).optional().describe(
      "The error level: a (1 − alpha) interval (default 0.05)",
    ),
    delta: z.number().min(RANGES.delta.min).max(RANGES.delta.max).optional().describe(
      "The equivalence margin of the simulated stopping rule (default 0.02)",
    ),
    baseline: z.string().min(1).optional().describe(
      "The candidate the others are compared with, by name or, for a model candidate, by " +
        "its model id or alias as catalog_benchmark's baseline (default: the pilot's " +
        "leaderboard top)",
    ),
  }),
  output: PLAN_FORMAT,
  async handler(ctx, input) {
    const meta = await findExperiment(ctx, input.room, input.experiment);
    return {
      room: input.room,
      ...await planFromPilot(ctx.home, meta, {
        halfWidth: input.half_width,
        alpha: input.alpha ?? DEFAULT_ALPHA,
        delta: input.delta ?? DEFAULT_DELTA,
        baseline: input.baseline,
      }, ctx.services.candidates),
    };
  },
});

/** A regrade's comparison with the original experiment (open: its lists' items). */
export const regradeComparisonShape = typed<RegradeComparison>(z.looseObject({
  original: fields.experiment,
  regrade: fields.experiment,
  cells: z.number().int(),
  compared: z.number().int(),
  unchanged: z.number().int(),
  passedToFailed: z.number().int(),
  failedToPassed: z.number().int(),
  rewardChanged: z.number().int(),
  gainedVerdict: z.number().int(),
  notRegraded: z.record(z.string(), z.number().int()),
  pending: z.number().int(),
  perCandidate: z.array(z.looseObject({})),
  changes: z.array(z.looseObject({})),
  changesNotListed: z.number().int(),
  notRegradedCells: z.array(z.looseObject({})),
  notRegradedNotListed: z.number().int(),
  judge: z.object({ reused: z.number(), asked: z.number(), billedMicros: z.number() }),
}));

/** What a finished re-grade adds to what its start says. */
const regradeEnd = {
  complete: z.boolean(),
  leaderboard: z.array(LEADERBOARD_ROW),
  comparison: regradeComparisonShape,
};

const REGRADE_FORMAT = defineFormat(
  "experiment-regrade",
  2,
  "A re-grade started as a job (poll job_status; its result is the finished form), or run to " +
    "its end where there are no jobs: the new experiment and what changed (experiment_regrade).",
  z.object({
    job: z.string().optional().describe("The job to poll with job_status"),
    pollAfterMs: z.number().int().optional(),
    status: z.literal("running").optional(),
    room: fields.room,
    original: fields.experiment,
    experiment: fields.experiment,
    bundleId: fields.bundleId,
    cells: z.number().int(),
    ...Object.fromEntries(Object.entries(regradeEnd).map(([k, v]) => [k, v.optional()])) as {
      [K in keyof typeof regradeEnd]: z.ZodOptional<(typeof regradeEnd)[K]>;
    },
  }),
);

export const experimentRegrade = defineOp({
  name: "experiment_regrade",
  title: "Re-grade an experiment with a changed checker",
  description: "Grades the attempts of an experiment again with bundle workflows/<name>/ of " +
    "the room (its checker, gold, judge as they are now), from the evidence the home kept " +
    "(the files each attempt left, the pages it fetched, its judge answers), without " +
    "running any candidate. The bundle must pose the same task (task text, fixtures, cases, " +
    "capture, web), else USAGE naming what differs. The result is a new experiment (its " +
    "cells keep the original attempts' outcome, usage, cost and times) and `comparison`: " +
    "the verdicts that changed cell by cell (passedToFailed, failedToPassed, reward " +
    "changed), per candidate before and after, the cells not re-graded and why (evidence " +
    "gone: no verdict, counted as unfinished, not as failures), and the judge answers " +
    "reused or asked anew. It runs as a job: the call checks the bundle and plans, then " +
    "returns {job, experiment}; poll job_status {job, wait_ms} for the result (the same " +
    "fields with complete, leaderboard and comparison). Calling it again resumes.",
  kind: "write",
  toolset: "scorecards",
  roomScoped: true,
  idempotent: true,
  openWorld: true,
  input: z.strictObject({
    room,
    experiment,
    name: z.string().min(1).describe(
      "The changed bundle: workflows/<name>/ of the room (usually the experiment's own, edited)",
    ),
  }),
  output: REGRADE_FORMAT,
  async handler(ctx, input) {
    const meta = await findExperiment(ctx, input.room, input.experiment);
    const { prepareRegrade, runRegrade } = await import("../engine/regrade.ts");
    // Comparing the bundles and planning happen now: a bad request fails here, not in the job.
    const prepared = await prepareRegrade({
      services: ctx.services,
      home: ctx.home,
      original: meta,
      bundle: await readRoomBundle(ctx.home.rooms, input.room, input.name),
      env: ctx.env,
      runner: ctx.runner,
    });
    const started = {
      room: input.room,
      original: meta.id,
      experiment: prepared.plan.id,
      bundleId: prepared.bundle.id,
      cells: prepared.plan.cells.length,
    };
    const work = async (signal: AbortSignal, progress: (p: OpProgress) => void) => {
      progress({ progress: 0, total: started.cells, faults: 0, phase: "running" });
      const o = await runRegrade(ctx.home, prepared, {
        services: ctx.services,
        runner: ctx.runner,
        signal,
        clock: ctx.clock,
        onEvent: (e) => progress(opProgressOf(e)),
      });
      return {
        ...started,
        complete: o.scorecard.complete,
        leaderboard: leaderboardRows(o.scorecard),
        comparison: o.comparison,
      };
    };
    if (!ctx.jobs) {
      // No job runner (a one-shot call, or the job's own process): run to the end here.
      return await work(ctx.signal ?? new AbortController().signal, (p) => ctx.progress?.(p));
    }
    const { job } = await ctx.jobs.start("regrade", input.room, work, {
      op: "experiment_regrade",
      input,
    });
    ctx.progress?.({
      progress: 0,
      total: started.cells,
      phase: "started",
      message: `job ${job} started: ${started.cells} cells`,
    });
    return { job, pollAfterMs: 2000, status: "running" as const, ...started };
  },
});

/** The grading ops, in the order tools are listed. */
export const GRADING_OPS: Op[] = [experimentPlan, experimentRegrade];
