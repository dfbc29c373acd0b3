/**
 * Runs an experiment's cells: up to `parallel` attempts at once, each in a fresh world,
 * graded by the bundle's checker, recorded atomically. Running a plan again resumes it:
 * cells whose latest record has a verdict made with the same inputs are kept; cells that
 * faulted (the candidate could not start, the checker faulted, the host failed) run again,
 * and a cell that faults in this run gets one more try within it.
 *
 * A record is written only when an attempt has finished (verdict or fault), atomically;
 * records finished while the previous commit was landing, or within a few milliseconds of
 * each other, are committed together in one atomic operation (group_commit.ts), and a cell
 * counts (progress, tally, retry) only once its commit has landed: a process killed at any
 * moment loses at most the attempts in flight, those awaiting their commit included. A cancelled run (its signal aborted)
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
  type ResumeState,
  resumeState,
} from "../bench/resume.ts";
import { PendingQueue } from "../bench/pending_queue.ts";
import type { Timer } from "../ports/timer.ts";
import type { StateStore } from "../ports/state_store.ts";
import type { World } from "../ports/world_factory.ts";
import { type AttemptRun, runAttempt } from "./attempt.ts";
import {
  type CellLeases,
  cellLeases,
  LEASE_MS,
  type LeaseHolder,
  newLeaseHolder,
} from "./leases.ts";
import { type GroupCommitter, groupCommitter } from "./group_commit.ts";
import { stagedBlobs } from "./staged_blobs.ts";
import { type LeaseAheadWindow, leaseAheadWindow } from "./lease_ahead.ts";
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
  /** Who takes the leases (a worker's own id); default a new holder of this process. */
  holder?: LeaseHolder;
  /**
   * Leave the cells other live holders lease to them and return (a worker, which goes on to
   * other experiments and comes back), instead of waiting for their records.
   */
  leaveOthers?: boolean;
  /** The blob id of the bundle's file manifest, recorded with the experiment (a shared store). */
  bundleFiles?: string;
  /**
   * Nothing of the run is recorded, the experiment included, before this settles (the
   * bundle's install in its room, done beside the first cells); when it rejects, the run
   * records nothing and throws its error once its workers have stopped.
   */
  recordAfter?: Promise<unknown>;
  /**
   * What one leased cell's try is: default runAttempt() with the cell's candidate; a
   * re-grade (regrade.ts) grades the kept evidence of another experiment's attempt instead.
   */
  attempt?: CellAttempt;
}

/** One try of a leased cell, its record (null: cancelled, nothing recorded). */
export type CellAttempt = (
  run: AttemptRun,
  effects: AttemptEffects,
  item: PendingCell,
  clock: () => Date,
  remove: (world: World, reusable: boolean) => void,
) => Promise<AttemptRecord | null>;

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

/**
 * Records on their way to the state store per worker, at most, before workers wait (and the
 * committer is told to commit at once) until the oldest commit has landed: 16, two full
 * group commits at --parallel 4 (group_commit.ts), so that the records of quick cells that
 * finish while a full group lands do not hold the workers back. With 8 (one full group of
 * 32) the workers waited at almost every group, each for the commit landing and then their
 * own: ~100 waits in a 1,000-cell run of an instant candidate.
 */
const MAX_LANDING = 16;

/**
 * The same bound under a stopping rule: a comparison is decided on landed records only, so a
 * record in flight may be a cell run after its comparison was decided. 8 there, as before the
 * bound was raised for throughput: with 16 an instant candidate ran ~10 more cells of 100
 * past the decision (tests/cli/sequential_cli_test.ts).
 */
const MAX_LANDING_STOPPING = 8;

/** The effects of a run given none: prepared from the process's environment. */
function environmentEffects(opts: RunOptions): Promise<AttemptEffects> {
  return prepareEffects(opts.bundle, { env: (k) => Deno.env.get(k) }, opts.services);
}

