/**
 * Judge consistency: each judge request of a bundle's calibration (the checker's
 * `judgeRequests` on the reference and on every damaged variant, the first `:max-requests`
 * of each, as an attempt asks them) is asked k times; prompts that list options get them
 * rotated between asks (core/calibrate/judge_options.ts). From the answers: agreement
 * (Fleiss' kappa over requests), the flip rate, the position bias, and whether the
 * calibration's own `:judgements` say what the judge's majority says. The judge is asked
 * through `ask`, so this module reaches no model itself.
 */
import { checkerInputFor } from "../bundle/checker_input.ts";
import type { Bundle } from "../bundle/types.ts";
import type { CheckerRunner } from "../checker.ts";
import { fleissKappa } from "./fleiss_kappa.ts";
import {
  answerWord,
  chosenPosition,
  type ListedOptions,
  listedOptions,
  rotatedPrompt,
  shownOption,
} from "./judge_options.ts";

/** Below this kappa the judge is too noisy to calibrate with. */
export const MIN_KAPPA = 0.6;
/** Asks per request unless told (`--k`). */
export const DEFAULT_ASKS = 3;

/** A judge request of the calibration, with the answer calibration.edn gives it. */
export interface CalibrationJudgeRequest {
  id: string;
  prompt: string;
  /** calibration.edn's answer (the variant's :judgements, else the top level's); null: none. */
  expected: string | null;
  /** The calibration answers that make it: "reference", "damaged <name>". */
  from: string[];
}

/** One ask of the judge: its answer, or why there is none. */
export type AskJudge = (
  prompt: string,
) => Promise<{ ok: true; answer: string } | { ok: false; message: string }>;

export interface JudgedRequest {
  id: string;
  from: string[];
  /** Options the prompt lists (0: none, asked unchanged). */
  options: number;
  /** The k answers as given, in ask order (ask j rotated by j). */
  answers: string[];
  /** What each answer says: the chosen option's text, else the answer's first word. */
  said: string[];
  /** The category more than half the asks gave, else null. */
  majority: string | null;
  expected: string | null;
  /** What calibration.edn's answer says, read like the judge's. */
  expectedSaid: string | null;
  /** The judge gave more than one answer. */
  flipped: boolean;
}

export interface JudgeConsistency {
  ok: boolean;
  k: number;
  requests: JudgedRequest[];
  /** Fleiss' kappa over the requests asked k times; null when undefined (one answer throughout). */
  kappa: number | null;
  minKappa: number;
  /** Kappa under the minimum was accepted (`--accept-judge-noise`). */
  noiseAccepted: boolean;
  /** Share of requests the judge answered in more than one way. */
  flipRate: number | null;
  /**
   * Among asks whose options were moved, the share where the judge kept the position of its
   * first answer instead of its option (chance: 1/options); null without listed options.
   */
  positionBias: number | null;
  problems: string[];
}

/**
 * The judge requests of the calibration: the checker's on the reference and on each
 * damaged variant (with its own :fetched), the first `:max-requests` of each, requests
 * with the same id and prompt once. A checker fault is a problem.
 */
export async function calibrationJudgeRequests(
  bundle: Bundle,
  runner: CheckerRunner,
): Promise<{ requests: CalibrationJudgeRequest[]; problems: string[] }> {
  const cal = bundle.calibration;
  if (!cal?.reference) return { requests: [], problems: [] };
  const max = bundle.definition.judge?.maxRequests ?? 20;
  const answers = [
    { from: "reference", files: cal.reference, fetched: cal.fetched, judgements: cal.judgements },
    ...Object.keys(cal.damaged).sort().map((name) => {
      const d = cal.damaged[name];
      return {
        from: `damaged ${name}`,
        files: d.files,
        fetched: d.fetched ?? cal.fetched,
        judgements: d.judgements ?? cal.judgements,
      };
    }),
  ];
  const runs = await Promise.all(answers.map((a) => {
    const { judgements: _, ...input } = checkerInputFor(bundle, {
      files: a.files,
      caseId: cal.case ?? null,
      fetched: a.fetched,
    });
    return runner.judgeRequests(bundle.checker, input);
  }));
  const byKey = new Map<string, CalibrationJudgeRequest>();
  const problems: string[] = [];
  runs.forEach((run, i) => {
    const a = answers[i];
    if (!run.ok) {
      problems.push(`${a.from}: judgeRequests faulted (${run.fault}): ${run.message}`);
      return;
    }
    for (const r of run.requests.slice(0, max)) {
      const key = JSON.stringify([r.id, r.prompt]);
      const known = byKey.get(key);
      if (known) {
        known.from.push(a.from);
        continue;
      }
      byKey.set(key, {
        id: r.id,
        prompt: r.prompt,
        expected: a.judgements[r.id] ?? null,
        from: [a.from],
      });
    }
  });
  return { requests: [...byKey.values()], problems };
}

/** What one answer says on ask `shift`: the original option's text, else its first word. */
function saidOf(lo: ListedOptions | null, answer: string, shift: number): string {
  if (lo === null) return answerWord(answer);
  const p = chosenPosition(lo, answer, shift);
  return p === null
    ? answerWord(answer)
    : lo.options[shownOption(lo.options.length, p, shift)].text.trim();
}

