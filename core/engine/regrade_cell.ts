/**
 * One cell of a re-grade (`dvergr regrade`): the original experiment's attempt of the same
 * cell, its kept evidence (captured files, fetched pages, judge answers) graded by the
 * changed bundle's checker. No world is made and no candidate runs: the record keeps the
 * original attempt's status, usage, cost and times, and says where it came from
 * (`regradedFrom`). Judge answers of the original are reused for the same request to the
 * same judge; only new requests are asked, through the judge port. An attempt whose
 * evidence is gone, which faulted before it left any, or which never ran is recorded as a
 * fault that no retry can change (`permanent`), never graded on what it might have left.
 */
import { checkerInputFor } from "../bundle/checker_input.ts";
import type { CheckerInput } from "../checker.ts";
import type { AttemptFault, AttemptRecord, RegradeMark } from "../bench/records.ts";
import { type CandidateStatus, NO_USAGE } from "../bench/candidate.ts";
import { canonicalJson, type ExperimentPlan } from "../bench/experiment.ts";
import { type BlobStore, getJson, putJson } from "../ports/blob_store.ts";
import type { Judge } from "../ports/judge.ts";
import type { StateStore } from "../ports/state_store.ts";
import type { Capture } from "../ports/world_factory.ts";
import { hostChecks, judgeAttempt } from "./attempt_effects.ts";
import { finalVerdict } from "./attempt.ts";
import { controlInput, gradeAnswer } from "./grade_answer.ts";
import type { CellAttempt } from "./run_experiment.ts";

/** The experiment graded again, as a re-grade's cells read it. */
export interface RegradeSource {
  plan: ExperimentPlan;
  state: StateStore;
  /** The original's judge identity (its definition's `verifier.judge`), or null. */
  judge: Record<string, unknown> | null;
}

/** Why a cell of a re-grade has no new verdict (the fault kind its record carries). */
export const NOT_REGRADED = {
  evidenceGone: "evidence-gone",
  originalFault: "original-fault",
  noAttempt: "no-attempt",
} as const;

/** The parts of an attempt's evidence a re-grade reads. */
interface KeptEvidence {
  captured?: Capture;
  web?: { pagesRef?: string | null };
  judge?: { requests?: { id: string; prompt: string }[]; answers?: Record<string, string> };
  outcome?: { status?: CandidateStatus };
  [k: string]: unknown;
}

/** A judge identity without what does not change an answer (how many requests are asked). */
function judgeKey(identity: Record<string, unknown> | null | undefined): string | null {
  if (!identity) return null;
  const { maxRequests: _, ...rest } = identity;
  return canonicalJson(rest);
}

/**
 * The judge a re-graded cell asks: the original's answer when it asked the same judge the
 * same prompt, else the judge itself (its key checked before the first such ask).
 */
function reusingJudge(judge: Judge, kept: Map<string, string>, mark: RegradeMark): Judge {
  let checked = false;
  return {
    identity: judge.identity,
    preflight: () => judge.preflight(),
    async ask(prompt, signal, shape) {
      const answer = kept.get(prompt);
      if (answer !== undefined) {
        mark.judgeReused++;
        return { ok: true, answer, usage: { ...NO_USAGE }, billedMicros: 0, listMicros: 0 };
      }
      if (!checked) {
        judge.preflight();
        checked = true;
      }
      const a = await judge.ask(prompt, signal, shape);
      mark.judgeAsked++;
      mark.judgeBilledMicros += a.billedMicros;
      return a;
    },
  };
}

/** The original's judge answers by prompt, when its judge is the one grading now. */
function keptAnswers(
  evidence: KeptEvidence,
  source: RegradeSource,
  now: Record<string, unknown> | null,
): Map<string, string> {
  const kept = new Map<string, string>();
  const same = judgeKey(source.judge) !== null && judgeKey(source.judge) === judgeKey(now);
  if (!same) return kept;
  const answers = evidence.judge?.answers ?? {};
  for (const r of evidence.judge?.requests ?? []) {
    if (typeof answers[r.id] === "string") kept.set(r.prompt, answers[r.id]);
  }
  return kept;
}

type Base = Pick<
  AttemptRecord,
  "experimentId" | "candidate" | "caseId" | "repetition" | "inputHash" | "tryNo" | "trust"