/** Runs (or resumes) an experiment and returns where every cell stands. */
export async function runExperiment(opts: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const clock = opts.clock ?? (() => new Date());
  const { plan, bundle, state } = opts;
  const createdAt = clock().toISOString();
  const putExperiment = () =>
    state.putExperiment({
      id: plan.id,
      room: opts.room,
      bundleName: bundle.name,
      bundleId: bundle.id,
      createdAt,
      cells: plan.cells.length,
      definition: plan.definition as unknown as Record<string, unknown>,
      ...(opts.bundleFiles ? { bundleFiles: opts.bundleFiles } : {}),
    });
  // The experiment is recorded before any of its records (its commits wait for it).
  const recorded = opts.recordAfter === undefined
    ? Promise.resolve(await putExperiment())
    : opts.recordAfter.then(putExperiment);
  // Kept current as cells settle (the caller's copy is left as it was).
  const given = opts.cellStates;
  const states = given
    ? { tryNo: given.tryNo.slice(), state: given.state.slice() }
    : await readCellStates(plan, state.streamCellRecords(plan.id));
  const seq = opts.stopping ? await sequentialOf(plan, state, opts.stopping) : null;
  const run = new ExperimentRun(opts, clock, states, seq, recorded);
  run.tellStart();
  try {
    const effects = opts.effects ?? await environmentEffects(opts);
    await run.run(effects);
  } catch (e) {
    await recorded.catch(() => {});
    throw e;
  }
  // A run with nothing to commit has still recorded its experiment (or throws why not).
  await recorded;
  return await finish(opts, states, run.kept, run.attempts, started, seq);
}

/** One run of an experiment's cells: its queue, leases, workers and commits. */
class ExperimentRun {
  readonly timer: Timer;
  readonly parallel: number;
  readonly total: number;
  readonly kept: number;
  attempts = 0;
  readonly resume: ResumeState;
  readonly tally: { done: number; faults: number };
  readonly byName: Map<string, Candidate>;
  readonly leaseMs: number;
  readonly maxPollMs: number;
  readonly leases: CellLeases;
  readonly committer: GroupCommitter;
  /** A cursor over the plan's cells, not an array of every pending one. */
  readonly queue: PendingQueue;
  /** Cells leased by this run, their records re-read, not started yet. */
  readonly ready: PendingCell[] = [];
  /** Cells whose lease another process holds, to look at again once the queue is empty. */
  readonly deferred: PendingCell[] = [];
  running = 0;
  readonly window: LeaseAheadWindow;
  /** Worlds are removed off the workers' path; the run waits for them before it returns. */
  readonly removals = new Set<Promise<void>>();
  /** The lease look in flight: one at a time, shared by the workers that wait for it. */
  leasing: Promise<void> | null = null;
  /** Commits on their way (each settles its cell when it lands). */
  readonly landing = new Set<Promise<void>>();
  commitFailure: { error: unknown } | null = null;
  /** The first error of a worker: the others stop before their next cell. */
  workerFailure: { error: unknown } | null = null;
  effects: AttemptEffects | null = null;

  constructor(
    readonly opts: RunOptions,
    readonly clock: () => Date,
    readonly states: CellStates,
    readonly seq: SequentialComparisons | null,
    recorded: Promise<unknown>,
  ) {
    this.timer = opts.timer ?? opts.services.timer;
    this.parallel = Math.max(1, opts.parallel ?? 4);
    this.total = opts.plan.cells.length;
    this.resume = resumeState(opts.plan, states);
    this.kept = this.resume.kept;
    this.tally = { done: this.kept, faults: this.resume.faults };
    this.byName = new Map(opts.candidates.map((c) => [c.name, c]));
    this.leaseMs = Math.max(50, opts.leaseMs ?? LEASE_MS);
    this.maxPollMs = Math.max(10, opts.maxPollMs ?? 2000);
    const { processes } = opts.services;
    this.leases = cellLeases(opts.state, opts.plan.id, {
      holder: opts.holder ?? newLeaseHolder(processes),
      processes,
      leaseMs: this.leaseMs,
      timer: this.timer,
    });
    // With a stopping rule each verdict may stop a comparison: none waits for company, or
    // cells that turn out not to be needed would start meanwhile.
    this.committer = groupCommitter(
      opts.state,
      this.leases.holder.owner,
      { after: recorded, ...(seq ? { gatherMs: 0 } : {}) },
    );
    this.queue = new PendingQueue(
      opts.plan,
      states,
      opts.faultRetries ?? 1,
      seq ? (i) => this.notNeededCell(i) : undefined,
    );
    this.window = leaseAheadWindow(this.parallel);
  }

