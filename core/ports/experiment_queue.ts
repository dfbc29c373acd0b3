/**
 * The experiment queue port: experiments open to workers on any machine (`dvergr benchmark
 * … --store URL --enqueue`, `dvergr worker`), the workers that say they are alive, and an
 * experiment's progress by worker. A home has one only when its state store is shared by
 * machines (the PostgreSQL store, adapters/store/postgres/queue.ts); the embedded KV home
 * has none.
 */

/** What a worker needs to run an enqueued experiment (plain JSON, never a key). */
export interface QueuedRequest {
  /** The bundle: its name and the blob id of its file manifest (path → blob id). */
  bundle: { name: string; files: string };
  /** The room the experiment belongs to. */
  room: string;
  /** Candidate specs as the kinds read them (`CandidateKinds.parse`). */
  specs: Record<string, unknown>[];
  /** The plan's options (repetitions, cases, params, time limit, budget). */
  plan: Record<string, unknown>;
  baseline?: string;
  stopWhenDecided?: { alpha?: number; delta?: number };
  /** Resource limits of command candidates, as the benchmark was asked. */
  limits?: Record<string, unknown>;
  /** Read-only mounts for inline command candidates (paths on the worker's machine). */
  mounts?: string[];
  /**
   * The user's web policy the experiment was enqueued with (the enqueuing home's
   * web-policy.edn and its sources), as sources: workers apply it, not their own home's.
   */
  sources?: { allow?: string[]; block?: string[] };
}

export interface QueuedExperiment {
  experiment: string;
  request: QueuedRequest;
  enqueuedAt: string;
}

/** A worker as it registers itself. */
export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
}

/** One worker's part of an experiment: its records and the cells it holds now. */
export interface WorkerProgress {
  /** The lease owner that committed the records (a worker's id). */
  owner: string;
  host: string | null;
  pid: number | null;
  /** running or stopped; null: not a registered worker (a benchmark's own run). */
  state: string | null;
  /** Seconds since it last said it was alive (null: not a registered worker). */
  seenSecondsAgo: number | null;
  records: number;
  inFlight: number;
}

export interface ExperimentQueue {
  /** Opens `experiment` to workers (again, if it was closed), with what they need. */
  enqueue(experiment: string, request: QueuedRequest): Promise<void>;
  /** The open experiments, oldest first (only `experiment` when given). */
  open(experiment?: string): Promise<QueuedExperiment[]>;
  /** open, closed, or null when it was never enqueued. */
  state(experiment: string): Promise<string | null>;
  /** No worker takes `experiment` any more (every cell has its record). */
  close(experiment: string): Promise<void>;
  /** Registers a worker, or says it is alive again (`state` running or stopped). */
  markWorker(worker: WorkerInfo, state?: "running" | "stopped"): Promise<void>;
  /** Progress of `experiment` by the run that committed each record, and leases held now. */
  progress(experiment: string): Promise<WorkerProgress[]>;
  /**
   * Whether an error is the store being out of reach for now (down, restarting, the
   * connection lost): what a worker retries with backoff rather than stopping on.
   */
  unavailable(error: unknown): boolean;
}
