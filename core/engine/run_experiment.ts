/**
 * Runs an experiment's cells: up to `parallel` attempts at once, each in a fresh world,
 * graded by the bundle's checker, recorded atomically. Running a plan again resumes it:
 * cells whose latest record has a verdict made with the same inputs are kept; cells that
 * faulted (the candidate could not start, the checker faulted, the host failed) run again,
 * and a cell that faults in this run gets one more try within it.
 *
 * A record is written only when an attempt has finished (verdict or fault), atomically;
 * records finished while the previous commit was landing are committed together in one
 * atomic operation (group_commit.ts), and a cell counts (progress, tally, retry) only once
 * its commit has landed: a process killed at any moment loses at most the attempts in
 * flight, those awaiting their commit included. A cancelled run (its signal aborted)
 * records nothing for the attempts it interrupted.
 *
 * Several processes may run one experiment on one home (two `dvergr benchmark`, an MCP
 * job and a CLI run): a cell runs only under its lease in the state store, taken for a group
 * of cells at once (the idle workers' cells and those that would start within the lease-ahead
 * window, lease_ahead.ts), renewed until its record is committed, and released by that
 * commit. A cell leased by another live process is left to it; once nothing else is left,
 * the run waits for those cells (reading their records with bounded backoff) and takes over
 * any whose lease ran out (a killed holder), so it still ends with every cell's verdict.
 *
 * With a stopping rule (`--stop-when-decided`) the run keeps a confidence sequence per
 * candidate against the baseline (core/bench/sequential.ts), fed each pair of cells as it
 * is graded; once a comparison stops, the candidate's cells still to run are not needed and
 * are left out (the baseline's once every comparison has stopped), and a fault's retry goes
 * to the front of the queue, since the comparison waits for that pair.
 */
import { type AttemptEffects, prepareEffects } from "./attempt_effects.ts";
import type { Candidate } from "../bench/candidate.ts";
import type { AttemptRecord } from "../bench/records.ts";
import type { ExperimentPlan } from "../bench/experiment.ts";
import {
  cellCounts,
  CellState,
  type CellStates,
  keeps,
  noteRecord,
  type PendingCell,
  readCellStates,
  resumeState,
} from "../bench/resume.ts";
import { PendingQueue } from "../bench/pending_queue.ts";
import type { Timer } from "../ports/timer.ts";
import type { StateStore } from "../ports/state_store.ts";
import type { World } from "../ports/world_factory.ts";
import { type AttemptRun, runAttempt } from "./attempt.ts";
import { type CellLeases, cellLeases, LEASE_MS, newLeaseHolder } from "./leases.ts";
import { groupCommitter } from "./group_commit.ts";
import { stagedBlobs } from "./staged_blobs.ts";
import { leaseAheadWindow } from "./lease_ahead.ts";
import {
  type ComparisonStop,
  SequentialComparisons,
  type StoppingRule,
} from "../bench/sequential.ts";
import { rewardOf } from "../bench/history_fold.ts";

/** What the engine reports while it runs. */
export type ProgressEvent =
  | {
    type: "start";
    experimentId: string;
    total: number;
    /** Cells kept from earlier runs. */
    kept: number;
    toRun: number;
    /** Cells not needed already (sequential stopping, resumed); absent without it. */
    notNeeded?: number;
  }
  | {
    type: "attempt";
    record: AttemptRecord;
    /** Cells with a verdict so far (kept ones included). */
    done: number;
    /** Cells whose latest try faulted. */
    faults: number;
    total: number;
    /** The cell will be tried again in this run. */
    willRetry: boolean;
  }
  | {
    type: "waiting";
    /** Cells another process holds the lease of, which this run waits for. */
    cells: number;
    /** How long a lease lasts without renewal (a stopped holder's cells wait this long). */
    leaseMs: number;
    done: number;
    faults: number;
    total: number;
  }
  | {
    type: "stopped";
    /** The comparison that stopped (sequential stopping). */
    comparison: ComparisonStop;
    /** Cells not needed now, of the whole plan. */
    notNeeded: number;
    done: number;
    faults: number;
    total: number;
  }
  | {
    type: "end";
    done: number;
    faults: number;
    total: number;
    cancelled: boolean;
    /** Cells not needed (sequential stopping); absent without it. */
    notNeeded?: number;
  };

