/**
 * Jobs: long work (a benchmark) that outlives the request that started it. A job is a
 * durable record in the home's KV (status running | succeeded | failed | cancelled,
 * progress, result or error), written when it starts, as it progresses (at most a few
 * times a second) and when it ends. A client may restart and poll again; a job whose
 * process stopped while it ran reads as failed with reason "orphaned".
 *
 * The ops job_status, job_list and job_cancel read those records; the runner that
 * started a job answers from memory and stops it directly, any other process asks it to
 * stop through KV.
 *
 * Permissions: those of the state store; --allow-run (/bin/sh, to see whether the process
 * of another runner's job still runs).
 */
import { z } from "zod";
import { DvergrError, isDvergrError } from "../errors.ts";
import type { JobRecord, StateStore } from "./state_store.ts";
import { defineOp, type JobRunner, type Op, type OpContext, type OpProgress } from "../ops/op.ts";
import { processAlive } from "./process_alive.ts";

/** The longest job_status waits (below every common client timeout). */
export const MAX_WAIT_MS = 25_000;

/** Runners alive in this process, by owner id (a job of this pid with another owner is orphaned). */
const liveOwners = new Set<string>();

export interface JobRunnerOptions {
  clock?: () => Date;
  /** Whether a process runs; default `kill -0` through /bin/sh. */
  isAlive?: (pid: number) => Promise<boolean>;
  /** Least time between two progress writes of one job; default 500 ms. */
  persistEveryMs?: number;
  /** How often a running job looks for a cancel request from another process; default 1 s. */
  cancelPollMs?: number;
  /** The longest wait() (default MAX_WAIT_MS, 25 s). */
  maxWaitMs?: number;
  /**
   * Starts a process that runs a job given with a spec (see `adopt`) and returns its pid.
   * Without it, every job runs in this process.
   */
  spawnWorker?: (job: JobRecord) => Promise<number>;
}

type JobWork = Parameters<JobRunner["start"]>[2];

/** A JobRunner over durable records, with the reads and controls of the job ops. */
export interface DurableJobRunner extends JobRunner {
  readonly owner: string;
  /** The job as it stands (an orphan is recorded as such on the way); null when unknown. */
  get(id: string): Promise<JobRecord | null>;
  /**
   * The job once it has ended, or as it stands after `waitMs` (capped at 25 s). Progress
   * while waiting goes to `onProgress`. Unknown ids are NOT_FOUND errors.
   */
  wait(id: string, waitMs: number, onProgress?: (r: JobRecord) => void): Promise<JobRecord>;
  /**
   * Runs the work of a job another process started with a spec and recorded (a worker
   * process); resolves with the record once the job has ended.
   */
  adopt(id: string, work: JobWork): Promise<JobRecord>;
  /** Stops a running job and returns it once it has ended (or after 10 s). */
  cancel(id: string): Promise<JobRecord>;
  list(room?: string): Promise<JobRecord[]>;
  /** Records every running job whose process stopped as failed, orphaned; returns how many. */
  recover(): Promise<number>;
  /** Stops the jobs running in this process and waits for their records (shutdown). */
  close(): Promise<void>;
}

