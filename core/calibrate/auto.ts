/**
 * Automatic calibration: the bundle's checker grades every automatic mutation of the
 * calibration reference (core/calibrate/mutations.ts). The margin is the reference's
 * reward minus the highest reward of a damaging mutation; a brittle mutation is an
 * invariance that moved the reward. It holds when the margin is positive and at least
 * the minimum, no invariance is brittle and the checker faulted on no mutation.
 */
import { checkerInputFor } from "../bundle/checker_input.ts";
import type { Bundle } from "../bundle/types.ts";
import type { CheckerRun, CheckerRunner } from "../checker.ts";
import { type MutationKind, type PlannedMutation, referenceMutations } from "./mutations.ts";

/** The default minimum margin (`--min-margin`, MCP `min_margin`). */
export const DEFAULT_MIN_MARGIN = 0.2;

/** Rewards closer than this are equal: sums of shares in another order differ in the last bits. */
const REWARD_EPSILON = 1e-9;

/** One graded mutation (or why it does not apply). */
export interface MutationResult {
  name: string;
  kind: MutationKind;
  description: string;
  /** Why it does not apply; absent when it was graded. */
  notApplicable?: string;
  run?: CheckerRun;
  /** The case whose gold graded it (another case for "other-case"). */
  caseId?: string | null;
  /** Damaging: it scored below the reference. Invariance: its reward equals the reference's. */
  ok?: boolean;
}

export interface AutoCalibration {
  ok: boolean;
  minMargin: number;
  /** The reference's reward; null when it has none (no reference, or the checker faulted). */
  referenceReward: number | null;
  /** Reference reward minus the highest damaging reward; null without both. */
  margin: number | null;
  /** The damaging mutation with the highest reward (the one the margin is measured to). */
  closest: string | null;
  /** Invariance mutations that moved the reward. */
  brittle: string[];
  mutations: MutationResult[];
  problems: string[];
}

export interface AutoOptions {
  minMargin?: number;
  timeoutMs?: number;
}

/** Grades every applicable mutation of the reference (in parallel, as the runner allows). */
export async function gradeMutations(
  bundle: Bundle,
  runner: CheckerRunner,
  opts: AutoOptions = {},
): Promise<MutationResult[]> {
  const cal = bundle.calibration;
  const planned = referenceMutations(bundle);
  return await Promise.all(planned.map(async (m: PlannedMutation): Promise<MutationResult> => {
    const head = { name: m.name, kind: m.kind, description: m.description };
    if (!m.applies) return { ...head, notApplicable: m.reason };
    const run = await runner.check(
      bundle.checker,
      checkerInputFor(bundle, {
        files: m.files,
        caseId: m.caseId,
        fetched: cal?.fetched,
        judgements: cal?.judgements,
      }),
      { timeoutMs: opts.timeoutMs },
    );
    return { ...head, run, caseId: m.caseId };
  }));
}

function fmt(x: number): string {
  return x.toFixed(3);
}

/** The reward of a graded mutation, or null (not applicable, or the checker faulted). */
function rewardOf(m: MutationResult): number | null {
  return m.run?.ok ? m.run.verdict.reward : null;
}

/**
 * Judges graded mutations against the reference's run: marks each, computes the margin
 * and the brittle mutations, and names every problem (but a reference without a reward,
 * which makes it fail with nothing more to say).
 */
export function judgeMutations(
  reference: CheckerRun | null,
  graded: MutationResult[],
  minMargin = DEFAULT_MIN_MARGIN,
): AutoCalibration {
  const problems: string[] = [];
  const referenceReward = reference?.ok ? reference.verdict.reward : null;
  const mutations = graded.map((m): MutationResult => {
    if (!m.run || !m.run.ok || referenceReward === null) return m;
    const r = m.run.verdict.reward;
    const ok = m.kind === "damaging"
      ? r < referenceReward - REWARD_EPSILON
      : Math.abs(r - referenceReward) <= REWARD_EPSILON;
    return { ...m, ok };
  });
  for (const m of mutations) {
    if (m.run && !m.run.ok) {
      problems.push(
        `mutation ${m.name}: the checker faulted (${m.run.fault}): ${m.run.message}`,
      );
    }
  }
  // Without a reward of the reference there is nothing to compare with; calibrate() names
  // the reference's fault.
  if (referenceReward === null) {
    return {
      ok: false,
      minMargin,
      referenceReward,
      margin: null,
      closest: null,
      brittle: [],
      mutations,
      problems,
    };
  }
  let closest: MutationResult | null = null;
  for (const m of mutations) {
    const r = rewardOf(m);
    if (m.kind === "damaging" && r !== null && (closest === null || r > rewardOf(closest)!)) {
      closest = m;
    }
  }
  const top = closest ? rewardOf(closest) : null;
  const margin = top === null ? null : referenceReward - top;
  if (closest === null && !mutations.some((m) => m.kind === "damaging" && m.run)) {
    problems.push(
      "no damaging mutation applies to the reference: nothing shows the checker notices damage",
    );
  }
  if (margin !== null && closest) {
    const short = margin <= REWARD_EPSILON || margin < minMargin - REWARD_EPSILON;
    if (short) {
      problems.push(
        `margin ${fmt(margin)} is under the minimum ${
          fmt(minMargin)
        }: ${closest.name} (${closest.description}) still earns ${fmt(top!)}, the reference ${
          fmt(referenceReward)
        }`,
      );
    }
  }
  const brittle = mutations.filter((m) => m.kind === "invariance" && m.ok === false);
  for (const m of brittle) {
    const r = rewardOf(m)!;
    problems.push(
      `brittle mutation ${m.name} (${m.description}): the reward moved from ${
        fmt(referenceReward)
      } to ${fmt(r)}`,
    );
  }
  return {
    ok: problems.length === 0,
    minMargin,
    referenceReward,
    margin,
    closest: closest?.name ?? null,
    brittle: brittle.map((m) => m.name),
    mutations,
    problems,
  };
}
