/**
 * Calibrating a review (calibration.edn `:reviews`): each named update — world files over the
 * bundle's fixtures, nil for a removal — is put to the bundle's `:review` as a run's fork
 * would be (the checks, the checker without gold, the reviewer model), and the review's
 * answer must be what `:expect` says: approve (it would be merged or proposed) or escalate.
 * The spot check is left out: it samples approvals, it does not judge them. A reviewer that
 * approves everything fails the damaged updates the checks let through.
 */
import type { Bundle } from "../bundle/types.ts";
import { checkerInputFor } from "../bundle/checker_input.ts";
import type { CheckerRunner } from "../checker.ts";
import { captureChanges } from "../review/fork_diff.ts";
import { reviewerPrompt, runChecks } from "../review/decide.ts";
import type { CheckResult, ReviewerResult } from "../review/records.ts";
import { askReviewer, type ReviewerDeps, reviewSpecOf } from "./review_run.ts";

/** One update's review, against what calibration.edn expects. */
export interface ReviewCalibrationCase {
  name: string;
  expect: "approve" | "escalate";
  got: "approve" | "escalate";
  ok: boolean;
  checks: CheckResult[];
  reviewer: ReviewerResult | null;
}

export interface ReviewCalibration {
  ok: boolean;
  cases: ReviewCalibrationCase[];
  problems: string[];
}

/** The world an update leaves: the fixtures with its files written (nil removes). */
function worldAfter(bundle: Bundle, files: Record<string, string | null>): Record<string, string> {
  const world = { ...bundle.fixtures };
  for (const [p, t] of Object.entries(files)) {
    if (t === null) delete world[p];
    else world[p] = t;
  }
  return world;
}

/** The files under the bundle's capture directories (what a run's checker sees). */
function captured(bundle: Bundle, world: Record<string, string>): Record<string, string> {
  const dirs = bundle.definition.capture.map((d) => d.endsWith("/") ? d : d + "/");
  return Object.fromEntries(
    Object.entries(world).filter(([p]) => dirs.some((d) => p.startsWith(d))),
  );
}

/** Asks the bundle's review about every `:reviews` update; null when there are none. */
export async function calibrateReviews(
  bundle: Bundle,
  runner: CheckerRunner,
  deps: ReviewerDeps,
): Promise<ReviewCalibration | null> {
  const reviews = bundle.calibration?.reviews ?? {};
  if (Object.keys(reviews).length === 0) return null;
  const review = bundle.definition.review;
  if (!review) {
    return {
      ok: false,
      cases: [],
      problems: ["calibration.edn has :reviews but workflow.edn has no :review to ask"],
    };
  }
  const spec = reviewSpecOf(review);
  const cases: ReviewCalibrationCase[] = [];
  for (const [name, c] of Object.entries(reviews)) {
    const world = worldAfter(bundle, c.files);
    const files = captured(bundle, world);
    const changes = captureChanges(bundle.fixtures, files, bundle.definition.capture);
    for (const [p, t] of Object.entries(c.files)) {
      const room = p.replace(/^\/+/, "");
      if (!changes.has(room) && bundle.fixtures[p] !== (t ?? undefined)) changes.set(room, t);
    }
    const input = checkerInputFor({ ...bundle, gold: null, cases: [] }, {
      files,
      caseId: null,
      params: {},
    });
    const run = await runner.check(bundle.checker, input);
    const checks = runChecks(spec, {
      changes,
      conflicts: [],
      reward: run.ok ? run.verdict.reward : null,
    });
    const before = new Map(
      [...changes.keys()].filter((p) => bundle.fixtures["/" + p] !== undefined)
        .map((p) => [p, bundle.fixtures["/" + p]]),
    );
    const reviewer = spec.reviewer && checks.every((x) => x.ok)
      ? await askReviewer(
        deps,
        spec.reviewer,
        reviewerPrompt(spec.reviewer.instructions, checks, changes, before),
      )
      : null;
    const approved = checks.every((x) => x.ok) &&
      (!reviewer || (reviewer.verdict === "approve" && !reviewer.problem));
    const got = approved ? "approve" : "escalate";
    cases.push({ name, expect: c.expect, got, ok: got === c.expect, checks, reviewer });
  }
  const problems = cases.filter((c) => !c.ok).map((c) =>
    `review ${c.name}: expected :${c.expect}, the review would ${c.got}` +
    (c.got === "approve" ? " (a damaged update let through)" : ` (${whyEscalated(c)})`)
  );
  return { ok: problems.length === 0, cases, problems };
}

function whyEscalated(c: ReviewCalibrationCase): string {
  const failed = c.checks.filter((x) => !x.ok);
  if (failed.length > 0) return failed.map((x) => `${x.check}: ${x.evidence}`).join("; ");
  return c.reviewer?.problem ?? `the reviewer escalated: ${c.reviewer?.concerns.join("; ")}`;
}
