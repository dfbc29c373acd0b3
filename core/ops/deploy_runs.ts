/**
 * Putting a room's bundle to work: catalog_run (one production run on the room's own tree,
 * its fork reviewed under the bundle's `:review`), run_list, and the reviews: review_list,
 * review_show and, in the admin toolset only, review_decide (a person's approve or discard).
 * The CLI's `run`, `runs` and `review` commands and the schedules call the same functions.
 */
import { z } from "zod";
import { DvergrError } from "../errors.ts";
import { parseBundle } from "../bundle/parse.ts";
import type { ReviewRecord, RunRecord } from "../review/records.ts";
import { deployRecordsOf, productionRun } from "../engine/production_run.ts";
import { reviewRun } from "../engine/review_run.ts";
import { decideReview, type ReviewView, reviewView } from "../engine/review_decide.ts";
import { readRoomBundle } from "./room_bundles.ts";
import { defineOp, type Op, type OpContext } from "./op.ts";
import { defineFormat, fields, typed } from "../json_format.ts";

const outcomeFields = {
  run: z.string().describe("The run's id"),
  room: fields.room,
  bundle: fields.bundle,
  status: z.string(),
  outcome: z.string().nullable(),
  reward: z.number().nullable(),
  branch: z.string().nullable(),
  changed: z.array(z.string()),
  decision: z.string(),
  why: z.string(),
};

/** A production run (catalog_run, `dvergr run`). */
export const CATALOG_RUN_FORMAT = defineFormat(
  "catalog-run",
  1,
  "A production run started as a job (poll job_status), or its outcome where there are no jobs (catalog_run).",
  z.object({
    job: z.string().optional(),
    pollAfterMs: z.number().int().optional(),
    review: typed<ReviewRecord | null>(z.looseObject({}).nullable()).optional().describe(
      "dvergr run: the review in full (null: none)",
    ),
    ...Object.fromEntries(
      Object.entries(outcomeFields).map((
        [k, v],
      ) => [k, k === "room" || k === "bundle" ? v : v.optional()]),
    ) as {
      [K in keyof typeof outcomeFields]: K extends "room" | "bundle" ? (typeof outcomeFields)[K]
        : z.ZodOptional<(typeof outcomeFields)[K]>;
    },
  }),
);

const runRowShape = z.object({
  id: z.string(),
  room: fields.room,
  bundle: fields.bundle,
  candidate: z.string(),
  status: z.string(),
  outcome: z.string().nullable(),
  startedAt: fields.time,
  branch: z.string().nullable(),
  changed: z.number().int(),
  review: z.string().nullable(),
  schedule: z.string().optional(),
});

const RUN_LIST_FORMAT = defineFormat(
  "run-list",
  1,
  "The home's production runs, oldest first (run_list).",
  z.object({ runs: z.array(runRowShape) }),
);

const reviewRowShape = z.object({
  id: z.string(),
  room: fields.room,
  bundle: fields.bundle,
  decision: z.string().describe("The decision that stands"),
  reviewed: z.string().describe("The review's own decision"),
  why: z.string(),
  at: fields.time,
});

const REVIEW_LIST_FORMAT = defineFormat(
  "review-list",
  1,
  "The reviews of production runs, oldest first (review_list).",
  z.object({ reviews: z.array(reviewRowShape) }),
);

const REVIEW_FORMAT = defineFormat(
  "review",
  1,
  "One review in full, and a person's decision on it (review_show).",
  typed<z.ZodObject<{ [K in keyof ReviewDoc]: z.ZodType<ReviewDoc[K]> }>>(z.looseObject({
    id: z.string(),
    run: z.string(),
    room: fields.room,
    bundle: fields.bundle,
    decision: z.string(),
    final: z.string(),
    why: z.string(),
    at: fields.time,
  })) as unknown as z.ZodObject<{ [K in keyof ReviewDoc]: z.ZodType<ReviewDoc[K]> }>,
);

/** A review as review_show gives it: the bundle's name is `bundle`. */
type ReviewDoc = Omit<ReviewView, "name"> & { bundle: string };

function reviewDoc(v: ReviewView): ReviewDoc {
  const { name, ...rest } = v;
  return { ...rest, bundle: name };
}

const REVIEW_DECIDE_FORMAT = defineFormat(
  "review-decide",
  1,
  "A person's decision on a review, and what stands now (review_decide).",
  z.object({
    review: z.string(),
    decision: z.enum(["merged", "discarded", "escalated"]),
    why: z.string(),
    merged: z.string().optional(),
  }),
);

