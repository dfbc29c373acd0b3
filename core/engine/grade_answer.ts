/**
 * Grading a candidate's answer so that the candidate cannot turn a wrong answer into another
 * try. A checker fault is retried (in the run and on every rerun), so a fault the answer
 * causes — it makes the checker loop past its time limit, run out of memory, throw or give
 * a bad verdict — would be a way to drop out of the pass rate. Such a fault is tried once
 * more (a loaded machine can make any call slow), then the same checker grades a control
 * answer under the same limits: the calibration's reference (else no answer at all). When
 * the control gets a verdict, the checker works and this answer is what it cannot grade:
 * the candidate's failure. When the control faults too, the checker (or the machine) is
 * broken: a fault, tried again later, never blamed on the candidate.
 */
import type { Bundle } from "../bundle/types.ts";
import type { CheckerFault, CheckerInput } from "../checker.ts";
import { checkerInputFor } from "../bundle/checker_input.ts";

/** Checker faults an answer can cause; `syntax` and `no-check` come from the checker alone. */
const ANSWER_FAULTS: ReadonlySet<CheckerFault> = new Set<CheckerFault>([
  "timeout",
  "memory",
  "threw",
  "invalid-verdict",
  "crashed",
]);

/** A checker call's result: a value, never an exception (CheckerRun, JudgeRequestsRun). */
export type CallRun =
  | { ok: true; ms: number }
  | { ok: false; fault: CheckerFault; message: string; ms: number };

/** What grading an answer came to, with what was tried on the way. */
export type Grading<R extends CallRun> =
  | { kind: "graded"; run: R & { ok: true }; evidence: GradingEvidence<R> | null }
  | { kind: "ungradable"; message: string; evidence: GradingEvidence<R> }
  | { kind: "fault"; run: R & { ok: false }; evidence: GradingEvidence<R> | null };

/** The calls behind a grading that needed more than one. */
export interface GradingEvidence<R> {
  /** The answer's calls, in order. */
  tries: R[];
  /** The control answer's call, when one was made. */
  control?: { answer: "reference" | "no answer"; run: R };
}

/** The control answer gradeAnswer() holds a faulting answer against. */
export interface Control<I> {
  answer: "reference" | "no answer";
  input: I;
}

/** The cause a failure names when the checker could not grade the answer it was given. */
export const UNGRADABLE = "the checker could not grade this answer";

/**
 * Grades `answer` with `call`; an answer-caused fault is tried once more and then held
 * against `control` (see the module doc). The result says whose it is.
 */
export async function gradeAnswer<I, R extends CallRun>(
  call: (input: I) => Promise<R>,
  answer: I,
  controlOf: Control<I> | (() => Control<I>),
): Promise<Grading<R>> {
  const first = await call(answer);
  if (first.ok) return { kind: "graded", run: first as R & { ok: true }, evidence: null };
  if (!ANSWER_FAULTS.has(first.fault)) {
    return { kind: "fault", run: first as R & { ok: false }, evidence: null };
  }
  const again = await call(answer);
  const tries = [first, again];
  if (again.ok) return { kind: "graded", run: again as R & { ok: true }, evidence: { tries } };
  const last = again as R & { ok: false };
  if (!ANSWER_FAULTS.has(last.fault)) return { kind: "fault", run: last, evidence: { tries } };
  // Made only now: most answers are graded at the first call.
  const control = typeof controlOf === "function" ? controlOf() : controlOf;
  const run = await call(control.input);
  const evidence = { tries, control: { answer: control.answer, run } };
  if (!run.ok) return { kind: "fault", run: last, evidence };
  return {
    kind: "ungradable",
    message: `${UNGRADABLE} (${last.fault}): ${last.message}`,
    evidence,
  };
}

/**
 * The control answer of a bundle's checker: the calibration's reference with its case,
 * pages and judgements (what `calibrate` proved the checker on) under this run's params;
 * without a reference, no answer for the cell's case.
 */
export function controlInput(
  bundle: Bundle,
  params: Record<string, unknown>,
  caseId: string | null,
): { answer: "reference" | "no answer"; input: CheckerInput } {
  const cal = bundle.calibration;
  if (cal?.reference) {
    return {
      answer: "reference",
      input: checkerInputFor(bundle, {
        files: cal.reference,
        caseId: cal.case ?? null,
        params,
        fetched: cal.fetched,
        judgements: cal.judgements,
      }),
    };
  }
  return { answer: "no answer", input: checkerInputFor(bundle, { files: {}, caseId, params }) };
}
