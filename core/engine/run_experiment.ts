/**
 * Runs an experiment's cells: up to `parallel` attempts at once, each in a fresh world,
 * graded by the bundle's checker, recorded atomically. Running a plan again resumes it:
 * cells whose latest record has a verdict made with the same inputs are kept; cells that
 * faulted (the candidate could not start, the checker faulted, the host failed) run again,
 * and a cell that faults in this run gets one more try within it.
 *
 * A record is written only when an attempt has finished (verdict or fault), in one atomic
 * commit: a process killed at any moment loses at most the attempts in flight. A cancelled
 * run (its signal aborted) records nothing for the attempts it interrupted.
 *
 * Several processes may run one experiment on one home (two `dvergr benchmark`, an MCP
 * job and a CLI run): before a cell runs, its lease is taken in the state store and
 * renewed while the attempt runs, and released once its record is written. A cell leased
 * by another live process is left to it; once nothing else is left, the run waits for
 * those cells (reading their records with bounded backoff) and takes over any whose lease
 * ran out (a killed holder), so it still ends with every cell's verdict.
 */
import type { Bundle } from "../bundle/types.ts";
import { checkerInputFor } from "../bundle/checker_input.ts";
import {
  type AttemptEffects,
  hostChecks,
  judgeAttempt,
  type JudgeOutcome,
  prepareEffects,
  recordWeb,
  withJudgeCost,
} from "./attempt_effects.ts";
import type { CheckerRunner, Verdict } from "../checker.ts";
import type { Candidate, CandidateOutcome } from "../bench/candidate.ts";
import { NO_USAGE } from "../bench/candidate.ts";
import {
  type AttemptEnding,
  type AttemptFault,
  type AttemptRecord,
  cellKey,
  stderrTail,
  type TrustTier,
} from "../bench/records.ts";
import type { ExperimentPlan } from "../bench/experiment.ts";
import { keeps, type PendingCell, resumeState } from "../bench/resume.ts";
import { buildScorecard, type Scorecard } from "../bench/scorecard.ts";
import type { CellLease, StateStore } from "../io/state_store.ts";
import { type BlobStore, putJson } from "../io/blob_store.ts";
import { type Capture, type CaptureLimits, createWorld, type World } from "../io/world.ts";
import { isDvergrError } from "../errors.ts";
import { processAlive } from "../io/process_alive.ts";

