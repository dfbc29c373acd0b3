/**
 * One attempt of a cell: a fresh world from the bundle's fixtures, the candidate run in it
 * under its time limit, the captured answer graded by the checker, and the attempt's record
 * (a verdict, or a fault saying whose). The scheduler (run_experiment.ts) decides which
 * cells run; this decides nothing about other cells.
 */
import type { Bundle } from "../bundle/types.ts";
import { checkerInputFor } from "../bundle/checker_input.ts";
import { caseOf } from "../bundle/case_of.ts";
import {
  type AttemptEffects,
  hostChecks,
  judgeAttempt,
  type JudgeOutcome,
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
  stderrTail,
  type TrustTier,
} from "../bench/records.ts";
import type { ExperimentPlan } from "../bench/experiment.ts";
import type { PendingCell } from "../bench/resume.ts";
import { type BlobStore, putJson } from "../ports/blob_store.ts";
import type { Capture, CaptureLimits, World } from "../ports/world_factory.ts";
import type { Services } from "../ports/services.ts";
import { isDvergrError } from "../errors.ts";
import { isStorageError } from "../storage_error.ts";

/** What an attempt needs from its run. */
export interface AttemptRun {
  /** The adapters it runs on (worlds; the run's leases, timer and effects too). */
  services: Services;
  blobs: BlobStore;
  /** Parent directory of the attempt worlds. */
  worldsDir: string;
  bundle: Bundle;
  plan: ExperimentPlan;
  runner: CheckerRunner;
  trust: TrustTier;
  /** How long past its time limit a candidate may take to stop before the engine moves on. */
  stopGraceMs?: number;
  captureLimits?: Partial<CaptureLimits>;
  signal?: AbortSignal;
}

function message(e: unknown): string {
  return isDvergrError(e) || e instanceof Error ? e.message : String(e);
}

function bound(text: string, max = 4000): string {
  return text.length <= max
    ? text
    : text.slice(0, max) + ` … (${text.length - max} more characters)`;
}

/**
 * What a fault record keeps when its evidence could not be stored: nothing. A file system
 * that is full or read-only is thrown instead: it stops the run (isStorageError()).
 */
function evidenceLost(e: unknown): null {
  if (isStorageError(e)) throw e;
  return null;
}

/** The world a cell starts from: the shared fixtures overlaid by its case's. */
export function fixturesFor(bundle: Bundle, caseId: string | null): Record<string, string> {
  const kase = caseOf(bundle, caseId);
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

/**
 * How long past its time limit and grace the engine waits for a candidate that times itself
 * (its own setup, stop and capture are bounded well within this).
 */
const SELF_TIMED_BACKSTOP_MS = 10 * 60_000;

/**
 * The engine's last word on a candidate that does not return: past its time limit and grace a
 * time-out; for one that times itself, far past its own limits, a fault (a bug of ours).
 */
function stopBackstop(
  candidate: Candidate,
  timeoutMs: number,
  grace: number,
  ctl: AbortController,
  resolve: (o: CandidateOutcome) => void,
): ReturnType<typeof setTimeout> {
  if (candidate.timesItself) {
    const ms = timeoutMs + grace + SELF_TIMED_BACKSTOP_MS;
    return setTimeout(() => {
      ctl.abort();
      resolve(notReturned(ms));
    }, ms);
  }
  return setTimeout(() =>
    resolve({
      status: "timeout",
      message: `Did not stop within ${timeoutMs} ms plus ${grace} ms of grace`,
      usage: { ...NO_USAGE },
      billedMicros: 0,
      listMicros: null,
      isolated: false,
      evidence: {},
    }), timeoutMs + grace);
}

/** A candidate that times itself and did not return: the host's fault, not its failure. */
function notReturned(ms: number): CandidateOutcome {
  return {
    status: "fault",
    fault: { source: "candidate", kind: "no-return" },
    message: `The candidate's run did not return within ${ms} ms (its own limits should ` +
      "have stopped it): a bug of dvergr",
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated: false,
    evidence: {},
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

/** A cell's world: on disk under the run's worlds, or in memory for a built-in candidate. */
async function newWorld(opts: AttemptRun, candidate: Candidate, caseId: string | null) {
  const fixtures = fixturesFor(opts.bundle, caseId);
  const mkdirs = opts.bundle.definition.capture;
  return candidate.identity.kind === "builtin"
    ? opts.services.worlds.memory(fixtures, { mkdirs })
    : await opts.services.worlds.create(fixtures, { parent: opts.worldsDir, mkdirs });
}

/**
 * One attempt of a cell; null when the run was cancelled while it ran. A file system that
 * cannot take the world or the evidence (full, read-only…: isStorageError()) is thrown, not
 * recorded as the cell's fault.
 */
export async function runAttempt(
  opts: AttemptRun,
  effects: AttemptEffects,
  candidate: Candidate,
  item: PendingCell,
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
    evidenceRef: await putJson(opts.blobs, evidence).catch(evidenceLost),
    ...(outcome ? { ending: endingOf(outcome) } : {}),
  });

  let world: World;
  try {
    // A world is written only as far as its candidate can see it: a built-in candidate
    // reaches it only through its file functions, so its world stays in memory.
    world = await newWorld(opts, candidate, cell.caseId);
  } catch (e) {
    if (isStorageError(e)) throw e;
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
    // A candidate that times itself counts from its own start: a timer here would charge it
    // dvergr's setup (and, under load, turn instant crashes into time-outs).
    const limit = candidate.timesItself ? undefined : setTimeout(() => ctl.abort(), def.timeoutMs);
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
          hardStop = stopBackstop(candidate, def.timeoutMs, grace, ctl, resolve);
        }),
      ]);
    } catch (e) {
      if (isStorageError(e)) throw e;
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
      if (limit !== undefined) clearTimeout(limit);
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
      return {
        ...await faultRecord(
          {
            source: f.source,
            kind: f.kind,
            message: outcome.message ?? "fault",
            ...(f.permanent ? { permanent: true } : {}),
          },
          outcome,
          elapsedMs,
          evidence,
        ),
        // What a faulted try did on the web still counts (searches are spent).
        ...webPart,
      };
    }

    let captured: Capture;
    try {
      captured = await world.capture(bundle.definition.capture, opts.captureLimits);
      if (captured.overEntries !== undefined) {
        // Never graded on what happened to fit: the candidate's doing, named.
        throw new Error(
          `it wrote more than ${captured.overEntries.toLocaleString("en-US")} entries under ` +
            bundle.definition.capture.join(", "),
        );
      }
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
        evidenceRef: await putJson(opts.blobs, evidence).catch(evidenceLost),
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
      return {
        ...await faultRecord(
          { source: "checker", kind: run.fault, message: run.message },
          withJudgeCost(outcome, judged?.summary ?? null),
          elapsedMs,
          evidence,
        ),
        ...webPart,
        ...(judged?.summary ? { judge: judged.summary } : {}),
      };
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
    if (isStorageError(e)) throw e;
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
