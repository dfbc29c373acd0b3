/**
 * Grading as a measured science over MCP: plan a benchmark's size from a pilot experiment
 * (cases × repetitions for a fixed-size paired interval, and the cells sequential stopping
 * is expected to use), and grade an experiment's kept evidence again with a changed checker.
 */
import { z } from "zod";
import { RANGES } from "../ranges.ts";
import { DEFAULT_ALPHA, DEFAULT_DELTA } from "../bench/sequential.ts";
import { planFromPilot } from "../engine/plan_from_pilot.ts";
import { defineOp, type Op } from "./op.ts";
import { findExperiment, LEADERBOARD_ROW, leaderboardRows } from "./scorecards.ts";
import type { RegradeComparison } from "../bench/regrade_comparison.ts";
import { readRoomBundle } from "./room_bundles.ts";
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

const REGRADE_FORMAT = defineFormat(
  "experiment-regrade",
  1,
  "An experiment graded again with a changed checker: the new experiment and what changed (experiment_regrade).",
  z.object({
    room: fields.room,
    original: fields.experiment,
    experiment: fields.experiment,
    bundleId: fields.bundleId,
    complete: z.boolean(),
    leaderboard: z.array(LEADERBOARD_ROW),
    comparison: regradeComparisonShape,
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
    "reused or asked anew. Calling it again resumes.",
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
    const { regradeExperiment } = await import("../engine/regrade.ts");
    const o = await regradeExperiment({
      services: ctx.services,
      home: ctx.home,
      original: meta,
      bundle: await readRoomBundle(ctx.home.rooms, input.room, input.name),
      env: ctx.env,
      runner: ctx.runner,
      signal: ctx.signal,
      clock: ctx.clock,
    });
    return {
      room: input.room,
      original: meta.id,
      experiment: o.plan.id,
      bundleId: o.bundle.id,
      complete: o.scorecard.complete,
      leaderboard: leaderboardRows(o.scorecard),
      comparison: o.comparison,
    };
  },
});

/** The grading ops, in the order tools are listed. */
export const GRADING_OPS: Op[] = [experimentPlan, experimentRegrade];
