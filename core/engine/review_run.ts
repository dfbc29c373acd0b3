/**
 * The review of a run's fork, from the retained world to a decision: the deterministic checks
 * over the fork's diff (a failed one decides `:on-fail` and the reviewer is never asked), then
 * the reviewer model (no tools, a budget, the changed files shown as untrusted data; one EDN
 * map as its answer), the spot check, and the decision. A merge moves the room's head from
 * the state that was reviewed to the fork (or to a merge commit on it) in one compare-and-swap:
 * a room that moved meanwhile escalates instead. The review is written once, immutable.
 */
import { contentHash } from "../bench/experiment.ts";
import { DvergrError, isDvergrError } from "../errors.ts";
import type { Home } from "../ports/home.ts";
import type { Services } from "../ports/services.ts";
import type { RoomStore } from "../ports/room_store.ts";
import {
  decide,
  readReviewerAnswer,
  REVIEWER_SYSTEM,
  reviewerPrompt,
  runChecks,
  spotCheckValue,
} from "../review/decide.ts";
import type { CheckResult, ReviewerResult, ReviewRecord, RunRecord } from "../review/records.ts";
import { readReviewSpec, type ReviewerSpec, type ReviewSpec } from "../review/spec.ts";
import { deployRecordsOf } from "./production_run.ts";

export interface ReviewRequest {
  services: Services;
  home: Home;
  env: (name: string) => string | undefined;
  clock: () => Date;
  signal?: AbortSignal;
}

/** A fork's changes against its base, and the base's texts of the changed paths. */
export interface ForkDiff {
  changes: Map<string, string | null>;
  before: Map<string, string>;
}

/** Reads what a run's fork changes (paths of the run's record) and what was there before. */
export async function forkDiff(rooms: RoomStore, run: RunRecord): Promise<ForkDiff> {
  const fork = run.fork!;
  const [base, after] = await Promise.all([
    rooms.readFiles(run.room, undefined, run.base),
    rooms.readFiles(run.room, undefined, fork.commit),
  ]);
  const changes = new Map<string, string | null>();
  const before = new Map<string, string>();
  for (const p of run.changed ?? []) {
    changes.set(p, after.get(p) ?? null);
    const b = base.get(p);
    if (b !== undefined) before.set(p, b);
  }
  return { changes, before };
}

/** Changed paths the room changed too between the run's base and `state`. */
async function conflictsWith(rooms: RoomStore, run: RunRecord, state: string, diff: ForkDiff) {
  if (state === run.base) return [];
  const now = await rooms.readFiles(run.room, undefined, state);
  return [...diff.changes.keys()].filter((p) => now.get(p) !== diff.before.get(p));
}

/** What asking the reviewer needs: the judge port, the environment (its key) and the home. */
export interface ReviewerDeps {
  services: Pick<Services, "judges">;
  env: (name: string) => string | undefined;
  homeDir?: string;
  signal?: AbortSignal;
}

/** Asks the reviewer model; any failure is a result that escalates, never an exception. */
export async function askReviewer(
  req: ReviewerDeps,
  r: ReviewerSpec,
  prompt: string,
): Promise<ReviewerResult> {
  const failed = (problem: string, billedMicros = 0): ReviewerResult => ({
    model: r.model,
    verdict: null,
    reasons: [],
    concerns: [],
    problem,
    answer: null,
    billedMicros,
  });
  let judge;
  try {
    judge = await req.services.judges.create(r.model, { env: req.env, homeDir: req.homeDir });
  } catch (e) {
    if (!isDvergrError(e)) throw e;
    return failed(`the reviewer could not be reached: ${e.message}`);
  }
  const res = await judge.ask(prompt, req.signal, {
    system: REVIEWER_SYSTEM,
    maxTokens: 2000,
    answerLimit: 20_000,
  });
  if (!res.ok) return failed(`the reviewer's call failed: ${res.message}`, res.billedMicros);
  const answer = readReviewerAnswer(res.answer);
  const over = res.billedMicros > r.budgetMicros
    ? `the review cost ${res.billedMicros / 1e6} $, over its budget of ${r.budgetMicros / 1e6} $`
    : null;
  return {
    model: r.model,
    ...answer,
    problem: answer.problem ?? over,
    answer: res.answer.slice(0, 4000),
    billedMicros: res.billedMicros,
  };
}