const room = z.string().min(1).describe("The room (its slug)");
const name = z.string().min(1).max(64).describe("The bundle's name: workflows/<name>/ in the room");
const params = z.record(z.string().min(1), z.string()).optional().describe(
  "Task and checker parameters as text, read like the CLI's --param K=V",
);

/** What one run asks for. */
export interface RunAsk {
  room: string;
  name: string;
  candidate: string;
  params?: Record<string, string>;
  id?: string;
  schedule?: { id: string; slot: string };
}

/** A run and its review (null: nothing changed). */
export interface RunOutcome {
  run: RunRecord;
  review: ReviewRecord | null;
}

/**
 * Runs a room's bundle once on the room's tree, keeps the fork and reviews it under the
 * bundle's `:review` (without one, it is proposed to a person).
 */
export async function runAndReview(ctx: OpContext, ask: RunAsk): Promise<RunOutcome> {
  const bundle = await readRoomBundle(ctx.home.rooms, ask.room, ask.name);
  const review = parseBundle(bundle).definition.review;
  const run = await productionRun({
    services: ctx.services,
    home: ctx.home,
    runner: ctx.runner,
    env: ctx.env,
    clock: ctx.clock,
    room: ask.room,
    bundle,
    candidate: ask.candidate,
    params: ask.params,
    id: ask.id,
    schedule: ask.schedule,
    signal: ctx.signal,
  });
  if (!run.fork) return { run, review: null };
  // Without :review the fork is proposed to a person (`dvergr review approve`), after the
  // one check every merge needs: no conflict with the room's head.
  const reviewed = await reviewRun(ctx, run, review ?? {});
  return { run: { ...run, ...(reviewed ? { review: reviewed.id } : {}) }, review: reviewed };
}

/** Refuses a candidate that runs a command line written in the request (over MCP). */
export function refuseInline(ctx: OpContext, candidate: string): void {
  if (!ctx.services.candidates.isInlineCommand(ctx.services.candidates.parse(candidate))) return;
  throw new DvergrError(
    "CANDIDATE_INVALID",
    `Cannot use candidate "${candidate}": inline commands are not accepted here`,
    {
      hint: 'Configure the command in the home\'s candidates.edn ({"NAME" {:command "…"}}) ' +
        "and name it as cmd:NAME",
    },
  );
}

export const catalogRun = defineOp({
  name: "catalog_run",
  title: "Run a bundle on a room's own files",
  description: "Runs workflows/<name>/ of a room once, for real: one candidate gets the " +
    "bundle's task in a world made from the room's current files (not the bundle's " +
    "fixtures), in the same sandbox and limits as a benchmark attempt. The world's changes " +
    "are kept as the branch runs/<run id> of the room, then reviewed under the bundle's " +
    ":review (checks, reviewer model, spot check) and merged, proposed, escalated or " +
    "discarded. Returns a job at once under MCP; poll job_status.",
  kind: "write",
  openWorld: true,
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    name,
    candidate: z.string().min(1).describe(
      "builtin:reference, cmd:NAME (configured in candidates.edn), NAME=agent:claude-code:MODEL or a model id",
    ),
    params,
  }),
  output: CATALOG_RUN_FORMAT,
  async handler(ctx, input) {
    refuseInline(ctx, input.candidate);
    const ask = {
      room: input.room,
      name: input.name,
      candidate: input.candidate,
      params: input.params,
    };
    // A bad request (no bundle, unknown candidate) fails now, not in the job.
    await readRoomBundle(ctx.home.rooms, input.room, input.name);
    deployRecordsOf(ctx.home);
    if (!ctx.jobs) return outcomeView(await runAndReview(ctx, ask));
    const { job } = await ctx.jobs.start(
      "run",
      input.room,
      async (signal) => outcomeView(await runAndReview({ ...ctx, signal }, ask)),
      { op: "catalog_run", input },
    );
    return { job, pollAfterMs: 2000, status: "running", room: input.room, bundle: input.name };
  },
});

/** A run and its review as ops return them. */
export function outcomeView(o: RunOutcome) {
  return {
    run: o.run.id,
    room: o.run.room,
    bundle: o.run.name,
    status: o.run.status,
    outcome: o.run.attempt?.status ?? null,
    reward: o.run.attempt?.verdict?.reward ?? null,
    branch: o.run.fork?.branch ?? null,
    changed: o.run.changed ?? [],
    decision: o.review?.decision ?? "unchanged",
    why: o.review?.why ?? "the run changed nothing",
  };
}

