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
import type { CheckerInput, CheckerRunner, Verdict } from "../checker.ts";
import type { Candidate, CandidateOutcome } from "../bench/candidate.ts";
import { NO_USAGE } from "../bench/candidate.ts";
import {
  type AttemptEnding,
  type AttemptFault,
  type AttemptRecord,
  type JudgeSummary,
  stderrTail,
  type TrustTier,
} from "../bench/records.ts";
import type { ExperimentPlan } from "../bench/experiment.ts";
import type { PendingCell } from "../bench/resume.ts";
import { type BlobStore, putJson } from "../ports/blob_store.ts";
import type { Capture, CaptureLimits, World } from "../ports/world_factory.ts";
import type { AttemptWeb } from "../ports/web_client.ts";
import type { WebSummary } from "../web/record.ts";
import { controlInput, gradeAnswer } from "./grade_answer.ts";
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
  /** For one that does not time itself: how long from now (default: its limit and grace). */
  afterMs = timeoutMs + grace,
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
    }), afterMs);
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

/** What every record of a cell's try says of itself. */
type RecordBase = Pick<
  AttemptRecord,
  | "experimentId"
  | "candidate"
  | "caseId"
  | "repetition"
  | "inputHash"
  | "tryNo"
  | "startedAt"
  | "trust"
>;

/** One attempt as it runs: its run, its record's identity, where its time started. */
interface Attempt {
  opts: AttemptRun;
  effects: AttemptEffects;
  base: RecordBase;
  t0: number;
  /**
   * Its candidate's run returned, isolated and without a fault: nothing of the attempt reaches
   * its world any more, whose directory may then be kept for a later world (kept_worlds.ts).
   */
  worldFree?: boolean;
}

/** What the candidate's work cost, the judge's calls included. */
function spendOf(outcome: CandidateOutcome, judge: JudgeSummary | null) {
  const spent = withJudgeCost(outcome, judge);
  return {
    usage: outcome.usage,
    billedMicros: spent.billedMicros,
    listMicros: spent.listMicros,
    ...(outcome.unpriced ? { unpriced: true } : {}),
    isolated: outcome.isolated,
  };
}

/** A try without a verdict: the fault says whose it is; a rerun tries the cell again. */
async function faultRecord(
  a: Attempt,
  fault: AttemptFault,
  outcome: CandidateOutcome | null,
  evidence: Record<string, unknown>,
  elapsedMs = Math.round(performance.now() - a.t0),
): Promise<AttemptRecord> {
  return {
    ...a.base,
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
    evidenceRef: await putJson(a.opts.blobs, evidence).catch(evidenceLost),
    ...(outcome ? { ending: endingOf(outcome) } : {}),
  };
}

/** Why a graded try failed before any verdict of the checker: its kind, cause and check. */
interface Failure {
  kind: string;
  message: string;
  /** The check that is false in the verdict, e.g. `capture-readable?`. */
  check: string;
}

/**
 * A try the candidate failed without a verdict of the checker (what it left could not be
 * read back, or the checker could not grade it): graded with reward 0 and its cause named,
 * never a fault it could use to drop out of the pass rate.
 */
async function failedRecord(
  a: Attempt,
  done: Done,
  failure: Failure,
  judge: JudgeSummary | null = null,
): Promise<AttemptRecord> {
  const { outcome, evidence } = done;
  return {
    ...a.base,
    elapsedMs: done.elapsedMs,
    status: outcome.status,
    verdict: {
      checks: { [failure.check]: false, "completed?": outcome.status === "completed" },
      reward: 0,
    },
    fault: null,
    failure: { kind: failure.kind, message: bound(failure.message) },
    ...done.webPart,
    ...(judge ? { judge } : {}),
    passed: false,
    ...spendOf(outcome, judge),
    evidenceRef: await putJson(a.opts.blobs, evidence).catch(evidenceLost),
    ending: endingOf(outcome),
  };
}

/**
 * Runs the candidate in its world under its time limit (or its own, when it times itself)
 * and the engine's backstop; what it throws is its fault (could not run), never ours.
 */
