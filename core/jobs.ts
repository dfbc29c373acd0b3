/**
 * Jobs as the ops see them: long work (a benchmark) that outlives the request that
 * started it, recorded durably and polled. The runner that keeps the records is an adapter
 * (adapters/jobs/job_runner.ts); these are the shapes it and the job ops share.
 */

/** The longest job_status waits (below every common client timeout). */
export const MAX_WAIT_MS = 25_000;

/** Progress of long work, as MCP progress notifications and job records carry it. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
  /** Cells (or items) whose latest try faulted so far. */
  faults?: number;
  /** What the work is doing: planning, running, scoring… */
  phase?: string;
}

/**
 * The op call that does a job's work: calling `op` with `input` in a context without a
 * job runner does the same work inline, so a runner may run it in a process of its own.
 */
export interface JobSpec {
  op: string;
  input: unknown;
}

/** Starts work that outlives a request and is polled with job_status. */
export interface JobRunner {
  start(
    kind: string,
    room: string | null,
    work: (signal: AbortSignal, progress: (p: Progress) => void) => Promise<unknown>,
    spec?: JobSpec,
  ): Promise<{ job: string }>;
}

/** A durable job: long work (a benchmark) started over MCP and polled with job_status. */
export interface JobRecord {
  id: string;
  kind: string;
  /** The room the job works in (its experiment, its scorecard), or null. */
  room: string | null;
  status: "running" | "succeeded" | "failed" | "cancelled";
  /** ISO times. */
  startedAt: string;
  finishedAt: string | null;
  /** Cells done of the total, faults, and the phase (planning, running, scoring, done). */
  progress: { done: number; total: number | null; faults: number; phase: string };
  /** What the work returned (succeeded, or cancelled after it stopped cleanly). */
  result: unknown;
  error: { code: string; message: string; hint?: string } | null;
  /** "orphaned" (failed: its process stopped mid-run), "server-stopped" (cancelled at shutdown). */
  reason: string | null;
  /** The process running it and the job runner within that process. */
  pid: number;
  owner: string;
  /** The op call that does its work, when it runs in a worker process of its own. */
  spec?: { op: string; input: unknown };
}

/** The work of a job: it stops when `signal` aborts and reports its progress. */
export type JobWork = Parameters<JobRunner["start"]>[2];

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
