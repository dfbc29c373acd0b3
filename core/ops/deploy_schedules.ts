/**
 * Schedules: catalog_deploy stores one (a room's bundle, a candidate, an interval and an
 * optional time of day), schedule_list lists them with their next run, schedule_cancel
 * cancels one. tickSchedules() starts the runs due at a moment, each slot once whoever else
 * ticks (the slot is claimed by the store's check-and-set before the run starts), and
 * serveSchedules() ticks as due slots come, on the services' timer, until stopped: what
 * `dvergr tick` and `dvergr serve` call.
 */
import { z } from "zod";
import { DvergrError, isDvergrError } from "../errors.ts";
import { checkSlug } from "../room_slug.ts";
import type { ScheduleRecord } from "../schedule/records.ts";
import { dueSlot, everyText, firstSlot, nextRun, readAt, readEvery } from "../schedule/schedule.ts";
import { deployRecordsOf, newRunId } from "../engine/production_run.ts";
import { readRoomBundle } from "./room_bundles.ts";
import { outcomeView, refuseInline, runAndReview } from "./deploy_runs.ts";
import { defineOp, type Op, type OpContext } from "./op.ts";
import { defineFormat, fields } from "../json_format.ts";

const scheduleShape = z.object({
  id: z.string(),
  room: fields.room,
  bundle: fields.bundle,
  candidate: z.string(),
  every: z.string().describe("The interval, e.g. 1d"),
  at: z.string().nullable().describe("The time of day of the first run, HH:MM UTC"),
  nextRun: fields.time.nullable(),
  lastRun: fields.time.nullable(),
  cancelledAt: fields.time.nullable(),
});

/** A schedule (catalog_deploy, `dvergr deploy`). */
export const SCHEDULE_FORMAT = defineFormat(
  "schedule",
  1,
  "A schedule of a bundle's runs (catalog_deploy / `dvergr deploy`).",
  scheduleShape,
);

const SCHEDULE_LIST_FORMAT = defineFormat(
  "schedule-list",
  1,
  "The home's schedules, cancelled ones too (schedule_list / `dvergr schedules`).",
  z.object({ schedules: z.array(scheduleShape) }),
);

const SCHEDULE_CANCEL_FORMAT = defineFormat(
  "schedule-cancel",
  1,
  "A schedule cancelled (schedule_cancel / `dvergr schedules --cancel`).",
  z.object({ id: z.string(), cancelled: z.boolean(), wasCancelled: z.boolean() }),
);

/** The due slots a tick started (`dvergr tick`). */
export const TICK_FORMAT = defineFormat(
  "tick",
  1,
  "The due slots of the schedules and what became of each (`dvergr tick`).",
  z.object({
    ticks: z.array(z.object({
      schedule: z.string(),
      slot: fields.time,
      run: z.string(),
      started: z.boolean().describe(
        "false: another process claimed the slot first, or this home lacks the room (error)",
      ),
      decision: z.string().optional(),
      error: z.string().optional(),
    })),
  }),
);

/** What a schedule asks for. */
export interface ScheduleAsk {
  room: string;
  name: string;
  candidate: string;
  every: string;
  at?: string;
  params?: Record<string, string>;
}

