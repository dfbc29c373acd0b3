/**
 * A worker pool's state (sandbox/worker_pool.ts): its workers (slots) and the calls waiting
 * for one, the running means that decide when it grows, and its counts; with the parts of
 * its work that only read that state (routing, the backlog, the statistics).
 */
import type { CheckerFault } from "../core/checker.ts";
import type { LayoutStore } from "./layout_cache.ts";
import type { PoolTimer } from "./pool_timer.ts";
import type { CheckerFunction, Faulted, HostMessage } from "./protocol.ts";
import { processWorkersAvailable, type WorkerHandle, type WorkerKind } from "./worker_handle.ts";
import {
  DEFAULT_MEMORY_BYTES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_WORKERS,
  HANG_MARGIN_MS,
  type PoolResult,
  type WorkerPoolOptions,
  type WorkerPoolStats,
  type WorkerSpec,
} from "./pool_types.ts";

/** How often the pool looks again whether waiting calls warrant another worker. */
export const GROWTH_CHECK_MS = 50;
/** Weight of the newest sample in the running means of call and start times. */
const MEAN_WEIGHT = 0.2;

/** A call: waiting in the queue, or in flight on a worker. */
export interface Job<O> {
  fn: CheckerFunction;
  key: string;
  source: string;
  input: string;
  timeoutMs: number;
  resolve: (r: PoolResult<O>) => void;
  startedAt?: number;
}

/** A worker of the pool. */
export interface Slot<O> {
  worker: WorkerHandle<HostMessage>;
  state: "starting" | "ready";
  spawnedAt: number;
  /** Checker keys this worker was given: it holds them prepared (as far as it keeps them). */
  keys: Set<string>;
  /** Calls sent, in order; the worker runs the first, the others wait in its input. */
  inflight: Job<O>[];
  /**
   * The watchdog of the calls in flight (sandbox/worker_pool.ts watch()), armed for
   * `watchdogAt` (performance.now()), never later than the first call's deadline.
   */
  watchdog?: PoolTimer;
  watchdogAt?: number;
  /** The id of the boot image the worker's memory started from (Clojure workers), if known. */
  baseId?: string;
  /** It runs WebAssembly on the baseline compiler only (WorkerSpec.baselineFirst). */
  baseline: boolean;
}

/** The state of one pool, passed to each of its parts. */
export interface Pool<O> {
  readonly spec: WorkerSpec;
  /** Most workers alive at once. */
  readonly size: number;
  readonly memoryBytes: number;
  readonly stackBytes: number;
  readonly defaultTimeoutMs: number;
  readonly hangMarginMs: number;
  readonly kind: WorkerKind;
  readonly layouts: LayoutStore | undefined;
  readonly slots: Slot<O>[];
  readonly queue: Job<O>[];
  closed: boolean;
  nextId: number;
  growthTimer: PoolTimer | undefined;
  /** Growth checks in a row that found the waiting calls behind. */
  looksBehind: number;
  /** Running mean of how long a call runs in a worker. */
  callMs: number;
  /** Running mean of how long a worker takes to start. */
  startMs: number;
  /** Workers start with the optimizing WebAssembly tier (not baselineFirst, or no longer). */
  optimizing: boolean;
  /** Call time on baseline workers beyond BASELINE_CALL_MS a call, summed. */
  baselineExcessMs: number;
  /** The latest calls' times on baseline workers (at most BASELINE_WINDOW). */
  baselineRecent: number[];
  readonly counts: {
    workersStarted: number;
    workersReplaced: number;
    workersAbandoned: number;
    workersPeak: number;
    calls: number;
    checkersLoaded: number;
  };
  workerPermissions: Record<string, string> | undefined;
  lastBootMs: number | undefined;
  lastBootRestored: boolean;
}

/** A pool of `spec` workers with none started yet. */
export function newPool<O>(spec: WorkerSpec, opts: WorkerPoolOptions): Pool<O> {
  const kind = opts.workerKind ?? (processWorkersAvailable() ? "process" : "thread");
  return {
    spec,
    size: Math.max(1, Math.floor(opts.workers ?? DEFAULT_WORKERS)),
    memoryBytes: Math.max(spec.minMemoryBytes, opts.memoryBytes ?? DEFAULT_MEMORY_BYTES),
    stackBytes: opts.stackBytes ?? spec.stackBytes,
    defaultTimeoutMs: opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    hangMarginMs: opts.hangMarginMs ?? HANG_MARGIN_MS,
    kind,
    layouts: opts.layouts,
    slots: [],
    queue: [],
    closed: false,
    nextId: 1,
    growthTimer: undefined,
    looksBehind: 0,
    callMs: 0,
    startMs: spec.expectedStartMs,
    optimizing: spec.baselineFirst !== true || kind !== "process",
    baselineExcessMs: 0,
    baselineRecent: [],
    counts: {
      workersStarted: 0,
      workersReplaced: 0,
      workersAbandoned: 0,
      workersPeak: 0,
      calls: 0,
      checkersLoaded: 0,
    },
    workerPermissions: undefined,
    lastBootMs: undefined,
    lastBootRestored: false,
  };
}

/** A faulted outcome. */
export function fault(fault: CheckerFault, message: string): Faulted {
  return { ok: false, fault, message };
}

/** Resolves a call with its outcome and the time it ran in its worker. */
export function finish<O>(job: Job<O>, outcome: O | Faulted, logs: string[] = []): void {
  const ms = job.startedAt === undefined ? 0 : performance.now() - job.startedAt;
  job.resolve({ outcome, logs, ms });
}

/** A running mean with one more sample. */
export function mean(old: number, sample: number): number {
  return old === 0 ? sample : old + MEAN_WEIGHT * (sample - old);
}

/** The free slot a job should go to: one holding its checker, else the least loaded. */
export function route<O>(open: Slot<O>[], job: Job<O>): Slot<O> {
  let best = open[0];
  for (const s of open) {
    if (s.keys.has(job.key)) return s;
    if (s.keys.size < best.keys.size) best = s;
  }
  return best;
}

/**
 * How long the calls waiting now would take to drain on the ready workers: each takes
 * about as long as the mean call, or as a call that has been running longer than a growth
 * check's interval, if one has (a slow checker, before any of its calls finished).
 */
export function backlogMs<O>(p: Pool<O>): number {
  const ready = p.slots.filter((s) => s.state === "ready");
  if (ready.length === 0) return 0;
  const now = performance.now();
  let perCall = p.callMs;
  let waiting = p.queue.length;
  for (const s of ready) {
    waiting += Math.max(0, s.inflight.length - 1);
    const started = s.inflight[0]?.startedAt;
    const running = started === undefined ? 0 : now - started;
    if (running >= GROWTH_CHECK_MS) perCall = Math.max(perCall, running);
  }
  return (waiting * perCall) / ready.length;
}

/** stats() of the pool. */
export function poolStats<O>(p: Pool<O>): WorkerPoolStats {
  return {
    ...p.counts,
    workerKind: p.kind,
    workerPids: p.slots.flatMap((s) => (s.worker.pid === undefined ? [] : [s.worker.pid])),
    workersAlive: p.slots.length,
    optimizing: p.optimizing,
    baselineWorkers: p.slots.filter((s) => s.baseline).length,
    callsQueued: p.queue.length,
    ...(p.workerPermissions ? { workerPermissions: p.workerPermissions } : {}),
    ...(p.lastBootMs !== undefined ? { lastBootMs: p.lastBootMs } : {}),
    ...(p.lastBootRestored ? { lastBootRestored: true } : {}),
  };
}