export interface RunOptions extends AttemptRun {
  state: StateStore;
  candidates: Candidate[];
  /** The room the experiment runs in (recorded with it). */
  room: string;
  /** Attempts at once; default 4. */
  parallel?: number;
  /** Extra tries within this run for a cell that faults; default 1. */
  faultRetries?: number;
  onEvent?: (e: ProgressEvent) => void;
  clock?: () => Date;
  /** Lease times, renewals and the pauses between looks at others' cells; default the services'. */
  timer?: Timer;
  /** Where the cells stand, when the caller has just read it (readCellStates); default: read now. */
  cellStates?: CellStates;
  /** A cell's lease time (renewed every third of it); default LEASE_MS. */
  leaseMs?: number;
  /** The longest pause between looks at cells another process runs; default 2000 ms. */
  maxPollMs?: number;
  /**
   * The attempts' web and judge (prepareEffects, keys checked by prepareBenchmark);
   * default: prepared from the process's environment through the services. Its identity belongs in the plan
   * (PlanOptions.verifier).
   */
  effects?: AttemptEffects;
  /** Stop each comparison with the baseline once decided or equivalent (`--stop-when-decided`). */
  stopping?: StoppingRule;
}

export interface RunResult {
  experimentId: string;
  total: number;
  kept: number;
  /** Attempts made by this run (retries included). */
  attempts: number;
  /** Cells with a verdict now. */
  graded: number;
  /** Cells whose latest try faulted (not needed ones aside). */
  faults: number;
  /** Cells left out as not needed (sequential stopping); 0 without it. */
  notNeeded: number;
  /** Every cell has a verdict or is not needed. */
  complete: boolean;
  cancelled: boolean;
  wallClockMs: number;
}

/** The first look at cells another process holds, after this run's own are done. */
const FIRST_LOOK_MS = 50;

/** Records on their way to the state store per worker, at most, before workers wait. */
const MAX_LANDING = 4;

/** The effects of a run given none: prepared from the process's environment. */
function environmentEffects(opts: RunOptions): Promise<AttemptEffects> {
  return prepareEffects(opts.bundle, { env: (k) => Deno.env.get(k) }, opts.services);
}

/** The run's leases on its experiment's cells, held by a new holder of this process. */
function runLeases(opts: RunOptions, leaseMs: number, timer: Timer): CellLeases {
  const { processes } = opts.services;
  const holder = newLeaseHolder(processes);
  return cellLeases(opts.state, opts.plan.id, { holder, processes, leaseMs, timer });
}