/** Stores a new schedule after checking its bundle, candidate, interval and time of day. */
export async function createSchedule(ctx: OpContext, ask: ScheduleAsk): Promise<ScheduleRecord> {
  const deploy = deployRecordsOf(ctx.home);
  checkSlug(ask.room);
  const every = readEvery(ask.every);
  if ("problem" in every) {
    throw new DvergrError("USAGE", `Cannot schedule every "${ask.every}": ${every.problem}`, {
      hint: "For example --every 1d, --every 7d --at 06:30, --every 30m",
    });
  }
  const at = ask.at === undefined ? null : readAt(ask.at);
  if (ask.at !== undefined && at === null) {
    throw new DvergrError("USAGE", `Cannot schedule at "${ask.at}": expected HH:MM (UTC)`, {
      hint: "For example --at 06:30",
    });
  }
  await readRoomBundle(ctx.home.rooms, ask.room, ask.name);
  ctx.services.candidates.parse(ask.candidate);
  const now = ctx.clock();
  const schedule: ScheduleRecord = {
    id: `s-${crypto.randomUUID().slice(0, 8)}`,
    room: ask.room,
    name: ask.name,
    candidate: ask.candidate,
    params: ask.params ?? {},
    everyMs: every.ms,
    at: ask.at ?? null,
    anchor: firstSlot(now.getTime(), at),
    createdAt: now.toISOString(),
    lastSlot: null,
    lastRun: null,
    cancelledAt: null,
  };
  if (!(await deploy.createSchedule(schedule))) throw new Error(`schedule id ${schedule.id} taken`);
  return schedule;
}

/** A schedule as lists show it, with its next run as of `now`. */
export function scheduleRow(s: ScheduleRecord, now: number) {
  const next = nextRun(s, now);
  return {
    id: s.id,
    room: s.room,
    bundle: s.name,
    candidate: s.candidate,
    every: everyText(s.everyMs),
    at: s.at,
    nextRun: next === null ? null : new Date(next).toISOString(),
    lastRun: s.lastRun,
    cancelledAt: s.cancelledAt,
  };
}

/** One due slot and what became of it. */
export interface TickResult {
  schedule: string;
  slot: string;
  run: string;
  /** False when another process claimed the slot first (it runs there), or this home lacks the room. */
  started: boolean;
  decision?: string;
  error?: string;
}

/** What became of a due slot, in words: `s-1a2b3c4d slot 2026-03-01T06:30:00.000Z: run … approved`. */
export function tickText(r: TickResult): string {
  const what = r.error
    ? `${r.started ? "could not run" : "not started here"}: ${r.error}`
    : !r.started
    ? "started by another process"
    : `run ${r.run} ${r.decision}`;
  return `${r.schedule} slot ${r.slot}: ${what}`;
}

/**
 * Starts the runs due at `now`: for each schedule with a due slot, claims it and runs it to
 * its review. A slot another process claimed is left to it, and so is one whose room this
 * home lacks (reported as an error); a run that fails to start (its bundle gone, a bad
 * candidate) is reported, and the next slot tries again.
 */
export async function tickSchedules(ctx: OpContext, now: Date): Promise<TickResult[]> {
  const deploy = deployRecordsOf(ctx.home);
  const out: TickResult[] = [];
  for (const s of await deploy.listSchedules()) {
    const slot = dueSlot(s, now.getTime());
    if (slot === null) continue;
    const run = newRunId(ctx.clock());
    const at = new Date(slot).toISOString();
    // On a store several machines share, a machine without the room leaves the slot unclaimed
    // for one that has it (and says so) rather than take it and fail.
    if (!(await ctx.home.rooms.hasRoom(s.room).catch(() => false))) {
      const why = `room "${s.room}" is not in this home: the slot is left to a machine that has it`;
      out.push({ schedule: s.id, slot: at, run, started: false, error: why });
      continue;
    }
    if (!(await deploy.claimSlot(s.id, slot, run))) {
      out.push({ schedule: s.id, slot: at, run, started: false });
      continue;
    }
    try {
      const o = await runAndReview(ctx, {
        room: s.room,
        name: s.name,
        candidate: s.candidate,
        params: s.params,
        id: run,
        schedule: { id: s.id, slot: at },
      });
      out.push({ schedule: s.id, slot: at, run, started: true, decision: outcomeView(o).decision });
    } catch (e) {
      if (!isDvergrError(e)) throw e;
      out.push({ schedule: s.id, slot: at, run, started: true, error: e.message });
    }
  }
  return out;
}

/** The longest a serving process sleeps before it reads the schedules again. */
const MAX_SLEEP_MS = 60_000;

