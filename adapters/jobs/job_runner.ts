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
import { DvergrError, errorData, isDvergrError } from "../../core/errors.ts";
import type { DurableJobRunner, JobRecord, JobWork, Progress } from "../../core/jobs.ts";
import type { Timer } from "../../core/ports/timer.ts";
import type { StateStore } from "../../core/ports/state_store.ts";
import { processAlive } from "../system/process_alive.ts";
import { systemTimer } from "../system/timer.ts";
import { stderrLog } from "../system/log.ts";
import { MAX_WAIT_MS } from "../../core/jobs.ts";

export { MAX_WAIT_MS } from "../../core/jobs.ts";

/**
 * The job runners alive in one process, by owner id: a running job of this process whose
 * runner is not among them is orphaned. Runners that read each other's jobs in one process
 * share one (a runner without one has a process of its own).
 */
export interface JobProcess {
  pid: number;
  owners: Set<string>;
}

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

interface LocalJob {
  record: JobRecord;
  controller: AbortController;
  ended: Promise<void>;
  listeners: Set<() => void>;
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
  const timer = opts.timer ?? systemTimer;
  const clock = opts.clock ?? (() => new Date(timer.now()));
  const sleep = (ms: number, signal?: AbortSignal) => timer.sleep(ms, signal);
  const log = opts.log ?? stderrLog;
  const proc = opts.process ?? jobProcess();
  const isAlive = opts.isAlive ?? processAlive;
  const persistEveryMs = opts.persistEveryMs ?? 500;
  const cancelPollMs = opts.cancelPollMs ?? 1000;
  const maxWaitMs = opts.maxWaitMs ?? MAX_WAIT_MS;
  const owner = crypto.randomUUID();
  const local = new Map<string, LocalJob>();
  let closing = false;

  async function ownerAlive(r: JobRecord): Promise<boolean> {
    if (r.owner === owner) return local.has(r.id);
    if (r.pid === proc.pid) return proc.owners.has(r.owner);
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
          await Promise.race([mine.ended, sleep(Math.max(0, deadline - timer.now()))]);
        } finally {
          mine.listeners.delete(listener);
        }
        return (await get(id)) ?? structuredClone(mine.record);
      }
      const r = await get(id);
      if (!r) throw notFound(id);
      if (r.status !== "running" || timer.now() >= deadline) return r;
      onProgress?.(r);
      await sleep(Math.min(250, Math.max(0, deadline - timer.now())));
    }
  }

  /** Runs `work` for `record` in this process, keeping the record up to date. */
  function execute(record: JobRecord, work: JobWork): LocalJob {
    const { id, kind } = record;
    const controller = new AbortController();
    const listeners = new Set<() => void>();
    let lastWrite = 0;
    let writeDue = false;
    let writing: Promise<void> = Promise.resolve();
    const persist = () => {
      lastWrite = timer.now();
      const snapshot = structuredClone(record);
      writing = writing.then(() => state.putJob(snapshot)).catch((e) =>
        log(`dvergr: cannot record progress of job ${id}: ${e}`)
      );
    };
    const progress = (p: Progress) => {
      if (record.status !== "running") return;
      record.progress = {
        done: p.progress,
        total: p.total ?? record.progress.total,
        faults: p.faults ?? record.progress.faults,
        phase: p.phase ?? p.message ?? record.progress.phase,
      };
      for (const l of listeners) l();
      if (writeDue) return;
      const wait = persistEveryMs - (timer.now() - lastWrite);
      if (wait <= 0) persist();
      else {
        writeDue = true;
        void sleep(wait, stopTimers.signal).then(() => {
          writeDue = false;
          if (record.status === "running") persist();
        });
      }
    };
    // Stops the progress write and the cancel poll once the job has ended.
    const stopTimers = new AbortController();
    void (async () => {
      while (!stopTimers.signal.aborted) {
        await sleep(cancelPollMs, stopTimers.signal);
        if (stopTimers.signal.aborted) return;
        if (await state.jobCancelRequested(id).catch(() => false)) controller.abort();
      }
    })();

    const ended = (async () => {
      try {
        // A macrotask first, so start() returns before any of the work runs.
        await new Promise((r) => setTimeout(r, 0));
        const result = await work(controller.signal, progress);
        record.result = result ?? null;
        record.status = controller.signal.aborted ? "cancelled" : "succeeded";
      } catch (e) {
        if (controller.signal.aborted) record.status = "cancelled";
        else {
          record.status = "failed";
          record.error = errorData(e, {
            what: "The job",
            where: "the server's log (stderr) has the stack",
          });
          if (!isDvergrError(e)) {
            log(`dvergr: job ${id} (${kind}) failed: ${e instanceof Error ? e.stack : e}`);
          }
        }
      } finally {
        stopTimers.abort();
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
      proc.owners.add(owner);
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
        pid: proc.pid,
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
      proc.owners.add(owner);
      let r: JobRecord | null = null;
      // The server records the job right after it spawned this worker.
      for (let i = 0; i < 200 && !(r = await state.getJob(id)); i++) await sleep(50);
      if (!r) throw notFound(id);
      if (r.status !== "running") return r;
      const record: JobRecord = { ...r, pid: proc.pid, owner };
      await state.putJob(record);
      await execute(record, work).ended;
      return (await state.getJob(id)) ?? record;
    },
    get,
    async wait(id, waitMs, onProgress) {
      const ms = Math.max(0, Math.min(maxWaitMs, Math.floor(waitMs)));
      return await pollUntilEnded(id, timer.now() + ms, onProgress);
    },
    async cancel(id) {
      const r = await get(id);
      if (!r) throw notFound(id);
      if (r.status !== "running") return r;
      const mine = local.get(id);
      if (mine) mine.controller.abort();
      else await state.requestJobCancel(id);
      return await pollUntilEnded(id, timer.now() + 10_000);
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
      proc.owners.delete(owner);
    },
  };
  return runner;
}