/** Runs (or resumes) an experiment and returns where every cell stands. */
export async function runExperiment(opts: RunOptions): Promise<RunResult> {
  const clock = opts.clock ?? (() => new Date());
  const timer = opts.timer ?? opts.services.timer;
  const parallel = Math.max(1, opts.parallel ?? 4);
  const { plan, bundle, state } = opts;
  const total = plan.cells.length;
  const started = performance.now();
  const byName = new Map(opts.candidates.map((c) => [c.name, c]));
  const isCancelled = () => opts.signal?.aborted === true;

  await state.putExperiment({
    id: plan.id,
    room: opts.room,
    bundleName: bundle.name,
    bundleId: bundle.id,
    createdAt: clock().toISOString(),
    cells: total,
    definition: plan.definition as unknown as Record<string, unknown>,
  });
  // Kept current as cells settle (the caller's copy is left as it was).
  const given = opts.cellStates;
  const states = given
    ? { tryNo: given.tryNo.slice(), state: given.state.slice() }
    : await readCellStates(plan, state.streamCellRecords(plan.id));
  const resume = resumeState(plan, states);
  const { kept } = resume;
  const seq = opts.stopping ? await sequentialOf(plan, state, opts.stopping) : null;
  /** The cell is not needed any more: its comparison has stopped (sequential stopping). */
  const notNeededCell = (i: number) => seq !== null && seq.notNeededCell(i);
  const startNotNeeded = seq ? countNotNeeded(states, seq) : 0;
  opts.onEvent?.({
    type: "start",
    experimentId: plan.id,
    total,
    kept,
    toRun: resume.toRun - startNotNeeded,
    ...(seq ? { notNeeded: startNotNeeded } : {}),
  });

  const effects = opts.effects ?? await environmentEffects(opts);
  const leaseMs = Math.max(50, opts.leaseMs ?? LEASE_MS);
  const maxPollMs = Math.max(10, opts.maxPollMs ?? 2000);
  const leases = runLeases(opts, leaseMs, timer);
  const committer = groupCommitter(state, leases.holder.owner);
  const tally = { done: kept, faults: resume.faults };
  let attempts = 0;
  // A cursor over the plan's cells, not an array of every pending one.
  const queue = new PendingQueue(
    plan,
    states,
    opts.faultRetries ?? 1,
    seq ? notNeededCell : undefined,
  );
  /** Cells leased by this run, their records re-read, not started yet. */
  const ready: PendingCell[] = [];
  /** Cells whose lease another process holds, to look at again once the queue is empty. */
  const deferred: PendingCell[] = [];
  let running = 0;
  const window = leaseAheadWindow(parallel);

  // Worlds are removed off the workers' path; the run waits for them before it returns.
  const removals = new Set<Promise<void>>();
  const remove = (world: World) => {
    const p = world.remove().catch(() => {}).finally(() => removals.delete(p));
    removals.add(p);
  };

  /** Counts a cell's new latest record and tells it; true when the cell runs again. */
  const settle = (item: PendingCell, record: AttemptRecord, mayRetry: boolean): boolean => {
    const { faulted } = resume;
    if (record.verdict) {
      tally.done++;
      if (faulted[item.index] === 1) {
        faulted[item.index] = 0;
        tally.faults--;
      }
    } else if (faulted[item.index] === 0) {
      faulted[item.index] = 1;
      tally.faults++;
    }
    noteRecord(states, item.index, record, item.cell.inputHash);
    const stopped = seq && record.verdict ? seq.noteCell(item.index, rewardOf(record)) : [];
    const willRetry = mayRetry && record.verdict === null && item.retriesLeft > 0 &&
      !isCancelled() && record.fault?.permanent !== true && !notNeededCell(item.index);
    opts.onEvent?.({ type: "attempt", record, ...tally, total, willRetry });
    for (const comparison of stopped) {
      opts.onEvent?.({
        type: "stopped",
        comparison,
        notNeeded: countNotNeeded(states, seq!),
        ...tally,
        total,
      });
    }
    return willRetry;
  };

  /**
   * Leases the next queued cells, for the idle workers and as many more as would start within
   * the lease-ahead window; cells another process holds are deferred, cells another process
   * recorded since this run read them are counted and released.
   */
  const lease = async (): Promise<void> => {
    // With stopping, a retry (put back at the front) is leased alone and runs next: its
    // comparison waits for that pair.
    const urgent = seq !== null && queue.putBackFirst();
    const want = urgent
      ? 1
      : Math.min(queue.length, parallel - running + window.ahead() - ready.length);
    if (want <= 0) return;
    const items = queue.take(want);
    let taken: boolean[];
    let now: (AttemptRecord | null)[];
    try {
      taken = await leases.take(items.map((i) => i.cell.key));
      // Another process may have recorded a cell since this run read it.
      now = await state.cellRecordsOf(
        plan.id,
        items.flatMap((i, n) => taken[n] ? [i.cell.key] : []),
      );
    } catch (e) {
      queue.unshift(items); // tried again by the next look (a lease of ours is taken again)
      throw e;
    }
    const mine = items.filter((item, i) => taken[i] || void deferred.push(item));
    if (mine.length < items.length && queue.length > 1) {
      // Another process runs this experiment, leasing ahead in the same order: following it,
      // this run would find only its leases. Go on from a random place in the queue instead,
      // so the two work on different cells.
      queue.rotate(Math.random());
    }
    const done: string[] = [];
    for (const [i, item] of mine.entries()) {
      const r = now[i];
      if (r && r.tryNo >= item.tryNo) {
        if (keeps(item.cell, r)) {
          settle(item, r, false);
          done.push(item.cell.key);
          continue;
        }
        item.tryNo = r.tryNo + 1;
      }
      if (urgent) ready.unshift(item);
      else ready.push(item);
    }
    await leases.release(done);
  };
  /** The lease look in flight: one at a time, shared by the workers that wait for it. */
  const look: { leasing: Promise<void> | null } = { leasing: null };
  const leaseOnce = () =>
    look.leasing ??= lease().finally(() => {
      look.leasing = null;
    });

  /** The next cell to run (leased), or undefined when none is left for this run. */
  const next = async (): Promise<PendingCell | undefined> => {
    for (;;) {
      if (isCancelled()) return undefined;
      if (seq && ready.some((i) => notNeededCell(i.index))) {
        // Leased before their comparison stopped: given back, not run.
        const dropped = ready.filter((i) => notNeededCell(i.index)).map((i) => i.cell.key);
        const needed = ready.filter((i) => !notNeededCell(i.index));
        ready.splice(0, ready.length, ...needed);
        await leases.release(dropped);
        continue;
      }
      if (seq && queue.putBackFirst()) {
        await leaseOnce();
        continue;
      }
      const item = ready.shift();
      if (item) {
        running++;
        // Lease the next group while this one runs, so workers seldom wait for a commit.
        if (queue.length > 0 && ready.length * 2 <= window.ahead()) {
          void leaseOnce().catch(() => {});
        }
        return item;
      }
      if (queue.length === 0 && look.leasing === null) return undefined;
      await leaseOnce();
    }
  };

  /** Commits on their way (each settles its cell when it lands); a failed one's error. */
  const landing = new Set<Promise<void>>();
  let commitFailure: { error: unknown } | null = null;
  /** Waits for every commit on its way; throws the first that failed. */
  const landed = async () => {
    while (landing.size > 0) await Promise.all([...landing]);
    if (commitFailure) throw commitFailure.error;
  };

  /**
   * Runs one leased cell and hands its record to the committer (whose commit releases the
   * lease). The worker moves on at once: the cell counts, and may be tried again, only once
   * its commit has landed; until then it is in flight.
   */
  const runCell = async (item: PendingCell): Promise<void> => {
    const key = item.cell.key;
    if (leases.lost(key)) return void deferred.push(item); // its lease ran out before it began
    const candidate = byName.get(item.cell.candidate);
    if (!candidate) throw new Error(`No candidate "${item.cell.candidate}" for a planned cell`);
    const t0 = timer.now();
    let record: AttemptRecord | null = null;
    // Its evidence is committed with its record, not written as a file of its own.
    const blobs = stagedBlobs(opts.blobs);
    try {
      record = await runAttempt({ ...opts, blobs }, effects, candidate, item, clock, remove);
    } finally {
      if (record === null) await leases.release([key]); // cancelled (or failed): nothing recorded
    }
    if (record === null) return;
    attempts++;
    window.finished(timer.now() - t0);
    leases.handOver(key);
    const done = record;
    const commit = committer.commit(done, blobs.take()).then((written) => {
      if (!written) return; // another process recorded it first
      if (settle(item, done, true)) {
        const retry = { ...item, tryNo: done.tryNo + 1, retriesLeft: item.retriesLeft - 1 };
        // A comparison waits for this pair: with stopping, its retry comes first.
        if (seq) queue.unshift([retry]);
        else queue.push(retry);
      }
    }).catch(async (error) => {
      commitFailure ??= { error };
      await leases.release([key]);
    }).finally(() => landing.delete(commit));
    landing.add(commit);
    // Bounded: a committer that falls behind holds the workers back.
    if (landing.size >= MAX_LANDING * parallel) await commit;
    if (commitFailure) throw commitFailure.error;
  };
  /** The first error of a worker: the others stop before their next cell. */
  let workerFailure: { error: unknown } | null = null;
  const worker = async () => {
    try {
      for (let item; workerFailure === null && (item = await next());) {
        try {
          await runCell(item);
        } finally {
          running--;
        }
      }
    } catch (error) {
      workerFailure ??= { error };
    }
  };
  /**
   * Runs the queue to the end, retries included (queued as their first tries land). A failure
   * is thrown once every worker has stopped and every commit on its way has landed, so
   * nothing of the run goes on after it has returned.
   */
  const drain = async () => {
    do {
      await Promise.all(Array.from({ length: parallel }, worker));
      await landed();
      if (workerFailure) throw workerFailure.error;
    } while (queue.length > 0 && !isCancelled());
  };

  try {
    await drain();
    // What is left is held by other processes: wait for their records, take over expired leases.
    // The first look comes soon (the other's cells may be fast ones it leased ahead), later
    // ones back off.
    let wait = FIRST_LOOK_MS;
    let told = -1;
    while (deferred.length > 0 && !isCancelled()) {
      if (seq) {
        deferred.splice(
          0,
          deferred.length,
          ...deferred.filter((i) => !notNeededCell(i.index)),
        );
      }
      if (deferred.length === 0) break;
      if (deferred.length !== told) {
        told = deferred.length;
        opts.onEvent?.({ type: "waiting", cells: told, leaseMs, ...tally, total });
      }
      await timer.sleep(wait, opts.signal);
      wait = Math.min(wait * 2, maxPollMs);
      const items = deferred.splice(0);
      const records = await state.cellRecordsOf(plan.id, items.map((i) => i.cell.key));
      for (const [n, item] of items.entries()) {
        const r = records[n];
        if (r && keeps(item.cell, r)) settle(item, r, false);
        else (await leases.heldByOther(item.cell.key) ? deferred : queue).push(item);
      }
      if (queue.length > 0) {
        wait = FIRST_LOOK_MS;
        told = -1;
        await drain();
      }
    }
  } finally {
    await landed().catch(() => {});
    // Cells leased but not started (a cancelled run) are given back.
    await look.leasing?.catch(() => {});
    await leases.release(ready.splice(0).map((i) => i.cell.key));
    leases.close();
    await Promise.all([...removals]);
  }
  return await finish(opts, states, kept, attempts, started, seq);
}

