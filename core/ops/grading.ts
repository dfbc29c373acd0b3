/**
 * Grading as a measured science over MCP: plan a benchmark's size from a pilot experiment
 * (cases × repetitions for a fixed-size paired interval, and the cells sequential stopping
 * is expected to use).
 */
import { z } from "zod";
import { RANGES } from "../ranges.ts";
import { DEFAULT_ALPHA, DEFAULT_DELTA } from "../bench/sequential.ts";
import { planFromPilot } from "../engine/plan_from_pilot.ts";
import { defineOp, type Op } from "./op.ts";
import { findExperiment } from "./scorecards.ts";

const room = z.string().min(1).describe("The room (its slug)");
const experiment = z.string().min(4).max(64).describe(
  "The experiment id catalog_benchmark returned (or a unique prefix of it)",
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
      "The candidate the others are compared with (default: the pilot's leaderboard top)",
    ),
  }),
  async handler(ctx, input) {
    const meta = await findExperiment(ctx, input.room, input.experiment);
    return {
      room: input.room,
      ...await planFromPilot(ctx.home, meta, {
        halfWidth: input.half_width,
        alpha: input.alpha ?? DEFAULT_ALPHA,
        delta: input.delta ?? DEFAULT_DELTA,
        baseline: input.baseline,
      }),
    };
  },
});

/** The grading ops, in the order tools are listed. */
export const GRADING_OPS: Op[] = [experimentPlan];
