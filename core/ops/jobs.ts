/**
 * The job ops: job_status, job_list and job_cancel read and control the durable job
 * records of the home (kept by the services' job runner, adapters/jobs/job_runner.ts).
 */
import { z } from "zod";
import { defineFormat, fields } from "../json_format.ts";
import { type DurableJobRunner, type JobRecord, MAX_WAIT_MS } from "../jobs.ts";
import { defineOp, type Op, type OpContext } from "./op.ts";

/** The durable runner of a context: the server's, else one reading the home's records. */
export function jobsOf(ctx: OpContext): DurableJobRunner {
  const j = ctx.jobs as Partial<DurableJobRunner> | undefined;
  if (j && typeof j.wait === "function" && typeof j.cancel === "function") {
    return j as DurableJobRunner;
  }
  return ctx.services.jobs(ctx.home.state, { clock: ctx.clock });
}

/** A job as the job ops show it. */
export interface JobView {
  job: string;
  kind: string;
  room: string | null;
  status: JobRecord["status"];
  startedAt: string;
  finishedAt: string | null;
  progress: JobRecord["progress"];
  /** The process that runs (or ran) it. */
  pid: number;
  reason?: string;
  error?: NonNullable<JobRecord["error"]>;
  result?: unknown;
}

/** The view of a job record (without its result when `result` is false). */
export function jobView(r: JobRecord, opts: { result?: boolean } = {}): JobView {
  return {
    job: r.id,
    kind: r.kind,
    room: r.room,
    status: r.status,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    progress: r.progress,
    pid: r.pid,
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.error ? { error: r.error } : {}),
    ...(opts.result !== false && r.result !== null && r.result !== undefined
      ? { result: r.result }
      : {}),
  };
}

/** A job as the job ops show it (the shape of JobView). */
export const JOB_SHAPE = z.object({
  job: z.string(),
  kind: z.string().describe("What the job does (benchmark, …)"),
  room: z.string().nullable(),
  status: z.enum(["running", "succeeded", "failed", "cancelled"]),
  startedAt: fields.time,
  finishedAt: fields.time.nullable(),
  progress: z.object({
    done: z.number().int(),
    total: z.number().int().nullable(),
    faults: z.number().int(),
    phase: z.string(),
  }),
  pid: z.number().int().describe("The process that runs (or ran) it"),
  reason: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional() })
    .optional(),
  result: z.unknown().optional().describe(
    "What the job returned once it ended (a benchmark: its experiment's leaderboard)",
  ),
});

const JOB_FORMAT = defineFormat(
  "job",
  1,
  "One job of the home (job_status, job_cancel).",
  JOB_SHAPE,
);
const JOB_LIST_FORMAT = defineFormat(
  "job-list",
  1,
  "The jobs of the home, newest first (job_list).",
  z.object({ jobs: z.array(JOB_SHAPE), total: z.number().int() }),
);

const jobId = z.string().min(1).max(100).describe("The job id (from catalog_benchmark)");

export const jobStatus = defineOp({
  name: "job_status",
  title: "Job status",
  description: "A job's status, progress (cells done of the total, faults, phase) and, once " +
    "it has ended, its result or error. With wait_ms it answers when the job ends or after " +
    "wait_ms (at most 25000), whichever comes first: poll it until status is not running.",
  kind: "read",
  toolset: "jobs",
  input: z.strictObject({
    job: jobId,
    wait_ms: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe(
      "Wait up to this long for the job to end (0–25000 ms, default 0)",
    ),
  }),
  output: JOB_FORMAT,
  async handler(ctx, input) {
    const jobs = jobsOf(ctx);
    let last = -1;
    const r = await jobs.wait(input.job, input.wait_ms ?? 0, (p) => {
      // Forward progress only when it moved (progress must increase).
      if (p.progress.done > last) {
        last = p.progress.done;
        ctx.progress?.({
          progress: p.progress.done,
          total: p.progress.total ?? undefined,
          faults: p.progress.faults,
          phase: p.progress.phase,
          message: `${p.progress.done}/${p.progress.total ?? "?"} cells, ${p.progress.faults} ` +
            `faults (${p.progress.phase})`,
        });
      }
    });
    return jobView(r);
  },
});

export const jobList = defineOp({
  name: "job_list",
  title: "List jobs",
  description: "The jobs of this home, newest first (only those of a room when given), " +
    "with status and progress; job_status gives a job's result.",
  kind: "read",
  toolset: "jobs",
  input: z.strictObject({
    room: z.string().min(1).optional().describe("Only the jobs of this room"),
    limit: z.number().int().min(1).max(200).optional().describe("At most this many (default 20)"),
  }),
  output: JOB_LIST_FORMAT,
  async handler(ctx, input) {
    const all = await jobsOf(ctx).list(input.room);
    const limit = input.limit ?? 20;
    return {
      jobs: all.slice(0, limit).map((r) => jobView(r, { result: false })),
      total: all.length,
    };
  },
});

export const jobCancel = defineOp({
  name: "job_cancel",
  title: "Cancel a job",
  description: "Stops a running job and returns it once it has stopped. A cancelled " +
    "benchmark keeps every cell recorded so far; starting it again resumes it.",
  kind: "write",
  idempotent: true,
  toolset: "jobs",
  input: z.strictObject({ job: jobId }),
  output: JOB_FORMAT,
  async handler(ctx, input) {
    return jobView(await jobsOf(ctx).cancel(input.job));
  },
});

/** The job ops, in the order tools are listed. */
export const JOB_OPS: Op[] = [jobStatus, jobList, jobCancel];