/** The comparisons of a run with a stopping rule, fed the verdicts the home holds already. */
async function sequentialOf(
  plan: ExperimentPlan,
  state: StateStore,
  rule: StoppingRule,
): Promise<SequentialComparisons> {
  const names = plan.definition.candidates.map((c) => c.name);
  const seq = new SequentialComparisons(names, plan.cells.length / names.length, rule);
  for await (const r of state.streamCellRecords(plan.id)) {
    const i = plan.cells.indexOf(r.candidate, r.caseId, r.repetition);
    if (i >= 0 && r.verdict !== null && r.inputHash === plan.cells.inputHashAt(i)) {
      seq.noteCell(i, rewardOf(r));
    }
  }
  return seq;
}

/** Cells without a kept verdict that are not needed. */
function countNotNeeded(states: CellStates, seq: SequentialComparisons): number {
  let n = 0;
  states.state.forEach((s, i) => {
    if (s !== CellState.Kept && seq.notNeededCell(i)) n++;
  });
  return n;
}

/** Above this many cells not known to be kept, the run's end streams every cell's record. */
const LOOK_UP_AT_MOST = 1000;

/**
 * Reads back where the cells this run has not seen kept stand (another process may have
 * recorded them; a kept cell stays kept) and tells it. A few are looked up by key; when many
 * are left (a cancelled run) every cell's record is streamed instead.
 */
