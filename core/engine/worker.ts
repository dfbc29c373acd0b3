/**
 * A worker (`dvergr worker`): pulls the cells of the experiments open in a shared store's
 * queue and runs them here, on the engine's one path (prepareBenchmark, runExperiment), with
 * this machine's sandbox and this process's environment (its model keys: never the store's).
 *
 * Each open experiment is prepared from what the queue holds (the bundle's files by content
 * id, the candidate specs, the plan's options) and must plan to the same experiment id here,
 * else it is left to other workers (a candidate that resolves differently on this machine, an
 * agent CLI of another version, would be another experiment). Its cells run under leases in
 * the store, renewed while they run; a record is accepted only from its lease's holder, in
 * the transaction that releases the lease. Cells other live workers hold are left to them
 * (the worker goes on to the next experiment and comes back); a cell whose holder died is
 * taken once its lease has run out. The worker that finds every cell recorded scores the
 * experiment and closes it.
 *
 * The store out of reach (down, restarting) is retried with backoff: what was in flight is
 * lost at worst, and its cells run again. A stop signal stops the cells in flight, which
 * record nothing and release their leases.
 */
import type { CheckerRunner } from "../checker.ts";
import type { Home } from "../ports/home.ts";
import type { Services } from "../ports/services.ts";
import type { ExperimentQueue, QueuedExperiment } from "../ports/experiment_queue.ts";
import type { CandidateSpec } from "../ports/candidate_kind.ts";
import type { ResourceLimits } from "../bench/resource_limits.ts";
import { DvergrError } from "../errors.ts";
import { bundleFilesOf } from "./experiment_bundle.ts";
import { prepareBenchmark } from "./benchmark.ts";
import { type ProgressEvent, runExperiment } from "./run_experiment.ts";
import { scoreExperiment } from "./score_experiment.ts";
import type { LeaseHolder } from "./leases.ts";

export interface WorkerOptions {
  services: Services;
  /** A home on a shared store (it has a queue). */
  home: Home;
  runner: CheckerRunner;
  /** This process's environment: model keys, agent CLIs, isolation. */
  env: (name: string) => string | undefined;
  /** The worker's id: the owner of its leases and records. */
  holder: LeaseHolder;
  /** Attempts at once; default 4. */
  parallel?: number;
  /** Only this experiment (its id); the worker ends once it is closed. */
  experiment?: string;
  /** End after this long without a cell to run (ms); default never. */
  idleExitMs?: number;
  /** The pause between looks at the queue when there is nothing to run; default 2000 ms. */
  pollMs?: number;
  /** A cell's lease time; default the engine's. */
  leaseMs?: number;
  signal: AbortSignal;
  /** What the worker does, one line at a time (for its log). */
  log: (line: string) => void;
  onEvent?: (experiment: string, e: ProgressEvent) => void;
}

export interface WorkerResult {
  /** Why it ended: stopped by a signal, idle for --idle-exit, or its experiment closed. */
  reason: "stopped" | "idle" | "closed";
  /** Attempts it made. */
  attempts: number;
  /** Experiments it closed (every cell recorded). */
  closed: string[];
}

/** Longest pause between two tries to reach a store that is out of reach. */
const MAX_BACKOFF_MS = 30_000;
/** How often a worker says it is alive. */
const HEARTBEAT_MS = 10_000;

/** One pass over the open experiments: attempts made, experiments closed. */
interface Pass {
  attempts: number;
  closed: string[];
}

/** Runs a worker until a signal stops it, it has been idle long enough, or its experiment closed. */
export async function runWorker(opts: WorkerOptions): Promise<WorkerResult> {
  const queue = opts.home.queue;
  if (!queue) {
    throw new DvergrError("USAGE", "A worker needs a store shared by workers", {
      hint: "Give --store postgres://USER@HOST:PORT/DATABASE (or set DVERGR_STORE)",
    });
  }
  const { timer } = opts.services;
  const worker = { id: opts.holder.owner, host: opts.holder.host, pid: opts.holder.pid };
  const skipped = new Map<string, string>();
  const result: WorkerResult = { reason: "stopped", attempts: 0, closed: [] };
  let idleSince = timer.now();
  let backoff = 0;
  const beat = heartbeat(queue, worker, opts);
  try {
    await queue.markWorker(worker, "running");
    while (!opts.signal.aborted) {
      let pass: Pass;
      try {
        pass = await workOnce(queue, opts, skipped);
        backoff = 0;
      } catch (e) {
        if (opts.signal.aborted) break;
        if (!queue.unavailable(e)) throw e;
        backoff = Math.min(MAX_BACKOFF_MS, Math.max(500, backoff * 2));
        opts.log(`the store is out of reach (${messageOf(e)}); trying again in ${backoff} ms`);
        await timer.sleep(backoff, opts.signal);
        continue;
      }
      result.attempts += pass.attempts;
      result.closed.push(...pass.closed);
      if (opts.experiment !== undefined && pass.closed.includes(opts.experiment)) {
        return { ...result, reason: "closed" };
      }
      if (opts.experiment !== undefined && await queue.state(opts.experiment) === "closed") {
        return { ...result, reason: "closed" };
      }
      if (pass.attempts > 0) idleSince = timer.now();
      else if (opts.idleExitMs !== undefined && timer.now() - idleSince >= opts.idleExitMs) {
        return { ...result, reason: "idle" };
      } else await timer.sleep(opts.pollMs ?? 2000, opts.signal);
    }
    return result;
  } finally {
    beat.stop();
    await queue.markWorker(worker, "stopped").catch(() => {});
  }
}

