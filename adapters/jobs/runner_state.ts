/**
 * What every part of a job runner works with: its store, clock and timer, the jobs it runs
 * in this process, and its process's runners.
 */
import { DvergrError } from "../../core/errors.ts";
import type { JobRecord } from "../../core/jobs.ts";
import type { Timer } from "../../core/ports/timer.ts";
import type { StateStore } from "../../core/ports/state_store.ts";

/**
 * The job runners alive in one process, by owner id: a running job of this process whose
 * runner is not among them is orphaned. Runners that read each other's jobs in one process
 * share one (a runner without one has a process of its own).
 */
export interface JobProcess {
  pid: number;
  owners: Set<string>;
}

/** A job this runner runs in this process. */
export interface LocalJob {
  record: JobRecord;
  controller: AbortController;
  ended: Promise<void>;
  /** Told of every progress and of the end. */
  listeners: Set<() => void>;
}

/** The state of one job runner, passed to each of its parts. */
export interface Runner {
  readonly state: StateStore;
  readonly timer: Timer;
  readonly clock: () => Date;
  readonly log: (line: string) => void;
  readonly proc: JobProcess;
  readonly isAlive: (pid: number) => Promise<boolean>;
  /** Least time between two progress writes of one job. */
  readonly persistEveryMs: number;
  /** How often a running job looks for a cancel request from another process. */
  readonly cancelPollMs: number;
  readonly maxWaitMs: number;
  readonly spawnWorker?: (job: JobRecord) => Promise<number>;
  /** This runner's id, in the records of the jobs it runs. */
  readonly owner: string;
  readonly local: Map<string, LocalJob>;
  /** Set by close(): a job cancelled from then on was stopped with the server. */
  closing: boolean;
}

/** Waits `ms` on the runner's timer (sooner when `signal` aborts). */
export function sleep(r: Runner, ms: number, signal?: AbortSignal): Promise<void> {
  return r.timer.sleep(ms, signal);
}

/** The error for a job id this home does not know. */
export function notFound(id: string): DvergrError {
  return new DvergrError("NOT_FOUND", `Cannot find job "${id}" in this home`, {
    hint: "job_list shows the jobs of this home (a job id comes from catalog_benchmark)",
  });
}
