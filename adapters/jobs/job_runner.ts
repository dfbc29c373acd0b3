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
 * The runner's parts work over one Runner value (runner_state.ts): job_read.ts reads jobs
 * and waits for them, job_execute.ts runs a job's work in this process.
 *
 * Permissions: those of the state store; --allow-run (/bin/sh, to see whether the process
 * of another runner's job still runs).
 */
import type { DurableJobRunner, JobRecord, JobSpec, JobWork } from "../../core/jobs.ts";
import type { Timer } from "../../core/ports/timer.ts";
import type { StateStore } from "../../core/ports/state_store.ts";
import { processAlive } from "../system/process_alive.ts";
import { systemTimer } from "../system/timer.ts";
import { stderrLog } from "../system/log.ts";
import { MAX_WAIT_MS } from "../../core/jobs.ts";
import { type JobProcess, notFound, type Runner, sleep } from "./runner_state.ts";
import { getJob, orphan, ownerAlive, pollUntilEnded } from "./job_read.ts";
import { execute } from "./job_execute.ts";

export { MAX_WAIT_MS } from "../../core/jobs.ts";
export type { JobProcess } from "./runner_state.ts";

/** The job runners of this process (none yet). */
export function jobProcess(pid: number = Deno.pid): JobProcess {
  return { pid, owners: new Set() };
}

export interface JobRunnerOptions {
  /** Times written in job records; default: the timer's. */
  clock?: () => Date;
  /** Waits, polls and deadlines; default the system's. */
  timer?: Timer;
  /** Where a job that failed with a bug, or a record that could not be written, is told. */
  log?: (line: string) => void;
  /** The process this runner belongs to; default a process of its own. */
  process?: JobProcess;
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

/**
 * Creates a job runner on the home's state store. Jobs it starts run in this process;
 * jobs of other runners are read (and asked to stop) through the store.
 */
export function createJobRunner(state: StateStore, opts: JobRunnerOptions = {}): DurableJobRunner {
  const timer = opts.timer ?? systemTimer;
  const r: Runner = {
    state,
    timer,
    clock: opts.clock ?? (() => new Date(timer.now())),
    log: opts.log ?? stderrLog,
    proc: opts.process ?? jobProcess(),
    isAlive: opts.isAlive ?? processAlive,
    persistEveryMs: opts.persistEveryMs ?? 500,
    cancelPollMs: opts.cancelPollMs ?? 1000,
    maxWaitMs: opts.maxWaitMs ?? MAX_WAIT_MS,
    spawnWorker: opts.spawnWorker,
    owner: crypto.randomUUID(),
    local: new Map(),
    closing: false,
  };
  return {
    owner: r.owner,
    start: (kind, room, work, spec) => start(r, kind, room, work, spec),
    adopt: (id, work) => adopt(r, id, work),
    get: (id) => getJob(r, id),
    wait: async (id, waitMs, onProgress) => {
      const ms = Math.max(0, Math.min(r.maxWaitMs, Math.floor(waitMs)));
      return await pollUntilEnded(r, id, timer.now() + ms, onProgress);
    },
    cancel: (id) => cancel(r, id),
    list: async (room) => {
      const out: JobRecord[] = [];
      for (const job of await state.listJobs(room)) {
        out.push(job.status === "running" ? (await getJob(r, job.id)) ?? job : job);
      }
      return out;
    },
    recover: () => recover(r),
    close: () => close(r),
  };
}

/** start() of the runner: the job recorded, then run here or by a worker process. */
async function start(
  r: Runner,
  kind: string,
  room: string | null,
  work: JobWork,
  spec?: JobSpec,
): Promise<{ job: string }> {
  r.proc.owners.add(r.owner);
  const id = crypto.randomUUID();
  const record: JobRecord = {
    id,
    kind,
    room,
    status: "running",
    startedAt: r.clock().toISOString(),
    finishedAt: null,
    progress: { done: 0, total: null, faults: 0, phase: "starting" },
    result: null,
    error: null,
    reason: null,
    pid: r.proc.pid,
    owner: r.owner,
    ...(spec ? { spec } : {}),
  };
  if (spec && r.spawnWorker) {
    // A process of its own: the job outlives this server and its client.
    const pid = await r.spawnWorker(record);
    await r.state.putJob({ ...record, pid, owner: `worker-${id}` });
    return { job: id };
  }
  await r.state.putJob(record);
  execute(r, record, work);
  return { job: id };
}

/** adopt() of the runner: a worker process takes over the job its server recorded. */
async function adopt(r: Runner, id: string, work: JobWork): Promise<JobRecord> {
  r.proc.owners.add(r.owner);
  let job: JobRecord | null = null;
  // The server records the job right after it spawned this worker.
  for (let i = 0; i < 200 && !(job = await r.state.getJob(id)); i++) await sleep(r, 50);
  if (!job) throw notFound(id);
  if (job.status !== "running") return job;
  const record: JobRecord = { ...job, pid: r.proc.pid, owner: r.owner };
  await r.state.putJob(record);
  await execute(r, record, work).ended;
  return (await r.state.getJob(id)) ?? record;
}

/** cancel() of the runner: stops a job here, or asks its runner through the store. */
async function cancel(r: Runner, id: string): Promise<JobRecord> {
  const job = await getJob(r, id);
  if (!job) throw notFound(id);
  if (job.status !== "running") return job;
  const mine = r.local.get(id);
  if (mine) mine.controller.abort();
  else await r.state.requestJobCancel(id);
  return await pollUntilEnded(r, id, r.timer.now() + 10_000);
}

/** recover() of the runner: running jobs whose runner is gone, recorded as orphaned. */
async function recover(r: Runner): Promise<number> {
  let n = 0;
  for (const job of await r.state.listJobs()) {
    if (job.status === "running" && !r.local.has(job.id) && !(await ownerAlive(r, job))) {
      await orphan(r, job);
      n++;
    }
  }
  return n;
}

/** close() of the runner: its jobs stopped (waiting up to 15 s for them to end). */
async function close(r: Runner): Promise<void> {
  r.closing = true;
  const jobs = [...r.local.values()];
  for (const j of jobs) j.controller.abort();
  await Promise.race([Promise.all(jobs.map((j) => j.ended)), sleep(r, 15_000)]);
  r.proc.owners.delete(r.owner);
}