/** Says the worker is alive every HEARTBEAT_MS until stopped. */
function heartbeat(
  queue: ExperimentQueue,
  worker: { id: string; host: string; pid: number },
  opts: WorkerOptions,
): { stop(): void } {
  const stopped = new AbortController();
  const loop = async () => {
    while (!stopped.signal.aborted) {
      await opts.services.timer.sleep(HEARTBEAT_MS, stopped.signal);
      if (stopped.signal.aborted) return;
      await queue.markWorker(worker, "running").catch(() => {});
    }
  };
  void loop();
  return { stop: () => stopped.abort() };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs what it can of every open experiment once. */
async function workOnce(
  queue: ExperimentQueue,
  opts: WorkerOptions,
  skipped: Map<string, string>,
): Promise<Pass> {
  const pass: Pass = { attempts: 0, closed: [] };
  for (const q of await queue.open(opts.experiment)) {
    if (opts.signal.aborted) break;
    if (skipped.has(q.experiment)) continue;
    let ran: Ran | null;
    try {
      ran = await runQueued(q, opts);
    } catch (e) {
      if (!(e instanceof DvergrError) || queue.unavailable(e.cause)) throw e;
      // This machine cannot run it (a key, a mount or an agent CLI missing): others may.
      skipped.set(q.experiment, e.message);
      opts.log(`experiment ${q.experiment} left to other workers: ${e.message}`);
      continue;
    }
    if (ran === null) {
      skipped.set(q.experiment, "plans differently here");
      continue;
    }
    pass.attempts += ran.attempts;
    if (ran.attempts > 0) {
      opts.log(
        `experiment ${q.experiment.slice(0, 8)}: ${ran.attempts} attempts here; ` +
          `${ran.graded} of ${ran.total} cells graded`,
      );
    }
    if (ran.complete && !opts.signal.aborted) {
      await queue.close(q.experiment);
      pass.closed.push(q.experiment);
      opts.log(`experiment ${q.experiment}: every cell recorded, closed`);
    }
  }
  return pass;
}

/** What one pass over an experiment did. */
interface Ran {
  attempts: number;
  graded: number;
  total: number;
  complete: boolean;
}

/** Prepares a queued experiment here and runs its cells; null when it plans differently here. */
async function runQueued(q: QueuedExperiment, opts: WorkerOptions): Promise<Ran | null> {
  const { home } = opts;
  const r = q.request;
  const files = await bundleFilesOf(home.blobs, r.bundle.name, r.bundle.files);
  if (files === null) {
    throw new DvergrError("NOT_FOUND", `The store lacks a file of bundle ${r.bundle.name}`, {
      hint: "Enqueue the experiment again: `dvergr benchmark … --store URL --enqueue`",
    });
  }
  const prepared = await prepareBenchmark({
    ...r.plan,
    services: opts.services,
    bundle: files,
    specs: r.specs as CandidateSpec[],
    runner: opts.runner,
    home,
    room: r.room,
    roomless: true,
    env: opts.env,
    baseline: r.baseline,
    stopWhenDecided: r.stopWhenDecided,
    limits: r.limits as ResourceLimits | undefined,
    mounts: r.mounts,
    sources: r.sources,
  });
  const { plan } = prepared;
  if (plan.id !== q.experiment) {
    opts.log(
      `experiment ${q.experiment} left to other workers: it plans as ${plan.id} on this ` +
        "machine (a candidate resolves differently here, e.g. another agent CLI version)",
    );
    return null;
  }
  const result = await runExperiment({
    services: opts.services,
    state: home.state,
    blobs: home.blobs,
    worldsDir: home.worldsDir,
    bundle: prepared.bundle,
    plan,
    candidates: prepared.candidates,
    runner: opts.runner,
    room: r.room,
    trust: prepared.trust,
    effects: prepared.effects,
    parallel: opts.parallel,
    onEvent: (e) => opts.onEvent?.(q.experiment, e),
    signal: opts.signal,
    cellStates: prepared.cellStates,
    stopping: prepared.stopping,
    holder: opts.holder,
    leaseMs: opts.leaseMs,
    leaveOthers: true,
    bundleFiles: r.bundle.files,
  });
  if (result.complete) {
    await scoreExperiment(home.state, plan, {
      trust: prepared.trust,
      baseline: prepared.baseline,
      bundleCases: prepared.bundle.cases.length,
      stopping: prepared.stopping,
    });
  }
  const { attempts, graded, total, complete } = result;
  return { attempts, graded, total, complete };
}