export const runList = defineOp({
  name: "run_list",
  title: "List production runs",
  description: "The home's production runs (catalog_run, schedules), oldest first: candidate, " +
    "status, outcome, the fork's branch and the review's decision.",
  kind: "read",
  toolset: "bench",
  input: z.strictObject({ room: room.optional() }),
  output: RUN_LIST_FORMAT,
  async handler(ctx, input) {
    const runs = await settleRuns(ctx, await deployRecordsOf(ctx.home).listRuns(input.room));
    return { runs: runs.map(runRow) };
  },
});

/**
 * Runs still marked running whose process of this host has died are interrupted (recorded
 * so): a run is never resumed; its schedule's next slot runs again.
 */
export async function settleRuns(ctx: OpContext, runs: RunRecord[]): Promise<RunRecord[]> {
  const { processes } = ctx.services;
  const self = processes.self();
  const out: RunRecord[] = [];
  for (const r of runs) {
    const dead = r.status === "running" && r.owner.host === self.host &&
      r.owner.pid !== self.pid && !(await processes.alive(r.owner.pid));
    if (!dead) {
      out.push(r);
      continue;
    }
    const settled = { ...r, status: "interrupted" as const, endedAt: ctx.clock().toISOString() };
    await deployRecordsOf(ctx.home).putRun(settled);
    out.push(settled);
  }
  return out;
}

/** A run as lists show it. */
export function runRow(r: RunRecord) {
  return {
    id: r.id,
    room: r.room,
    bundle: r.name,
    candidate: r.candidate,
    status: r.status,
    outcome: r.attempt?.status ?? null,
    startedAt: r.startedAt,
    branch: r.fork?.branch ?? null,
    changed: r.changed?.length ?? 0,
    review: r.review ?? null,
    ...(r.schedule ? { schedule: r.schedule.id } : {}),
  };
}

const decisions = ["merged", "proposed", "escalated", "discarded"] as const;

/** A review as lists show it. */
export function reviewRow(v: ReviewView) {
  return {
    id: v.id,
    room: v.room,
    bundle: v.name,
    decision: v.final,
    reviewed: v.decision,
    why: v.person?.why ?? v.why,
    at: v.at,
  };
}

export const reviewList = defineOp({
  name: "review_list",
  title: "List reviews",
  description: "The reviews of production runs, oldest first, with the decision that stands " +
    "(a person's, when one was made). decision filters, e.g. escalated: what waits for a person.",
  kind: "read",
  toolset: "bench",
  input: z.strictObject({
    decision: z.enum(decisions).optional().describe("Only reviews whose decision is this"),
  }),
  output: REVIEW_LIST_FORMAT,
  async handler(ctx, input) {
    const deploy = deployRecordsOf(ctx.home);
    const views: ReviewView[] = [];
    for (const r of await deploy.listReviews()) {
      const person = await deploy.getDecision(r.id);
      views.push({ ...r, person, final: person?.decision ?? r.decision });
    }
    return {
      reviews: views.filter((v) => !input.decision || v.final === input.decision).map(reviewRow),
    };
  },
});

export const reviewShow = defineOp({
  name: "review_show",
  title: "Show a review",
  description: "One review in full: the world (the fork's commit), the state reviewed, the " +
    "checks with their evidence, the reviewer's verdict, reasons and concerns, the spot check, " +
    "the decision and a person's decision on it.",
  kind: "read",
  toolset: "bench",
  input: z.strictObject({ id: z.string().min(1).describe("The review id (its run's id)") }),
  output: REVIEW_FORMAT,
  handler: async (ctx, input) => reviewDoc(await reviewView(ctx, input.id)),
});

export const reviewDecide = defineOp({
  name: "review_decide",
  title: "Decide a review",
  description: "A person's decision on a proposed or escalated review: approve merges the " +
    "run's fork into the room, only while the room is still at the state that was reviewed " +
    "(else it stays escalated); discard drops it. Recorded once.",
  kind: "destructive",
  toolset: "admin",
  input: z.strictObject({
    id: z.string().min(1).describe("The review id"),
    decision: z.enum(["approve", "discard"]).describe("approve (merge) or discard"),
  }),
  output: REVIEW_DECIDE_FORMAT,
  handler: (ctx, input) => decideReview(ctx, input.id, input.decision),
});

/** The ops of runs and reviews, in the order tools are listed. */
export const DEPLOY_RUN_OPS: Op[] = [catalogRun, runList, reviewList, reviewShow, reviewDecide];