/**
 * Ticks as due slots come until `signal` aborts: sleeps on the services' timer until the
 * next run of any schedule (at most a minute, so schedules deployed meanwhile are seen).
 */
export async function serveSchedules(
  ctx: OpContext,
  signal: AbortSignal,
  report: (r: TickResult) => void,
): Promise<void> {
  const { timer } = ctx.services;
  const deploy = deployRecordsOf(ctx.home);
  while (!signal.aborted) {
    for (const r of await tickSchedules({ ...ctx, signal }, new Date(timer.now()))) report(r);
    if (signal.aborted) return;
    const now = timer.now();
    const nexts = (await deploy.listSchedules())
      .map((s) => nextRun(s, now))
      .filter((n): n is number => n !== null);
    const wait = Math.min(MAX_SLEEP_MS, ...nexts.map((n) => Math.max(0, n - now)));
    await timer.sleep(Math.max(wait, 10), signal);
  }
}

const room = z.string().min(1).describe("The room (its slug)");

export const catalogDeploy = defineOp({
  name: "catalog_deploy",
  title: "Schedule a bundle's runs",
  description: "Stores a schedule in the home: workflows/<name>/ of the room is run by the " +
    "candidate every interval (30m, 1h, 1d, 7d; at least 1m), from the time of day at (HH:MM, " +
    "UTC) when given, each run reviewed as catalog_run's. `dvergr serve` and `dvergr tick` " +
    "start the due runs; a schedule missed for a while runs once.",
  kind: "write",
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    name: z.string().min(1).max(64).describe("The bundle: workflows/<name>/ in the room"),
    candidate: z.string().min(1).describe("builtin:reference, cmd:NAME, a model id…"),
    every: z.string().min(2).max(10).describe("The interval, e.g. 1h, 1d, 7d"),
    at: z.string().optional().describe("The time of day of the first run, HH:MM UTC"),
    params: z.record(z.string().min(1), z.string()).optional().describe("Parameters as text"),
  }),
  output: SCHEDULE_FORMAT,
  async handler(ctx, input) {
    refuseInline(ctx, input.candidate);
    const s = await createSchedule(ctx, input);
    return scheduleRow(s, ctx.clock().getTime());
  },
});

export const scheduleList = defineOp({
  name: "schedule_list",
  title: "List schedules",
  description: "The home's schedules with their interval, next run and last run; cancelled " +
    "ones too (cancelledAt set).",
  kind: "read",
  toolset: "bench",
  input: z.strictObject({}),
  output: SCHEDULE_LIST_FORMAT,
  async handler(ctx) {
    const now = ctx.clock().getTime();
    const all = await deployRecordsOf(ctx.home).listSchedules();
    return { schedules: all.map((s) => scheduleRow(s, now)) };
  },
});

export const scheduleCancel = defineOp({
  name: "schedule_cancel",
  title: "Cancel a schedule",
  description: "Cancels a schedule: no further runs start (a run in progress finishes).",
  kind: "destructive",
  idempotent: true,
  toolset: "bench",
  input: z.strictObject({ id: z.string().min(1).describe("The schedule id, e.g. s-1a2b3c4d") }),
  output: SCHEDULE_CANCEL_FORMAT,
  async handler(ctx, input) {
    const deploy = deployRecordsOf(ctx.home);
    const s = await deploy.getSchedule(input.id);
    if (!s) {
      throw new DvergrError("NOT_FOUND", `No schedule "${input.id}" in this home`, {
        hint: "List them with `dvergr schedules`",
      });
    }
    const cancelled = await deploy.cancelSchedule(input.id, ctx.clock().toISOString());
    return { id: input.id, cancelled, wasCancelled: !cancelled };
  },
});

/** The schedule ops, in the order tools are listed. */
export const DEPLOY_SCHEDULE_OPS: Op[] = [catalogDeploy, scheduleList, scheduleCancel];