function majorityOf(said: string[]): string | null {
  const counts = new Map<string, number>();
  for (const s of said) counts.set(s, (counts.get(s) ?? 0) + 1);
  for (const [s, n] of counts) if (n * 2 > said.length) return s;
  return null;
}

/** Asks `limit` at a time, in order; results in request order. */
async function inTurns<T, R>(items: T[], limit: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export interface ConsistencyOptions {
  k?: number;
  acceptNoise?: boolean;
  /** Asks at once; default 4. */
  parallel?: number;
}

/**
 * Asks each request k times and measures the judge (see JudgeConsistency). It is not
 * calibrated when an ask failed, when kappa is under MIN_KAPPA (unless `acceptNoise`), or
 * when calibration.edn answers a request otherwise than the judge's majority.
 */
export async function measureJudgeConsistency(
  requests: CalibrationJudgeRequest[],
  ask: AskJudge,
  opts: ConsistencyOptions = {},
): Promise<JudgeConsistency> {
  const k = opts.k ?? DEFAULT_ASKS;
  const plans = requests.map((r) => ({ r, lo: listedOptions(r.prompt) }));
  const asks = plans.flatMap(({ r, lo }, i) =>
    Array.from({ length: k }, (_, j) => ({ i, j, prompt: lo ? rotatedPrompt(lo, j) : r.prompt }))
  );
  const answered = await inTurns(asks, opts.parallel ?? 4, (a) => ask(a.prompt));
  const problems: string[] = [];
  const judged: JudgedRequest[] = [];
  let kept = 0;
  let moved = 0;
  plans.forEach(({ r, lo }, i) => {
    const mine = answered.slice(i * k, (i + 1) * k);
    const failed = mine.find((a) => !a.ok);
    if (failed && !failed.ok) {
      problems.push(`judge request "${r.id}": the judge failed: ${failed.message}`);
      return;
    }
    const answers = mine.map((a) => (a.ok ? a.answer : ""));
    const said = answers.map((a, j) => saidOf(lo, a, j));
    if (lo) {
      const n = lo.options.length;
      const first = chosenPosition(lo, answers[0], 0);
      answers.forEach((a, j) => {
        const p = chosenPosition(lo, a, j);
        if (j % n === 0 || first === null || p === null) return;
        moved++;
        if (p === first) kept++;
      });
    }
    const majority = majorityOf(said);
    const expectedSaid = r.expected === null ? null : saidOf(lo, r.expected, 0);
    judged.push({
      id: r.id,
      from: r.from,
      options: lo?.options.length ?? 0,
      answers,
      said,
      majority,
      expected: r.expected,
      expectedSaid,
      flipped: new Set(said).size > 1,
    });
    if (expectedSaid !== null && expectedSaid !== majority) {
      problems.push(
        `judge request "${r.id}" (${r.from.join(", ")}): calibration.edn answers ${
          JSON.stringify(r.expected)
        } (${expectedSaid}), the judge's majority ${
          majority === null ? "is split" : `says ${majority}`
        } (${said.join(", ")})`,
      );
    }
  });
  return summarise(judged, k, { kept, moved }, problems, opts.acceptNoise === true);
}

/** Kappa, flip rate and position bias of the judged requests, and the kappa problem. */
function summarise(
  judged: JudgedRequest[],
  k: number,
  position: { kept: number; moved: number },
  problems: string[],
  acceptNoise: boolean,
): JudgeConsistency {
  const categories = [...new Set(judged.flatMap((j) => j.said))].sort();
  const table = judged.map((j) => categories.map((c) => j.said.filter((s) => s === c).length));
  const kappa = fleissKappa(table);
  const flipRate = judged.length === 0
    ? null
    : judged.filter((j) => j.flipped).length / judged.length;
  const positionBias = position.moved === 0 ? null : position.kept / position.moved;
  const noisy = kappa !== null && kappa < MIN_KAPPA;
  if (judged.length === 0 && problems.length === 0) {
    problems.push("the calibration makes no judge requests: nothing to measure");
  }
  if (noisy && !acceptNoise) {
    problems.push(
      `judge agreement kappa ${kappa.toFixed(2)} is under ${MIN_KAPPA}: asked ${k} times, ` +
        `it answered ${
          judged.filter((j) => j.flipped).length
        } of ${judged.length} requests in more than one way`,
    );
  }
  return {
    ok: problems.length === 0,
    k,
    requests: judged,
    kappa,
    minKappa: MIN_KAPPA,
    noiseAccepted: noisy && acceptNoise,
    flipRate,
    positionBias,
    problems,
  };
}

/**
 * The judge consistency of a bundle's calibration: its judge requests
 * (calibrationJudgeRequests) asked k times each through `ask` (measureJudgeConsistency);
 * a checker fault in judgeRequests is a problem of the result.
 */
export async function measureCalibrationJudge(
  bundle: Bundle,
  runner: CheckerRunner,
  ask: AskJudge,
  opts: ConsistencyOptions = {},
): Promise<JudgeConsistency> {
  const { requests, problems } = await calibrationJudgeRequests(bundle, runner);
  const m = await measureJudgeConsistency(requests, ask, opts);
  if (problems.length === 0) return m;
  const all = [...problems, ...m.problems.filter((p) => !p.startsWith("the calibration makes no"))];
  return { ...m, ok: false, problems: all };
}