/**
 * Merges a reviewed fork: a fast-forward when the room is still at the run's base, else a
 * merge commit on the reviewed state. Null (nothing moved) when the head is not `state`.
 */
export async function mergeFork(
  rooms: RoomStore,
  run: RunRecord,
  state: string,
  changes: Map<string, string | null>,
): Promise<string | null> {
  const fork = run.fork!.commit;
  if (state === run.base) return await rooms.moveHead(run.room, state, fork) ? fork : null;
  if (await rooms.head(run.room) !== state) return null;
  const merge = await rooms.commitOn(run.room, {
    on: state,
    changes,
    message: `Merge run ${run.id} of ${run.name}`,
    also: [fork],
  });
  return await rooms.moveHead(run.room, state, merge) ? merge : null;
}

/** The review spec of a bundle's `:review` map (already checked by the bundle's parse). */
export function reviewSpecOf(review: Record<string, unknown>): ReviewSpec {
  const { spec, problems } = readReviewSpec(review);
  if (problems.length > 0) {
    throw new DvergrError(
      "BUNDLE_INVALID",
      `The bundle's :review is not well formed: ${
        problems.map((p) => `${p.field}: ${p.message}`).join("; ")
      }`,
      { hint: "Run `dvergr check` on the bundle to list every problem" },
    );
  }
  return spec;
}

/**
 * Reviews an ended run's fork under the bundle's `:review` map and records the review (and
 * the run's link to it). Null when there is nothing to review (the run changed nothing).
 */
export async function reviewRun(
  req: ReviewRequest,
  run: RunRecord,
  review: Record<string, unknown>,
): Promise<ReviewRecord | null> {
  if (!run.fork) return null;
  const deploy = deployRecordsOf(req.home);
  const spec = reviewSpecOf(review);
  const rooms = req.home.rooms;
  const state = await rooms.head(run.room);
  const diff = await forkDiff(rooms, run);
  const checks: CheckResult[] = runChecks(spec, {
    changes: diff.changes,
    conflicts: await conflictsWith(rooms, run, state, diff),
    reward: run.attempt?.verdict?.reward ?? null,
  });
  const reviewer = spec.reviewer && checks.every((c) => c.ok)
    ? await askReviewer(
      { ...req, homeDir: req.home.dir },
      spec.reviewer,
      reviewerPrompt(spec.reviewer.instructions, checks, diff.changes, diff.before),
    )
    : null;
  const approved = checks.every((c) => c.ok) &&
    (!reviewer || (reviewer.verdict === "approve" && !reviewer.problem));
  const spot = spec.spotCheck && approved
    ? { ...spec.spotCheck, value: spotCheckValue(run.id, spec.spotCheck.seed) }
    : null;
  const sampled = spot !== null && spot.value < spot.rate;
  let { decision, why } = decide(spec, checks, reviewer, sampled);
  let merged: string | null = null;
  if (decision === "merged") {
    merged = await mergeFork(rooms, run, state, diff.changes);
    if (merged === null) {
      decision = "escalated";
      why = "approved, but the room's head moved after the review: not merged";
    }
  }
  const record: ReviewRecord = {
    id: run.id,
    run: run.id,
    room: run.room,
    name: run.name,
    world: run.fork.commit,
    base: run.base,
    state,
    spec: contentHash(review),
    checks,
    reviewer,
    spotCheck: spot ? { ...spot, sampled } : null,
    decision,
    why,
    ...(merged ? { merged } : {}),
    at: req.clock().toISOString(),
  };
  if (!(await deploy.putReview(record))) {
    throw new DvergrError("CONFLICT", `Run ${run.id} has been reviewed already`, {
      hint: `See it with \`dvergr review show ${run.id}\``,
    });
  }
  await deploy.putRun({ ...run, review: record.id });
  return record;
}