  isCancelled(): boolean {
    return this.opts.signal?.aborted === true;
  }

  /** The cell is not needed any more: its comparison has stopped (sequential stopping). */
  notNeededCell(i: number): boolean {
    return this.seq !== null && this.seq.notNeededCell(i);
  }

  tellStart(): void {
    const startNotNeeded = this.seq ? countNotNeeded(this.states, this.seq) : 0;
    this.opts.onEvent?.({
      type: "start",
      experimentId: this.opts.plan.id,
      total: this.total,
      kept: this.kept,
      toRun: this.resume.toRun - startNotNeeded,
      ...(this.seq ? { notNeeded: startNotNeeded } : {}),
    });
  }

  remove = (world: World, reusable = false) => {
    const p = world.remove({ reusable }).catch(() => {}).finally(() => this.removals.delete(p));
    this.removals.add(p);
  };

  /** A benchmark's try of a cell: its candidate run in a fresh world (runAttempt). */
  candidateAttempt: CellAttempt = (run, effects, item, clock, remove) => {
    const candidate = this.byName.get(item.cell.candidate);
    if (!candidate) throw new Error(`No candidate "${item.cell.candidate}" for a planned cell`);
    return runAttempt(run, effects, candidate, item, clock, remove);
  };

  /** Runs the cells, then waits for (or, leaving them, leaves) those others hold. */
  async run(effects: AttemptEffects): Promise<void> {
    this.effects = effects;
    try {
      await this.drain();
      await this.waitForOthers();
    } finally {
      await this.landed().catch(() => {});
      // Cells leased but not started (a cancelled run) are given back.
      await this.leasing?.catch(() => {});
      await this.leases.release(this.ready.splice(0).map((i) => i.cell.key));
      this.leases.close();
      await Promise.all([...this.removals]);
    }
  }

  /** Counts a cell's new latest record and tells it; true when the cell runs again. */
  settle(item: PendingCell, record: AttemptRecord, mayRetry: boolean): boolean {
    const { faulted } = this.resume;
    const { tally, seq } = this;
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
    noteRecord(this.states, item.index, record, item.cell.inputHash);
    const stopped = seq && record.verdict ? seq.noteCell(item.index, rewardOf(record)) : [];
    const willRetry = mayRetry && record.verdict === null && item.retriesLeft > 0 &&
      !this.isCancelled() && record.fault?.permanent !== true && !this.notNeededCell(item.index);
    const total = this.total;
    this.opts.onEvent?.({ type: "attempt", record, ...tally, total, willRetry });
    for (const comparison of stopped) {
      const notNeeded = countNotNeeded(this.states, seq!);
      this.opts.onEvent?.({ type: "stopped", comparison, notNeeded, ...tally, total });
    }
    return willRetry;
  }

