/**
 * What a check and a calibration say as JSON (catalog_check / `dvergr check`,
 * catalog_calibrate / `dvergr calibrate`), apart from the ops that run them
 * (core/ops/catalog_run.ts): `dvergr check` and `calibrate` load these formats without the
 * modules of the other catalog ops.
 */
import { z } from "zod";
import { checkerFacts } from "../bundle/clojure_lint.ts";
import { defineFormat, fields, typed } from "../json_format.ts";
import { calibrationFields, checkerRunShape } from "./formats.ts";
import type { JudgeConsistency } from "../calibrate/judge_consistency.ts";
import type { ReviewCalibration } from "../engine/review_calibration.ts";
import type { Bundle, BundleProblem } from "../bundle/types.ts";
import type { AnswerVerdict, ShapeCheck } from "../engine/check.ts";

const problemShape = z.object({
  file: z.string(),
  line: z.number().int().optional(),
  column: z.number().int().optional(),
  field: z.string().optional(),
  message: z.string(),
});

/** Case ids a check lists at most (`cases` counts them all). */
export const LISTED_CASE_IDS = 1000;

/** What a check says (catalog_check, `dvergr check`). */
export const CHECK_FORMAT = defineFormat(
  "check",
  1,
  "A bundle's shape check, and the checker's verdict on an answer when one was given (catalog_check / `dvergr check`).",
  z.object({
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    ok: z.boolean().describe("No problem: the bundle is well formed and its checker loads"),
    problems: z.array(problemShape),
    title: z.string().optional(),
    cases: z.number().int().optional().describe("Cases of the bundle (0: a single environment)"),
    caseIds: z.array(z.string()).optional().describe(
      `The cases' ids, the first ${LISTED_CASE_IDS}`,
    ),
    files: z.number().int().optional(),
    checker: z.enum(["checker.js", "checker.clj"]).optional(),
    warnings: typed<{ file: "checker.clj" }[]>(z.array(z.looseObject({ file: z.string() })))
      .optional(),
    verdict: typed<AnswerVerdict>(z.object({
      case: z.string().nullable(),
      files: z.array(z.string()),
      run: checkerRunShape,
    })).optional(),
  }),
);

/** A check's report of a bundle with problems, or of a well-formed one. */
export function checkReport(shape: ShapeCheck) {
  if (!shape.ok) {
    const problems: BundleProblem[] = shape.problems;
    return { bundle: shape.name, bundleId: shape.id, ok: false, problems };
  }
  const bundle: Bundle = shape.bundle;
  const facts = checkerFacts(bundle);
  return {
    bundle: bundle.name,
    bundleId: bundle.id,
    ok: true,
    problems: [] as BundleProblem[],
    title: bundle.definition.title,
    cases: bundle.cases.length,
    caseIds: bundle.cases.slice(0, LISTED_CASE_IDS).map((c) => c.id),
    files: bundle.files.size,
    checker: facts.checker,
    warnings: facts.warnings,
  };
}

/** A calibration (catalog_calibrate, `dvergr calibrate`). */
export const CALIBRATE_FORMAT = defineFormat(
  "calibrate",
  1,
  "Whether a bundle's checker grades right: the reference, each damaged variant and, with auto, the mutations (catalog_calibrate / `dvergr calibrate`).",
  z.object({
    bundle: fields.bundle,
    ...calibrationFields,
    judgeConsistency: typed<JudgeConsistency>(z.looseObject({
      ok: z.boolean(),
      k: z.number().int(),
      kappa: z.number().nullable(),
      problems: z.array(z.string()),
    })).optional().describe("With --judge-consistency (CLI): the judge asked k times"),
    reviews: typed<ReviewCalibration>(z.looseObject({
      ok: z.boolean(),
      cases: z.array(z.looseObject({
        name: z.string(),
        expect: z.enum(["approve", "escalate"]),
        got: z.enum(["approve", "escalate"]),
        ok: z.boolean(),
      })),
      problems: z.array(z.string()),
    })).optional().describe("calibration.edn's :reviews asked of the bundle's :review"),
  }),
);
