/**
 * Shapes shared by several JSON formats (core/json_format.ts): a checker run, a calibration,
 * a scorecard, a promotion. One definition each, so the CLI's `--json` and the MCP tools say
 * the same thing the same way. Nested domain values are open objects: the fields named here
 * are the contract, others may be added.
 */
import { z } from "zod";
import { fields, typed } from "../json_format.ts";
import type { CheckerRun } from "../checker.ts";
import type { CalibrationResult } from "../calibrate/calibrate.ts";
import type { AutoCalibration } from "../calibrate/auto.ts";
import type { Scorecard } from "../bench/scorecard.ts";
import type { Promotion } from "../ports/state_store.ts";

/** A checker's verdict: each check's result and the reward. */
export const verdictShape = z.object({
  checks: z.record(z.string(), z.boolean()),
  reward: z.number().min(0).max(1),
});

/** A checker run: a verdict, or a fault with its reason. */
export const checkerRunShape = typed<CheckerRun>(
  z.looseObject({
    ok: z.boolean(),
    verdict: verdictShape.optional(),
    fault: z.string().optional(),
    message: z.string().optional(),
    ms: z.number(),
    logs: z.array(z.string()).optional(),
  }),
);

/** A calibration's fields: the reference and each damaged variant graded, and what is wrong. */
export const calibrationFields = {
  ok: z.boolean().describe("The checker grades right as calibration.edn says"),
  bundleId: fields.bundleId,
  reference: checkerRunShape.nullable(),
  damaged: typed<CalibrationResult["damaged"]>(
    z.record(
      z.string(),
      z.looseObject({ run: checkerRunShape, kept: z.array(z.string()), ok: z.boolean() }),
    ),
  ),
  problems: z.array(z.string()),
  case: z.string().optional().describe(
    "The generated world it graded against, for a bundle with generator.js (e.g. gen-test-0000)",
  ),
  auto: typed<AutoCalibration>(
    z.looseObject({
      ok: z.boolean(),
      minMargin: z.number(),
      referenceReward: z.number().nullable(),
      margin: z.number().nullable(),
      closest: z.string().nullable(),
      brittle: z.array(z.string()),
      mutations: z.array(z.looseObject({})),
      problems: z.array(z.string()),
    }),
  ).optional(),
};

/** A calibration, as promote carries it. */
export const calibrationShape = z.object(calibrationFields);

/** A calibration in brief, as an export's manifest records it. */
export const calibrationSummaryShape = z.object({
  ok: z.boolean(),
  problems: z.array(z.string()),
});

/** Where and when a bundle's content was promoted on this host. */
export const promotionShape = typed<Promotion>(
  z.object({ room: fields.room, bundle: fields.bundle, at: fields.time }),
);

const nullableNumber = z.number().nullable();

/** A candidate's line of a scorecard. */
const candidateSummaryShape = z.looseObject({
  candidate: z.string(),
  attempts: z.number().int(),
  passes: z.number().int(),
  passRate: nullableNumber,
  passInterval: fields.interval.nullable(),
  meanReward: nullableNumber,
  rewardInterval: fields.interval.nullable(),
  checkRates: z.record(z.string(), z.number()),
  failedChecks: z.record(z.string(), z.number()),
  faults: z.number().int(),
  plannedCells: z.number().int(),
  unfinished: z.number().int(),
  notNeeded: z.number().int().optional(),
  rankedReward: z.number(),
  rankedPassRate: z.number(),
  outcomes: z.record(z.string(), z.number()).optional(),
  cost: z.looseObject({
    billedMicros: z.number(),
    listMicros: z.number(),
    unpricedAttempts: z.number().int(),
  }),
  tokens: z.looseObject({ input: z.number(), output: z.number() }),
  time: z.looseObject({ medianMs: nullableNumber, summedMs: z.number() }),
  isolated: z.boolean(),
  notIsolated: z.number().int(),
  trust: fields.trust,
  web: z.looseObject({}).optional(),
});

/** The scorecard of an experiment (format dvergr-scorecard/1 on its own). */
export const scorecardShape = typed<Scorecard>(
  z.looseObject({
    format: z.literal("dvergr-scorecard/1"),
    experimentId: fields.experiment,
    bundleId: fields.bundleId,
    trust: fields.trust,
    complete: z.boolean(),
    incomplete: z.object({ cells: z.number().int(), faults: z.number().int() }).nullable(),
    expectedCells: z.number().int(),
    gradedCells: z.number().int(),
    isolated: z.boolean(),
    wallClockMs: nullableNumber,
    candidates: z.array(candidateSummaryShape),
    leaderboard: z.array(z.string()).describe("Candidate names, best first"),
    baseline: z.string().nullable(),
    comparisons: z.array(z.looseObject({
      candidate: z.string(),
      baseline: z.string(),
      rewardDifference: nullableNumber,
      rewardDifferenceInterval: fields.interval.nullable(),
      pairedCases: z.number().int(),
      pPassRateHigher: nullableNumber,
      pPassRateNoWorse: nullableNumber,
      mcnemar: z.object({
        pairs: z.number().int(),
        b: z.number().int(),
        c: z.number().int(),
        p: z.number(),
      }),
      costPerPassRatio: nullableNumber,
      microsPerPassSaved: nullableNumber,
    })),
    sequential: z.looseObject({}).optional(),
  }),
);