async function finish(
  opts: RunOptions,
  states: CellStates,
  kept: number,
  attempts: number,
  started: number,
  seq: SequentialComparisons | null,
): Promise<RunResult> {
  const { plan } = opts;
  const open: number[] = [];
  for (let i = 0; i < states.state.length && open.length <= LOOK_UP_AT_MOST; i++) {
    if (states.state[i] !== CellState.Kept && !seq?.notNeededCell(i)) open.push(i);
  }
  let now = states;
  if (open.length > LOOK_UP_AT_MOST) {
    now = await readCellStates(plan, opts.state.streamCellRecords(plan.id));
  } else if (open.length > 0) {
    const cells = open.map((i) => plan.cells.at(i));
    const records = await opts.state.cellRecordsOf(plan.id, cells.map((c) => c.key));
    records.forEach((r, n) => r && noteRecord(states, open[n], r, cells[n].inputHash));
  }
  const { graded } = cellCounts(now);
  let { faults } = cellCounts(now);
  let notNeeded = 0;
  if (seq) {
    now.state.forEach((s, i) => {
      if (s === CellState.Kept || !seq.notNeededCell(i)) return;
      notNeeded++;
      if (s === CellState.Fault) faults--;
    });
  }
  const total = plan.cells.length;
  const cancelled = opts.signal?.aborted === true;
  opts.onEvent?.({
    type: "end",
    done: graded,
    faults,
    total,
    cancelled,
    ...(seq ? { notNeeded } : {}),
  });
  return {
    experimentId: plan.id,
    total,
    kept,
    attempts,
    graded,
    faults,
    notNeeded,
    complete: graded + notNeeded === total,
    cancelled,
    wallClockMs: Math.round(performance.now() - started),
  };
}