>;

/** The original attempt's spend, status and times, which a re-grade keeps. */
function keptParts(original: AttemptRecord) {
  return {
    startedAt: original.startedAt,
    elapsedMs: original.elapsedMs,
    status: original.status,
    usage: original.usage,
    billedMicros: original.billedMicros,
    listMicros: original.listMicros,
    ...(original.unpriced ? { unpriced: true } : {}),
    isolated: original.isolated,
    ...(original.web ? { web: original.web } : {}),
    ...(original.judge ? { judge: original.judge } : {}),
    ...(original.ending ? { ending: original.ending } : {}),
  };
}

/** A cell without a new verdict: a fault no retry changes, with the original's spend. */
function notRegraded(
  base: Base,
  original: AttemptRecord | null,
  kind: string,
  message: string,
  mark: RegradeMark | null,
  clock: () => Date,
): AttemptRecord {
  const fault: AttemptFault = { source: "host", kind, message, permanent: true };
  return {
    ...base,
    startedAt: clock().toISOString(),
    elapsedMs: 0,
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated: false,
    ...(original ? keptParts(original) : {}),
    status: "fault",
    verdict: null,
    fault,
    passed: false,
    evidenceRef: null,
    ...(mark ? { regradedFrom: mark } : {}),
  };
}

/** The pages the attempt fetched, from its evidence; null when their blob is gone. */
async function fetchedPages(
  blobs: BlobStore,
  evidence: KeptEvidence,
): Promise<Record<string, string> | null> {
  const ref = evidence.web?.pagesRef;
  if (!ref) return {};
  const pages = await getJson<{ fetched?: Record<string, string> }>(blobs, ref);
  return pages === null ? null : pages.fetched ?? {};
}

/**
 * The cell attempt of a re-grade of `source` (run_experiment.ts's `attempt` option): each
 * leased cell graded from the original's kept evidence.
 */
export function regradeAttempt(source: RegradeSource): CellAttempt {
  return async (run, effects, item, clock) => {
    const { cell } = item;
    const base: Base = {
      experimentId: run.plan.id,
      candidate: cell.candidate,
      caseId: cell.caseId,
      repetition: cell.repetition,
      inputHash: cell.inputHash,
      tryNo: item.tryNo,
      trust: run.trust,
    };
    const from = source.plan.id;
    const [original] = await source.state.cellRecordsOf(from, [cell.key]);
    const i = source.plan.cells.indexOf(cell.candidate, cell.caseId, cell.repetition);
    if (!original || i < 0 || original.inputHash !== source.plan.cells.inputHashAt(i)) {
      const message = `Not re-graded: experiment ${from} has no attempt of this cell ` +
        "(it never ran, or was not needed)";
      return notRegraded(base, null, NOT_REGRADED.noAttempt, message, null, clock);
    }
    const mark: RegradeMark = {
      experimentId: from,
      tryNo: original.tryNo,
      judgeReused: 0,
      judgeAsked: 0,
      judgeBilledMicros: 0,
    };
    const gone = (what: string) =>
      notRegraded(
        base,
        original,
        NOT_REGRADED.evidenceGone,
        `Not re-graded: the original attempt's ${what} is gone from the home`,
        mark,
        clock,
      );
    const evidence = original.evidenceRef === null
      ? null
      : await getJson<KeptEvidence>(run.blobs, original.evidenceRef);
    if (evidence === null) {
      return original.verdict === null && original.evidenceRef === null
        ? notRegraded(base, original, NOT_REGRADED.originalFault, faultText(original), mark, clock)
        : gone(`evidence (blob ${original.evidenceRef ?? "none"})`);
    }
    if (evidence.captured === undefined) {
      if (original.verdict === null) {
        const text = faultText(original);
        return notRegraded(base, original, NOT_REGRADED.originalFault, text, mark, clock);
      }
      // What it left could not be read back: its failure under any checker.
      if (original.failure?.kind === "capture") {
        return { ...original, ...base, regradedFrom: mark };
      }
      return gone("captured files");
    }
    const fetched = run.bundle.definition.fetched ? await fetchedPages(run.blobs, evidence) : {};
    if (fetched === null) return gone(`fetched pages (blob ${evidence.web?.pagesRef})`);
    return await gradeKept(run, effects, { base, original, evidence, fetched, mark, source });
  };
}

