/**
 * A person's decision on a review held for one (proposed or escalated): discard it, or approve
 * it, which merges the fork only while the room's head is still the state that was reviewed
 * (else it stays escalated and nothing is recorded: the run should be made again). A decision
 * is recorded once, beside the review, which never changes.
 */
import { DvergrError } from "../errors.ts";
import type { PersonDecision, ReviewRecord } from "../review/records.ts";
import { deployRecordsOf } from "./production_run.ts";
import { forkDiff, mergeFork, type ReviewRequest } from "./review_run.ts";

/** A review with the person's decision on it, if any: what lists and shows print. */
export interface ReviewView extends ReviewRecord {
  /** The decision that stands: the person's when there is one, else the review's. */
  final: ReviewRecord["decision"];
  person: PersonDecision | null;
}

/** A review and the person's decision on it; NOT_FOUND when there is no such review. */
export async function reviewView(
  req: Pick<ReviewRequest, "home">,
  id: string,
): Promise<ReviewView> {
  const deploy = deployRecordsOf(req.home);
  const review = await deploy.getReview(id);
  if (!review) {
    throw new DvergrError("NOT_FOUND", `No review "${id}" in this home`, {
      hint: "List the reviews with `dvergr review list`",
    });
  }
  const person = await deploy.getDecision(id);
  return { ...review, final: person?.decision ?? review.decision, person };
}

/** The outcome of a person's decision: what stands now and why. */
export interface PersonOutcome {
  review: string;
  decision: "merged" | "discarded" | "escalated";
  why: string;
  merged?: string;
}

/** Approves (merge) or discards a review held for a person. */
export async function decideReview(
  req: ReviewRequest,
  id: string,
  choice: "approve" | "discard",
): Promise<PersonOutcome> {
  const deploy = deployRecordsOf(req.home);
  const view = await reviewView(req, id);
  if (view.final === "merged" || view.final === "discarded") {
    throw new DvergrError("CONFLICT", `Review ${id} is decided already: ${view.final}`, {
      hint: `See it with \`dvergr review show ${id}\``,
    });
  }
  const at = req.clock().toISOString();
  let outcome: PersonOutcome;
  if (choice === "discard") {
    outcome = { review: id, decision: "discarded", why: "discarded by a person" };
  } else {
    const run = await deploy.getRun(view.run);
    if (!run?.fork) throw new Error(`review ${id} names run ${view.run}, which has no fork`);
    const merged = await mergeFork(
      req.home.rooms,
      run,
      view.state,
      (await forkDiff(req.home.rooms, run)).changes,
    );
    if (merged === null) {
      return {
        review: id,
        decision: "escalated",
        why: "the room changed since the review: not merged (run the bundle again)",
      };
    }
    outcome = { review: id, decision: "merged", why: "approved by a person", merged };
  }
  const recorded = await deploy.putDecision({ ...outcome, at } as PersonDecision);
  if (!recorded) {
    throw new DvergrError("CONFLICT", `Review ${id} was decided by someone else meanwhile`, {
      hint: `See it with \`dvergr review show ${id}\``,
    });
  }
  return outcome;
}