async function runCandidate(
  a: Attempt,
  candidate: Candidate,
  world: World,
  web: AttemptWeb | null,
): Promise<CandidateOutcome> {
  const { bundle, plan } = a.opts;
  const def = plan.definition;
  const ctl = new AbortController();
  const cancel = () => ctl.abort();
  a.opts.signal?.addEventListener("abort", cancel, { once: true });
  const grace = a.opts.stopGraceMs ?? 5000;
  const started = performance.now();
  let hardStop: ReturnType<typeof setTimeout> | undefined;
  let backstopped: (o: CandidateOutcome) => void = () => {};
  // A candidate that times itself counts from its own start: a timer here would charge it
  // dvergr's setup (and, under load, turn instant crashes into time-outs). One that does not
  // has one timer, its limit, whose end arms the backstop for what is left of the grace: most
  // attempts end long before, and a second timer apiece was ~5 ms of this thread per 1,000.
  const limit = candidate.timesItself ? undefined : setTimeout(() => {
    ctl.abort();
    const left = Math.max(0, started + def.timeoutMs + grace - performance.now());
    hardStop ??= stopBackstop(candidate, def.timeoutMs, grace, ctl, backstopped, left);
  }, def.timeoutMs);
  try {
    return await Promise.race([
      candidate.run({
        task: def.task,
        caseId: a.base.caseId,
        repetition: a.base.repetition,
        world: world.files,
        worldDir: world.dir,
        reference: bundle.calibration?.reference ?? null,
        timeoutMs: def.timeoutMs,
        budgetMicros: def.budgetMicros,
        profile: bundle.definition.profile,
        writable: bundle.definition.capture,
        web: web?.web ?? null,
        signal: ctl.signal,
        admitted: () => {
          if (hardStop !== undefined) clearTimeout(hardStop);
          hardStop = stopBackstop(candidate, def.timeoutMs, grace, ctl, backstopped);
        },
      }).then((o) => {
        a.worldFree = o.isolated && o.status !== "fault";
        return o;
      }),
      new Promise<CandidateOutcome>((resolve) => {
        backstopped = resolve;
        if (candidate.timesItself) {
          hardStop = stopBackstop(candidate, def.timeoutMs, grace, ctl, resolve);
        }
      }),
    ]);
  } catch (e) {
    if (isStorageError(e)) throw e;
    return {
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
    a.opts.signal?.removeEventListener("abort", cancel);
  }
}

/** The candidate's work, ended: its outcome, the evidence so far and what it did on the web. */
interface Done {
  outcome: CandidateOutcome;
  elapsedMs: number;
  evidence: Record<string, unknown>;
  web: { summary: WebSummary; evidence: Record<string, unknown> } | null;
  webPart: { web?: WebSummary };
  /** The pages it fetched (given to the checker when the bundle says `:fetched true`). */
  fetched: Record<string, string>;
}

/** The evidence of the candidate's work, its web part stored. */
async function doneWith(
  a: Attempt,
  outcome: CandidateOutcome,
  attemptWeb: AttemptWeb | null,
): Promise<Done> {
  const evidence: Record<string, unknown> = {
    format: "dvergr-evidence/1",
    cell: a.base,
    outcome: { status: outcome.status, message: outcome.message ?? null },
    candidate: outcome.evidence,
  };
  const webEvidence = attemptWeb?.recorder.evidence() ?? null;
  const web = webEvidence ? await recordWeb(a.opts.blobs, webEvidence) : null;
  if (web) evidence.web = web.evidence;
  return {
    outcome,
    elapsedMs: Math.round(performance.now() - a.t0),
    evidence,
    web,
    webPart: web ? { web: web.summary } : {},
    fetched: webEvidence?.fetched ?? {},
  };
}

/** A candidate's own fault (it could not run, its provider failed), with its web spend. */
async function candidateFault(a: Attempt, done: Done): Promise<AttemptRecord> {
  const { outcome } = done;
  const f = outcome.fault ?? { source: "candidate", kind: "could-not-run" };
  const fault: AttemptFault = {
    source: f.source,
    kind: f.kind,
    message: outcome.message ?? "fault",
    ...(f.permanent ? { permanent: true } : {}),
  };
  // What a faulted try did on the web still counts (searches are spent).
  return {
    ...await faultRecord(a, fault, outcome, done.evidence, done.elapsedMs),
    ...done.webPart,
  };
}

/**
 * What the candidate left under the bundle's capture, or the reason it cannot be read back
 * (the candidate's doing: never graded on what happened to fit).
 */
async function captureAnswer(a: Attempt, world: World): Promise<Capture | Failure> {
  const capture = a.opts.bundle.definition.capture;
  try {
    const captured = await world.capture(capture, a.opts.captureLimits);
    if (captured.overEntries === undefined) return captured;
    throw new Error(
      `it wrote more than ${captured.overEntries.toLocaleString("en-US")} entries under ` +
        capture.join(", "),
    );
  } catch (e) {
    if (isStorageError(e)) throw e;
    const reason = `Cannot read back what the candidate left: ${message(e)}`;
    return { kind: "capture", message: reason, check: "capture-readable?" };
  }
}

/** The check false in the verdict of an answer the checker could not grade. */
const CHECKER_GRADED = "checker-graded?";

/**
 * Judges and grades what the candidate left: the judge (when the bundle has one) on the
 * checker's requests, then the checker, each through gradeAnswer() so that a fault the
 * answer causes is the candidate's failure and a broken checker stays a fault.
 */
async function gradeRecord(a: Attempt, done: Done, captured: Capture): Promise<AttemptRecord> {
  const { bundle, plan, runner } = a.opts;
  const def = plan.definition;
  const { outcome, evidence } = done;
  evidence.captured = captured;
  const input = checkerInputFor(bundle, {
    files: captured.files,
    caseId: a.base.caseId,
    params: def.params,
    fetched: bundle.definition.fetched ? done.fetched : {},
  });
  const control = () => controlInput(bundle, def.params, a.base.caseId);
  let judged: JudgeOutcome | null = null;
  if (a.effects.judge) {
    const { judgements: _, ...asked } = input;
    const { answer, input: { judgements: __, ...controlAsked } } = control();
    judged = await judgeAttempt(bundle, a.effects.judge, runner, asked, {
      control: { answer, input: controlAsked },
      signal: a.opts.signal,
    });
    evidence.judge = judged.evidence;
    if (judged.ok === "ungradable") {
      const failure = { kind: "checker", message: judged.message, check: CHECKER_GRADED };
      return await failedRecord(a, done, failure, judged.summary);
    }
    if (!judged.ok) {
      return {
        ...await faultRecord(
          a,
          judged.fault,
          withJudgeCost(outcome, judged.summary),
          evidence,
          done.elapsedMs,
        ),
        ...done.webPart,
        ...(judged.summary ? { judge: judged.summary } : {}),
      };
    }
    input.judgements = judged.judgements;
  }
  const judge = judged?.summary ?? null;
  const grading = await gradeAnswer(
    (i: CheckerInput) => runner.check(bundle.checker, i),
    input,
    control,
  );
  if (grading.kind === "ungradable") {
    evidence.checker = grading.evidence;
    const failure = { kind: "checker", message: grading.message, check: CHECKER_GRADED };
    return await failedRecord(a, done, failure, judge);
  }
  const { run } = grading;
  evidence.checker = run.ok ? { ms: run.ms, verdict: run.verdict } : run;
  if (grading.evidence) evidence.checkerTries = grading.evidence;
  if (!run.ok) {
    return {
      ...await faultRecord(
        a,
        { source: "checker", kind: run.fault, message: run.message },
        withJudgeCost(outcome, judge),
        evidence,
        done.elapsedMs,
      ),
      ...done.webPart,
      ...(judge ? { judge } : {}),
    };
  }
  const final = finalVerdict(run.verdict, outcome.status);
  const verdict = {
    ...final,
    checks: { ...final.checks, ...hostChecks(bundle, done.web?.summary ?? null) },
  };
  return {
    ...a.base,
    elapsedMs: done.elapsedMs,
    status: outcome.status,
    verdict,
    fault: null,
    ...done.webPart,
    ...(judge ? { judge } : {}),
    passed: Object.values(verdict.checks).every((v) => v === true),
    ...spendOf(outcome, judge),
    evidenceRef: await putJson(a.opts.blobs, evidence),
    ending: endingOf(outcome),
  };
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
  remove: (world: World, reusable: boolean) => void,
): Promise<AttemptRecord | null> {
  const { cell } = item;
  const a: Attempt = {
    opts,
    effects,
    t0: performance.now(),
    base: {
      experimentId: opts.plan.id,
      candidate: cell.candidate,
      caseId: cell.caseId,
      repetition: cell.repetition,
      inputHash: cell.inputHash,
      tryNo: item.tryNo,
      startedAt: clock().toISOString(),
      trust: opts.trust,
    },
  };
  let world: World;
  try {
    // A world is written only as far as its candidate can see it: a built-in candidate
    // reaches it only through its file functions, so its world stays in memory.
    world = await newWorld(opts, candidate, cell.caseId);
  } catch (e) {
    if (isStorageError(e)) throw e;
    const fault = {
      source: "host",
      kind: "world",
      message: `Cannot create the world: ${message(e)}`,
    };
    return await faultRecord(a, fault as AttemptFault, null, {
      format: "dvergr-evidence/1",
      cell: a.base,
    });
  }
  try {
    // Built-in candidates never use tools: they get no web (and need no search key).
    const attemptWeb = candidate.identity.kind === "builtin" ? null : effects.openWeb();
    const outcome = await runCandidate(a, candidate, world, attemptWeb);
    if (opts.signal?.aborted) return null;
    const done = await doneWith(a, outcome, attemptWeb);
    if (outcome.status === "fault") return await candidateFault(a, done);
    const captured = await captureAnswer(a, world);
    if ("check" in captured) {
      done.evidence.captureError = bound(captured.message);
      return await failedRecord(a, done, captured);
    }
    return await gradeRecord(a, done, captured);
  } catch (e) {
    if (opts.signal?.aborted) return null;
    if (isStorageError(e)) throw e;
    return await faultRecord(
      a,
      { source: "host", kind: "host", message: `The host failed: ${message(e)}` },
      null,
      { format: "dvergr-evidence/1", cell: a.base, error: bound(message(e)) },
    );
  } finally {
    remove(world, a.worldFree === true);
  }
}