function faultText(original: AttemptRecord): string {
  return `Not re-graded: the original attempt faulted before it left an answer: ${
    original.fault?.message ?? "no verdict"
  }`;
}

interface Kept {
  base: Base;
  original: AttemptRecord;
  evidence: KeptEvidence;
  fetched: Record<string, string>;
  mark: RegradeMark;
  source: RegradeSource;
}

/**
 * Grades the kept answer as an attempt's own grading does (attempt.ts): the judge on the
 * checker's requests, then the checker through gradeAnswer(), an answer it cannot grade
 * the candidate's failure and a broken checker a fault (tried again).
 */
async function gradeKept(
  run: Parameters<CellAttempt>[0],
  effects: Parameters<CellAttempt>[1],
  k: Kept,
): Promise<AttemptRecord> {
  const { bundle, plan, runner } = run;
  const { base, original, evidence, mark } = k;
  const { judge: _j, checker: _c, checkerTries: _t, ...rest } = evidence;
  const out: Record<string, unknown> = {
    ...rest,
    cell: base,
    regradedFrom: { experimentId: k.source.plan.id, evidenceRef: original.evidenceRef },
  };
  const input = checkerInputFor(bundle, {
    files: evidence.captured!.files,
    caseId: base.caseId,
    params: plan.definition.params,
    fetched: k.fetched,
  });
  const control = controlInput(bundle, plan.definition.params, base.caseId);
  // A try whose checker faulted is recorded as a fault; how the candidate's work ended is
  // in its evidence.
  const status: CandidateStatus = original.status !== "fault"
    ? original.status
    : evidence.outcome?.status ?? "completed";
  const record = (fields: Partial<AttemptRecord>) => ({
    ...base,
    ...keptParts(original),
    status,
    fault: null,
    passed: false,
    verdict: null,
    ...fields,
    regradedFrom: mark,
  } as AttemptRecord);
  if (effects.judge) {
    const kept = keptAnswers(evidence, k.source, effects.identity?.judge as never);
    const judge = reusingJudge(effects.judge, kept, mark);
    const { judgements: _, ...asked } = input;
    const { judgements: __, ...controlAsked } = control.input;
    const judged = await judgeAttempt(bundle, judge, runner, asked, {
      control: { answer: control.answer, input: controlAsked },
      signal: run.signal,
    });
    out.judge = judged.evidence;
    if (judged.ok === "ungradable") {
      return record(failedFields(status, judged.message, await putJson(run.blobs, out)));
    }
    if (!judged.ok) {
      const evidenceRef = await putJson(run.blobs, out);
      return record({ status: "fault", fault: judged.fault, evidenceRef });
    }
    input.judgements = judged.judgements;
  }
  const grading = await gradeAnswer(
    (i: CheckerInput) => runner.check(bundle.checker, i),
    input,
    control,
  );
  if (grading.kind === "ungradable") {
    out.checker = grading.evidence;
    return record(failedFields(status, grading.message, await putJson(run.blobs, out)));
  }
  const { run: checked } = grading;
  out.checker = checked.ok ? { ms: checked.ms, verdict: checked.verdict } : checked;
  if (grading.evidence) out.checkerTries = grading.evidence;
  const evidenceRef = await putJson(run.blobs, out);
  if (!checked.ok) {
    const fault = { source: "checker" as const, kind: checked.fault, message: checked.message };
    return record({ status: "fault", fault, evidenceRef });
  }
  const final = finalVerdict(checked.verdict, status);
  const verdict = {
    ...final,
    checks: { ...final.checks, ...hostChecks(bundle, original.web ?? null) },
  };
  const passed = Object.values(verdict.checks).every((v) => v === true);
  return record({ verdict, passed, evidenceRef });
}

/** An answer the checker could not grade: the candidate's failure, reward 0. */
function failedFields(
  status: CandidateStatus,
  message: string,
  evidenceRef: string,
): Partial<AttemptRecord> {
  return {
    verdict: {
      checks: { "checker-graded?": false, "completed?": status === "completed" },
      reward: 0,
    },
    failure: { kind: "checker", message: message.slice(0, 4000) },
    evidenceRef,
  };
}