interface LocalJob {
  record: JobRecord;
  controller: AbortController;
  ended: Promise<void>;
  listeners: Set<() => void>;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function errorOf(e: unknown): JobRecord["error"] {
  if (isDvergrError(e)) return { code: e.code, message: e.message, hint: e.hint };
  const message = e instanceof Error ? e.message : String(e);
  return {
    code: "INTERNAL",
    message: `The job failed: ${message}`,
    hint: "This is a bug in dvergr; the server's log (stderr) has the stack",
  };
}

function notFound(id: string): DvergrError {
  return new DvergrError("NOT_FOUND", `Cannot find job "${id}" in this home`, {
    hint: "job_list shows the jobs of this home (a job id comes from catalog_benchmark)",
  });
}

/**
 * Creates a job runner on the home's state store. Jobs it starts run in this process;
 * jobs of other runners are read (and asked to stop) through the store.
 */
export function createJobRunner(state: StateStore, opts: JobRunnerOptions = {}): DurableJobRunner {
  const clock = opts.clock ?? (() => new Date());
  const isAlive = opts.isAlive ?? processAlive;
  const persistEveryMs = opts.persistEveryMs ?? 500;
  const cancelPollMs = opts.cancelPollMs ?? 1000;
  const maxWaitMs = opts.maxWaitMs ?? MAX_WAIT_MS;
  const owner = crypto.randomUUID();
  const local = new Map<string, LocalJob>();
  let closing = false;

  async function ownerAlive(r: JobRecord): Promise<boolean> {
    if (r.owner === owner) return local.has(r.id);
    if (r.pid === Deno.pid) return liveOwners.has(r.owner);
    return await isAlive(r.pid);
  }

  async function orphan(r: JobRecord): Promise<JobRecord> {
    // Read again now that the owner is known gone: a worker writes its last record before
    // it exits, so a job that ended meanwhile (cancelled, succeeded) keeps how it ended.
    const now = await state.getJob(r.id);
    if (now && now.status !== "running") return now;
    const next: JobRecord = {
      ...r,
      status: "failed",
      finishedAt: clock().toISOString(),
      reason: "orphaned",
      error: {
        code: "JOB_ORPHANED",
        message:
          `Job ${r.id} stopped: the dvergr process that ran it (pid ${r.pid}) ended before the job did`,
        hint: "Start it again: a benchmark resumes, keeping every cell that has a verdict",
      },
      progress: { ...r.progress, phase: "orphaned" },
    };
    await state.putJob(next);
    return next;
  }

  async function get(id: string): Promise<JobRecord | null> {
    const mine = local.get(id);
    if (mine) return structuredClone(mine.record);
    const r = await state.getJob(id);
    if (r && r.status === "running" && !(await ownerAlive(r))) return await orphan(r);
    return r;
  }

  async function pollUntilEnded(
    id: string,
    deadline: number,
    onProgress?: (r: JobRecord) => void,
  ): Promise<JobRecord> {
    for (;;) {
      const mine = local.get(id);
      if (mine) {
        // Started by this runner: wait on it, forwarding progress as it comes.
        const listener = () => onProgress?.(structuredClone(mine.record));
        mine.listeners.add(listener);
        try {
          await Promise.race([mine.ended, sleep(Math.max(0, deadline - Date.now()))]);
        } finally {
          mine.listeners.delete(listener);
        }
        return (await get(id)) ?? structuredClone(mine.record);
      }
      const r = await get(id);
      if (!r) throw notFound(id);
      if (r.status !== "running" || Date.now() >= deadline) return r;
      onProgress?.(r);
      await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
    }
  }

  /** Runs `work` for `record` in this process, keeping the record up to date. */
  function execute(record: JobRecord, work: JobWork): LocalJob {
    const { id, kind } = record;
    const controller = new AbortController();
    const listeners = new Set<() => void>();
    let lastWrite = 0;
    let writeTimer: ReturnType<typeof setTimeout> | undefined;
    let writing: Promise<void> = Promise.resolve();
    const persist = () => {
      lastWrite = Date.now();
      const snapshot = structuredClone(record);
      writing = writing.then(() => state.putJob(snapshot)).catch((e) =>
        console.error(`dvergr: cannot record progress of job ${id}: ${e}`)
      );
    };
    const progress = (p: OpProgress) => {
      if (record.status !== "running") return;
      record.progress = {
        done: p.progress,
        total: p.total ?? record.progress.total,
        faults: p.faults ?? record.progress.faults,
        phase: p.phase ?? p.message ?? record.progress.phase,
      };
      for (const l of listeners) l();
      if (writeTimer !== undefined) return;
      const wait = persistEveryMs - (Date.now() - lastWrite);
      if (wait <= 0) persist();
      else {
        writeTimer = setTimeout(() => {
          writeTimer = undefined;
          if (record.status === "running") persist();
        }, wait);
      }
    };
    const cancelPoll = setInterval(() => {
      state.jobCancelRequested(id).then((asked) => {
        if (asked) controller.abort();
      }).catch(() => {});
    }, cancelPollMs);

    const ended = (async () => {
      try {
        // A macrotask first, so start() returns before any of the work runs.
        await sleep(0);
        const result = await work(controller.signal, progress);
        record.result = result ?? null;
        record.status = controller.signal.aborted ? "cancelled" : "succeeded";
      } catch (e) {
        if (controller.signal.aborted) record.status = "cancelled";
        else {
          record.status = "failed";
          record.error = errorOf(e);
          if (!isDvergrError(e)) {
            console.error(`dvergr: job ${id} (${kind}) failed:`, e);
          }
        }
      } finally {
        clearInterval(cancelPoll);
        if (writeTimer !== undefined) clearTimeout(writeTimer);
        if (record.status === "cancelled" && closing) record.reason = "server-stopped";
        record.finishedAt = clock().toISOString();
        record.progress = {
          ...record.progress,
          phase: record.status === "succeeded" ? "done" : record.status,
        };
        persist();
        await writing;
        local.delete(id);
        for (const l of listeners) l();
      }
    })();
    const job = { record, controller, ended, listeners };
    local.set(id, job);
    return job;
  }

  const runner: DurableJobRunner = {
    owner,
    async start(kind, room, work, spec) {
      liveOwners.add(owner);
      const id = crypto.randomUUID();
      const record: JobRecord = {
        id,
        kind,
        room,
        status: "running",
        startedAt: clock().toISOString(),
        finishedAt: null,
        progress: { done: 0, total: null, faults: 0, phase: "starting" },
        result: null,
        error: null,
        reason: null,
        pid: Deno.pid,
        owner,
        ...(spec ? { spec } : {}),
      };
      if (spec && opts.spawnWorker) {
        // A process of its own: the job outlives this server and its client.
        const pid = await opts.spawnWorker(record);
        await state.putJob({ ...record, pid, owner: `worker-${id}` });
        return { job: id };
      }
      await state.putJob(record);
      execute(record, work);
      return { job: id };
    },
    async adopt(id, work) {
      liveOwners.add(owner);
      let r: JobRecord | null = null;
      // The server records the job right after it spawned this worker.
      for (let i = 0; i < 200 && !(r = await state.getJob(id)); i++) await sleep(50);
      if (!r) throw notFound(id);
      if (r.status !== "running") return r;
      const record: JobRecord = { ...r, pid: Deno.pid, owner };
      await state.putJob(record);
      await execute(record, work).ended;
      return (await state.getJob(id)) ?? record;
    },
    get,
    async wait(id, waitMs, onProgress) {
      const ms = Math.max(0, Math.min(maxWaitMs, Math.floor(waitMs)));
      return await pollUntilEnded(id, Date.now() + ms, onProgress);
    },
    async cancel(id) {
      const r = await get(id);
      if (!r) throw notFound(id);
      if (r.status !== "running") return r;
      const mine = local.get(id);
      if (mine) mine.controller.abort();
      else await state.requestJobCancel(id);
      return await pollUntilEnded(id, Date.now() + 10_000);
    },
    list: async (room) => {
      const all = await state.listJobs(room);
      const out: JobRecord[] = [];
      for (const r of all) {
        out.push(r.status === "running" ? (await get(r.id)) ?? r : r);
      }
      return out;
    },
    async recover() {
      let n = 0;
      for (const r of await state.listJobs()) {
        if (r.status === "running" && !local.has(r.id) && !(await ownerAlive(r))) {
          await orphan(r);
          n++;
        }
      }
      return n;
    },
    async close() {
      closing = true;
      const jobs = [...local.values()];
      for (const j of jobs) j.controller.abort();
      await Promise.race([Promise.all(jobs.map((j) => j.ended)), sleep(15_000)]);
      liveOwners.delete(owner);
    },
  };
  return runner;
}

/** The durable runner of a context: the server's, else one reading the home's records. */
export function jobsOf(ctx: OpContext): DurableJobRunner {
  const j = ctx.jobs as Partial<DurableJobRunner> | undefined;
  if (j && typeof j.wait === "function" && typeof j.cancel === "function") {
    return j as DurableJobRunner;
  }
  return createJobRunner(ctx.home.state, { clock: ctx.clock });
}

/** A job as the job ops show it. */
export interface JobView {
  job: string;
  kind: string;
  room: string | null;
  status: JobRecord["status"];
  started_at: string;
  finished_at: string | null;
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
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    progress: r.progress,
    pid: r.pid,
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.error ? { error: r.error } : {}),
    ...(opts.result !== false && r.result !== null && r.result !== undefined
      ? { result: r.result }
      : {}),
  };
}

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
  async handler(ctx, input) {
    return jobView(await jobsOf(ctx).cancel(input.job));
  },
});

/** The job ops, in the order tools are listed. */
export const JOB_OPS: Op[] = [jobStatus, jobList, jobCancel];