/** What the engine reports while it runs. */
export type ProgressEvent =
  | {
    type: "start";
    experimentId: string;
    total: number;
    /** Cells kept from earlier runs. */
    kept: number;
    toRun: number;
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
  | { type: "end"; done: number; faults: number; total: number; cancelled: boolean };

/** How long a cell's lease lasts unless renewed; a third of it between renewals. */
export const LEASE_MS = 30_000;

export interface RunOptions {
  state: StateStore;
  blobs: BlobStore;
  /** Parent directory of the attempt worlds. */
  worldsDir: string;
  bundle: Bundle;
  plan: ExperimentPlan;
  candidates: Candidate[];
  runner: CheckerRunner;
  /** The room the experiment runs in (recorded with it). */
  room: string;
  trust: TrustTier;
  /** Attempts at once; default 4. */
  parallel?: number;
  /** Extra tries within this run for a cell that faults; default 1. */
  faultRetries?: number;
  /** How long past its time limit a candidate may take to stop before the engine moves on. */
  stopGraceMs?: number;
  captureLimits?: Partial<CaptureLimits>;
  onEvent?: (e: ProgressEvent) => void;
  signal?: AbortSignal;
  clock?: () => Date;
  /** A cell's lease time (renewed every third of it); default LEASE_MS. */
  leaseMs?: number;
  /** The longest pause between looks at cells another process runs; default 2000 ms. */
  maxPollMs?: number;
  /**
   * The attempts' web and judge (prepareEffects, keys checked by prepareBenchmark);
   * default: prepared from the process's environment. Its identity belongs in the plan
   * (PlanOptions.verifier).
   */
  effects?: AttemptEffects;
}

export interface RunResult {
  experimentId: string;
  total: number;
  kept: number;
  /** Attempts made by this run (retries included). */
  attempts: number;
  /** Cells with a verdict now. */
  graded: number;
  /** Cells whose latest try faulted. */
  faults: number;
  /** Every cell has a verdict. */
  complete: boolean;
  cancelled: boolean;
  /** The latest record of every cell that has one, in plan order. */
  records: AttemptRecord[];
  wallClockMs: number;
}

type Pending = PendingCell;

function message(e: unknown): string {
  return isDvergrError(e) || e instanceof Error ? e.message : String(e);
}

/**
 * A lease's holder is known dead when it is a process of this host that no longer runs
 * (kill -9): its cells are taken at once instead of after the lease runs out.
 */
async function holderDead(lease: CellLease): Promise<boolean> {
  return lease.host === hostName() && lease.pid !== Deno.pid && !(await processAlive(lease.pid));
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

function bound(text: string, max = 4000): string {
  return text.length <= max
    ? text
    : text.slice(0, max) + ` … (${text.length - max} more characters)`;
}

/** The world a cell starts from: the shared fixtures overlaid by its case's. */
export function fixturesFor(bundle: Bundle, caseId: string | null): Record<string, string> {
  const kase = caseId === null ? undefined : bundle.cases.find((c) => c.id === caseId);
  return { ...bundle.fixtures, ...(kase?.fixtures ?? {}) };
}

/** The bounded ending of a candidate's work for its record: message, exit status, stderr. */
export function endingOf(outcome: CandidateOutcome): AttemptEnding {
  const ev = outcome.evidence ?? {};
  const code = ev.exitCode;
  const signal = ev.signal;
  return {
    message: outcome.message ? bound(outcome.message, 500) : null,
    exitCode: typeof code === "number" ? code : null,
    signal: typeof signal === "string" ? signal : null,
    stderrTail: stderrTail(typeof ev.stderrTail === "string" ? ev.stderrTail : null),
  };
}

/** The final verdict: the checker's, plus `completed?`; reward 0 for timeout and crash. */
export function finalVerdict(checker: Verdict, status: CandidateOutcome["status"]): Verdict {
  const completed = status === "completed";
  const forcedZero = status === "timeout" || status === "crashed";
  return {
    checks: { ...checker.checks, "completed?": completed },
    reward: forcedZero ? 0 : checker.reward,
  };
}

/** Runs (or resumes) an experiment and returns where every cell stands. */
export async function runExperiment(opts: RunOptions): Promise<RunResult> {
  const clock = opts.clock ?? (() => new Date());
  const parallel = Math.max(1, opts.parallel ?? 4);
  const retries = opts.faultRetries ?? 1;
  const { plan, bundle, state } = opts;
  const started = performance.now();
  const byName = new Map(opts.candidates.map((c) => [c.name, c]));

  await state.putExperiment({
    id: plan.id,
    room: opts.room,
    bundleName: bundle.name,
    bundleId: bundle.id,
    createdAt: clock().toISOString(),
    cells: plan.cells.length,
    definition: plan.definition as unknown as Record<string, unknown>,
  });

  const resume = resumeState(plan, await state.cellRecords(plan.id), retries);
  const { latest, kept, pending } = resume;
  const wasFault = resume.faulted;
  let faults = wasFault.size;
  opts.onEvent?.({
    type: "start",
    experimentId: plan.id,
    total: plan.cells.length,
    kept,
    toRun: pending.length,
  });

  const effects = opts.effects ??
    await prepareEffects(bundle, { env: (k) => Deno.env.get(k) });
  let done = kept;
  let attempts = 0;
  const queue = [...pending];
  const isCancelled = () => opts.signal?.aborted === true;

  // Worlds are removed off the workers' path; the run waits for them before it returns.
  const removals = new Set<Promise<void>>();
  const remove = (world: World) => {
    const p = world.remove().catch(() => {}).finally(() => removals.delete(p));
    removals.add(p);
  };

  const leaseMs = Math.max(50, opts.leaseMs ?? LEASE_MS);
  const maxPollMs = Math.max(10, opts.maxPollMs ?? 2000);
  const holder = { pid: Deno.pid, host: hostName(), owner: crypto.randomUUID() };
  /** Cells whose lease another process holds, to look at again once the queue is empty. */
  const deferred: Pending[] = [];

  /** Takes a record another process wrote for a cell as the cell's result. */
  function adopt(item: Pending, record: AttemptRecord): void {
    latest.set(item.cell.key, record);
    done++;
    if (wasFault.delete(item.cell.key)) faults--;
    opts.onEvent?.({
      type: "attempt",
      record,
      done,
      faults,
      total: plan.cells.length,
      willRetry: false,
    });
  }

  async function worker(): Promise<void> {
    while (!isCancelled()) {
      const item = queue.shift();
      if (!item) return;
      const candidate = byName.get(item.cell.candidate);
      if (!candidate) throw new Error(`No candidate "${item.cell.candidate}" for a planned cell`);
      let take = await state.takeLease(plan.id, item.cell.key, holder, leaseMs);
      if (!take.ok && await holderDead(take.holder)) {
        await state.breakLease(plan.id, item.cell.key, take.holder.owner);
        take = await state.takeLease(plan.id, item.cell.key, holder, leaseMs);
      }
      if (!take.ok) {
        deferred.push(item);
        continue;
      }
      try {
        // Another process may have recorded the cell since this run read it.
        const now = await state.cellRecord(plan.id, item.cell.key);
        if (now && now.tryNo >= item.tryNo) {
          if (keeps(item.cell, now)) {
            adopt(item, now);
            continue;
          }
          item.tryNo = now.tryNo + 1;
        }
        const heartbeat = setInterval(() => {
          state.renewLease(plan.id, item.cell.key, holder.owner, leaseMs).catch(() => {});
        }, Math.floor(leaseMs / 3));
        let record: AttemptRecord | null;
        try {
          record = await attempt(opts, effects, candidate, item, clock, remove);
        } finally {
          clearInterval(heartbeat);
        }
        if (record === null) continue; // cancelled mid-attempt: nothing recorded
        attempts++;
        const written = await state.putAttempt(record);
        if (!written) continue; // another process recorded this cell first
        latest.set(item.cell.key, record);
        const willRetry = record.verdict === null && item.retriesLeft > 0 && !isCancelled() &&
          record.fault?.permanent !== true;
        if (record.verdict) {
          done++;
          if (wasFault.delete(item.cell.key)) faults--;
        } else if (!wasFault.has(item.cell.key)) {
          wasFault.add(item.cell.key);
          faults++;
        }
        opts.onEvent?.({
          type: "attempt",
          record,
          done,
          faults,
          total: plan.cells.length,
          willRetry,
        });
        if (willRetry) {
          queue.push({
            cell: item.cell,
            tryNo: record.tryNo + 1,
            retriesLeft: item.retriesLeft - 1,
          });
        }
      } finally {
        await state.releaseLease(plan.id, item.cell.key, holder.owner).catch(() => {});
      }
    }
  }
  const drain = () => Promise.all(Array.from({ length: Math.min(parallel, queue.length) }, worker));
  try {
    await drain();
    // What is left is held by other processes: wait for their records, take over expired leases.
    let wait = 250;
    let told = -1;
    while ((deferred.length > 0 || queue.length > 0) && !isCancelled()) {
      if (queue.length === 0) {
        if (deferred.length !== told) {
          told = deferred.length;
          opts.onEvent?.({
            type: "waiting",
            cells: deferred.length,
            leaseMs,
            done,
            faults,
            total: plan.cells.length,
          });
        }
        await pause(wait, opts.signal);
        wait = Math.min(wait * 2, maxPollMs);
        for (const item of deferred.splice(0)) {
          const r = await state.cellRecord(plan.id, item.cell.key);
          if (r && keeps(item.cell, r)) {
            adopt(item, r);
            continue;
          }
          const lease = await state.leaseOf(plan.id, item.cell.key);
          const held = lease && lease.owner !== holder.owner && lease.until > Date.now() &&
            !(await holderDead(lease));
          (held ? deferred : queue).push(item);
        }
      }
      if (queue.length > 0) {
        wait = 250;
        told = -1;
        await drain();
      }
    }
  } finally {
    await Promise.all([...removals]);
  }

  // Read back what the store holds (another process may have recorded some cells).
  const stored = new Map<string, AttemptRecord>();
  for (const r of await state.cellRecords(plan.id)) {
    stored.set(cellKey(r.candidate, r.caseId, r.repetition), r);
  }
  const records: AttemptRecord[] = [];
  let graded = 0;
  let faulted = 0;
  for (const cell of plan.cells) {
    const r = stored.get(cell.key);
    if (!r || r.inputHash !== cell.inputHash) continue;
    records.push(r);
    if (r.verdict) graded++;
    else faulted++;
  }
  const cancelled = isCancelled();
  opts.onEvent?.({
    type: "end",
    done: graded,
    faults: faulted,
    total: plan.cells.length,
    cancelled,
  });
  return {
    experimentId: plan.id,
    total: plan.cells.length,
    kept,
    attempts,
    graded,
    faults: faulted,
    complete: graded === plan.cells.length,
    cancelled,
    records,
    wallClockMs: Math.round(performance.now() - started),
  };
}

/** One attempt of a cell; null when the run was cancelled while it ran. */
async function attempt(
  opts: RunOptions,
  effects: AttemptEffects,
  candidate: Candidate,
  item: Pending,
  clock: () => Date,
  remove: (world: World) => void,
): Promise<AttemptRecord | null> {
  const { bundle, plan, cell } = { ...opts, cell: item.cell };
  const def = plan.definition;
  const startedAt = clock().toISOString();
  const t0 = performance.now();
  const base = {
    experimentId: plan.id,
    candidate: cell.candidate,
    caseId: cell.caseId,
    repetition: cell.repetition,
    inputHash: cell.inputHash,
    tryNo: item.tryNo,
    startedAt,
    trust: opts.trust,
  };
  const faultRecord = async (
    fault: AttemptFault,
    outcome: CandidateOutcome | null,
    elapsedMs: number,
    evidence: Record<string, unknown>,
  ): Promise<AttemptRecord> => ({
    ...base,
    elapsedMs,
    status: "fault",
    verdict: null,
    fault: { ...fault, message: bound(fault.message) },
    passed: false,
    usage: outcome?.usage ?? { ...NO_USAGE },
    billedMicros: outcome?.billedMicros ?? 0,
    listMicros: outcome?.listMicros ?? null,
    ...(outcome?.unpriced ? { unpriced: true } : {}),
    isolated: outcome?.isolated ?? false,
    evidenceRef: await putJson(opts.blobs, evidence).catch(() => null),
    ...(outcome ? { ending: endingOf(outcome) } : {}),
  });

  let world: World;
  try {
    world = await createWorld(fixturesFor(bundle, cell.caseId), {
      parent: opts.worldsDir,
      mkdirs: bundle.definition.capture,
    });
  } catch (e) {
    return await faultRecord(
      { source: "host", kind: "world", message: `Cannot create the world: ${message(e)}` },
      null,
      Math.round(performance.now() - t0),
      { format: "dvergr-evidence/1", cell: base },
    );
  }

  try {
    // Built-in candidates never use tools: they get no web (and need no search key).
    const attemptWeb = candidate.identity.kind === "builtin" ? null : effects.openWeb();
    const ctl = new AbortController();
    const cancel = () => ctl.abort();
    opts.signal?.addEventListener("abort", cancel, { once: true });
    const limit = setTimeout(() => ctl.abort(), def.timeoutMs);
    let outcome: CandidateOutcome;
    let hardStop: ReturnType<typeof setTimeout> | undefined;
    try {
      const grace = opts.stopGraceMs ?? 5000;
      outcome = await Promise.race([
        candidate.run({
          task: def.task,
          caseId: cell.caseId,
          repetition: cell.repetition,
          world: world.files,
          worldDir: world.dir,
          reference: bundle.calibration?.reference ?? null,
          timeoutMs: def.timeoutMs,
          budgetMicros: def.budgetMicros,
          profile: bundle.definition.profile,
          writable: bundle.definition.capture,
          web: attemptWeb?.web ?? null,
          signal: ctl.signal,
        }),
        new Promise<CandidateOutcome>((resolve) => {
          hardStop = setTimeout(() =>
            resolve({
              status: "timeout",
              message: `Did not stop within ${def.timeoutMs} ms plus ${grace} ms of grace`,
              usage: { ...NO_USAGE },
              billedMicros: 0,
              listMicros: null,
              isolated: false,
              evidence: {},
            }), def.timeoutMs + grace);
        }),
      ]);
    } catch (e) {
      outcome = {
        status: "fault",
        message: `The candidate failed: ${message(e)}`,
        usage: { ...NO_USAGE },
        billedMicros: 0,
        listMicros: null,
        isolated: false,
        evidence: { error: bound(message(e)) },
      };
    } finally {
      clearTimeout(limit);
      if (hardStop !== undefined) clearTimeout(hardStop);
      opts.signal?.removeEventListener("abort", cancel);
    }
    const elapsedMs = Math.round(performance.now() - t0);
    if (opts.signal?.aborted) return null;

    const evidence: Record<string, unknown> = {
      format: "dvergr-evidence/1",
      cell: base,
      outcome: { status: outcome.status, message: outcome.message ?? null },
      candidate: outcome.evidence,
    };
    const webEvidence = attemptWeb?.recorder.evidence() ?? null;
    const web = webEvidence ? await recordWeb(opts.blobs, webEvidence) : null;
    if (web) evidence.web = web.evidence;
    const webPart = web ? { web: web.summary } : {};
    if (outcome.status === "fault") {
      const f = outcome.fault ?? { source: "candidate", kind: "could-not-run" };
      return await faultRecord(
        {
          source: f.source,
          kind: f.kind,
          message: outcome.message ?? "fault",
          ...(f.permanent ? { permanent: true } : {}),
        },
        outcome,
        elapsedMs,
        evidence,
      );
    }

    let captured: Capture;
    try {
      captured = await world.capture(bundle.definition.capture, opts.captureLimits);
    } catch (e) {
      // What the candidate left could not be read back: that is the candidate's failure,
      // graded (reward 0), never a host fault it could use to drop out of the pass rate.
      const reason = `Cannot read back what the candidate left: ${message(e)}`;
      evidence.captureError = bound(reason);
      return {
        ...base,
        elapsedMs,
        status: outcome.status,
        verdict: {
          checks: { "capture-readable?": false, "completed?": outcome.status === "completed" },
          reward: 0,
        },
        fault: null,
        failure: { kind: "capture", message: bound(reason) },
        ...webPart,
        passed: false,
        usage: outcome.usage,
        billedMicros: outcome.billedMicros,
        listMicros: outcome.listMicros,
        ...(outcome.unpriced ? { unpriced: true } : {}),
        isolated: outcome.isolated,
        evidenceRef: await putJson(opts.blobs, evidence).catch(() => null),
        ending: endingOf(outcome),
      };
    }
    evidence.captured = captured;
    const input = checkerInputFor(bundle, {
      files: captured.files,
      caseId: cell.caseId,
      params: def.params,
      fetched: bundle.definition.fetched ? webEvidence?.fetched ?? {} : {},
    });
    let judged: JudgeOutcome | null = null;
    if (effects.judge) {
      const { judgements: _, ...asked } = input;
      judged = await judgeAttempt(bundle, effects.judge, opts.runner, asked, opts.signal);
      evidence.judge = judged.evidence;
      if (!judged.ok) {
        return {
          ...await faultRecord(
            judged.fault,
            withJudgeCost(outcome, judged.summary),
            elapsedMs,
            evidence,
          ),
          ...webPart,
          ...(judged.summary ? { judge: judged.summary } : {}),
        };
      }
      input.judgements = judged.judgements;
    }
    const run = await opts.runner.check(bundle.checker, input);
    evidence.checker = run.ok ? { ms: run.ms, verdict: run.verdict } : run;
    if (!run.ok) {
      return await faultRecord(
        { source: "checker", kind: run.fault, message: run.message },
        outcome,
        elapsedMs,
        evidence,
      );
    }
    const final = finalVerdict(run.verdict, outcome.status);
    const verdict = {
      ...final,
      checks: { ...final.checks, ...hostChecks(bundle, web?.summary ?? null) },
    };
    const spent = withJudgeCost(outcome, judged?.summary ?? null);
    return {
      ...base,
      elapsedMs,
      status: outcome.status,
      verdict,
      fault: null,
      ...webPart,
      ...(judged?.summary ? { judge: judged.summary } : {}),
      passed: Object.values(verdict.checks).every((v) => v === true),
      usage: outcome.usage,
      billedMicros: spent.billedMicros,
      listMicros: spent.listMicros,
      ...(outcome.unpriced ? { unpriced: true } : {}),
      isolated: outcome.isolated,
      evidenceRef: await putJson(opts.blobs, evidence),
      ending: endingOf(outcome),
    };
  } catch (e) {
    if (opts.signal?.aborted) return null;
    return await faultRecord(
      { source: "host", kind: "host", message: `The host failed: ${message(e)}` },
      null,
      Math.round(performance.now() - t0),
      { format: "dvergr-evidence/1", cell: base, error: bound(message(e)) },
    );
  } finally {
    remove(world);
  }
}

/** The scorecard of a run's records (also stored in the home when the run is complete). */
export async function scoreExperiment(
  state: StateStore,
  plan: ExperimentPlan,
  result: RunResult,
  opts: { trust: TrustTier; baseline?: string },
): Promise<Scorecard> {
  // Every try of the current cells (same inputs), so what retried faults cost is counted.
  const inputOf = new Map(
    result.records.map((r) => [cellKey(r.candidate, r.caseId, r.repetition), r.inputHash]),
  );
  const history = (await state.attemptHistory(plan.id)).filter((r) =>
    inputOf.get(cellKey(r.candidate, r.caseId, r.repetition)) === r.inputHash
  );
  const scorecard = buildScorecard(history, {
    candidates: plan.definition.candidates.map((c) => c.name),
    expectedCells: plan.cells.length,
    baseline: opts.baseline,
    trust: opts.trust,
    bundleId: plan.definition.bundle,
    experimentId: plan.id,
  });
  if (scorecard.complete) await state.putScorecard(plan.id, scorecard);
  return scorecard;
}