  /**
   * Leases the next queued cells, for the idle workers and as many more as would start within
   * the lease-ahead window; cells another process holds are deferred, cells another process
   * recorded since this run read them are counted and released.
   */
  async lease(): Promise<void> {
    const { queue, ready } = this;
    // With stopping, a retry (put back at the front) is leased alone and runs next: its
    // comparison waits for that pair.
    const urgent = this.seq !== null && queue.putBackFirst();
    const want = urgent
      ? 1
      : Math.min(queue.length, this.parallel - this.running + this.window.ahead() - ready.length);
    if (want <= 0) return;
    const items = queue.take(want);
    let taken: boolean[];
    let now: (AttemptRecord | null)[];
    try {
      taken = await this.leases.take(items.map((i) => i.cell.key));
      // Another process may have recorded a cell since this run read it.
      now = await this.opts.state.cellRecordsOf(
        this.opts.plan.id,
        items.flatMap((i, n) => taken[n] ? [i.cell.key] : []),
      );
    } catch (e) {
      queue.unshift(items); // tried again by the next look (a lease of ours is taken again)
      throw e;
    }
    const mine = items.filter((item, i) => taken[i] || void this.deferred.push(item));
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
          this.settle(item, r, false);
          done.push(item.cell.key);
          continue;
        }
        item.tryNo = r.tryNo + 1;
      }
      if (urgent) ready.unshift(item);
      else ready.push(item);
    }
    await this.leases.release(done);
  }

  leaseOnce(): Promise<void> {
    return this.leasing ??= this.lease().finally(() => {
      this.leasing = null;
    });
  }

  /** Gives back cells leased before their comparison stopped; true when there were any. */
  async dropNotNeeded(): Promise<boolean> {
    const { ready } = this;
    if (!this.seq || !ready.some((i) => this.notNeededCell(i.index))) return false;
    const dropped = ready.filter((i) => this.notNeededCell(i.index)).map((i) => i.cell.key);
    const needed = ready.filter((i) => !this.notNeededCell(i.index));
    ready.splice(0, ready.length, ...needed);
    await this.leases.release(dropped);
    return true;
  }

  /** The next cell to run (leased), or undefined when none is left for this run. */
  async next(): Promise<PendingCell | undefined> {
    for (;;) {
      if (this.isCancelled()) return undefined;
      if (await this.dropNotNeeded()) continue;
      if (this.seq && this.queue.putBackFirst()) {
        await this.leaseOnce();
        continue;
      }
      const item = this.ready.shift();
      if (item) {
        this.running++;
        // Lease the next group while this one runs, so workers seldom wait for a commit.
        if (this.queue.length > 0 && this.ready.length * 2 <= this.window.ahead()) {
          void this.leaseOnce().catch(() => {});
        }
        return item;
      }
      if (this.queue.length === 0 && this.leasing === null) return undefined;
      await this.leaseOnce();
    }
  }

  /** Waits for every commit on its way; throws the first that failed. */
  async landed(): Promise<void> {
    this.committer.flush();
    while (this.landing.size > 0) await Promise.all([...this.landing]);
    if (this.commitFailure) throw this.commitFailure.error;
  }

  /**
   * Runs one leased cell and hands its record to the committer (whose commit releases the
   * lease). The worker moves on at once: the cell counts, and may be tried again, only once
   * its commit has landed; until then it is in flight.
   */
  async runCell(item: PendingCell): Promise<void> {
    const key = item.cell.key;
    const { leases, timer } = this;
    if (leases.lost(key)) return void this.deferred.push(item); // its lease ran out before it began
    const t0 = timer.now();
    let record: AttemptRecord | null = null;
    // Its evidence is committed with its record, not written as a file of its own.
    const blobs = stagedBlobs(this.opts.blobs);
    try {
      const attempt = this.opts.attempt ?? this.candidateAttempt;
      record = await attempt({ ...this.opts, blobs }, this.effects!, item, this.clock, this.remove);
    } finally {
      if (record === null) await leases.release([key]); // cancelled (or failed): nothing recorded
    }
    if (record === null) return;
    this.attempts++;
    this.window.finished(timer.now() - t0);
    leases.handOver(key);
    this.commitCell(item, record, blobs.take());
    // A fault's retry waits for its commit: it goes without waiting for company.
    if (record.verdict === null) this.committer.flush();
    // Bounded: a committer that falls behind holds the workers back, until a commit lands.
    const bound = (this.seq ? MAX_LANDING_STOPPING : MAX_LANDING) * this.parallel;
    if (this.landing.size >= bound) {
      this.committer.flush();
      while (this.landing.size >= bound) await Promise.race(this.landing);
    }
    if (this.commitFailure) throw this.commitFailure.error;
  }

  /** Commits a finished cell's record; once landed, the cell counts (and may be retried). */
  commitCell(
    item: PendingCell,
    done: AttemptRecord,
    blobs: ReadonlyMap<string, Uint8Array>,
  ): Promise<void> {
    const commit: Promise<void> = this.committer.commit(done, blobs).then((written) => {
      if (!written) return; // another process recorded it first
      if (this.settle(item, done, true)) {
        const retry = { ...item, tryNo: done.tryNo + 1, retriesLeft: item.retriesLeft - 1 };
        // A comparison waits for this pair: with stopping, its retry comes first.
        if (this.seq) this.queue.unshift([retry]);
        else this.queue.push(retry);
      }
    }).catch(async (error) => {
      this.commitFailure ??= { error };
      await this.leases.release([item.cell.key]);
    }).finally(() => this.landing.delete(commit));
    this.landing.add(commit);
    return commit;
  }

  async worker(): Promise<void> {
    try {
      for (let item; this.workerFailure === null && (item = await this.next());) {
        try {
          await this.runCell(item);
        } finally {
          this.running--;
        }
      }
    } catch (error) {
      this.workerFailure ??= { error };
    }
  }

  /**
   * Runs the queue to the end, retries included (queued as their first tries land). A failure
   * is thrown once every worker has stopped and every commit on its way has landed, so
   * nothing of the run goes on after it has returned.
   */
  async drain(): Promise<void> {
    do {
      await Promise.all(Array.from({ length: this.parallel }, () => this.worker()));
      await this.landed();
      if (this.workerFailure) throw this.workerFailure.error;
    } while (this.queue.length > 0 && !this.isCancelled());
  }

  /**
   * What is left is held by other processes: wait for their records, take over expired
   * leases. The first look comes soon (the other's cells may be fast ones it leased ahead),
   * later ones back off. A run that leaves others' cells to them (a worker) looks once.
   */
  async waitForOthers(): Promise<void> {
    const { deferred, opts } = this;
    let wait = FIRST_LOOK_MS;
    let told = -1;
    while (deferred.length > 0 && !this.isCancelled()) {
      if (this.seq) {
        deferred.splice(
          0,
          deferred.length,
          ...deferred.filter((i) => !this.notNeededCell(i.index)),
        );
      }
      if (deferred.length === 0) break;
      if (deferred.length !== told && !opts.leaveOthers) {
        told = deferred.length;
        const { leaseMs, tally, total } = this;
        opts.onEvent?.({ type: "waiting", cells: told, leaseMs, ...tally, total });
      }
      if (!opts.leaveOthers) await this.timer.sleep(wait, opts.signal);
      wait = Math.min(wait * 2, this.maxPollMs);
      if (await this.lookAgain() > 0) {
        wait = FIRST_LOOK_MS;
        told = -1;
        await this.drain();
      } else if (opts.leaveOthers) return;
    }
  }

  /** Reads the deferred cells again: kept ones settle, free ones are queued; how many were. */
  async lookAgain(): Promise<number> {
    const items = this.deferred.splice(0);
    const records = await this.opts.state.cellRecordsOf(
      this.opts.plan.id,
      items.map((i) => i.cell.key),
    );
    let queued = 0;
    for (const [n, item] of items.entries()) {
      const r = records[n];
      if (r && keeps(item.cell, r)) this.settle(item, r, false);
      else if (await this.leases.heldByOther(item.cell.key)) this.deferred.push(item);
      else {
        this.queue.push(item);
        queued++;
      }
    }
    return queued;
  }
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
