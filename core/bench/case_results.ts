/**
 * Per-case results of an experiment: for every case, each candidate's mean reward and how
 * many of its repetitions passed. Built from the latest try of each cell. Pure.
 */
import type { AttemptRecord } from "./records.ts";
import { foldRecords, HistoryFold } from "./history_fold.ts";

/** One candidate on one case, over its repetitions. */
export interface CaseCell {
  candidate: string;
  /** Mean reward over the graded repetitions; null when none was graded. */
  reward: number | null;
  passes: number;
  /** Repetitions with a verdict. */
  graded: number;
  /** Repetitions that faulted (no verdict). */
  faults: number;
}

export interface CaseResult {
  /** null for a bundle without cases (one environment). */
  caseId: string | null;
  /** One per candidate, in the candidates' order. */
  cells: CaseCell[];
}

/**
 * Every case × candidate, cases in `caseIds` order (null: the one environment), candidates
 * in `candidates` order. `records` are the latest tries (one per cell); a cell with no
 * record counts nothing.
 */
export function caseResults(
  records: readonly AttemptRecord[],
  candidates: readonly string[],
  caseIds: readonly string[] | null,
): CaseResult[] {
  const fold = new HistoryFold(candidates);
  foldRecords(records, fold);
  return caseResultsOfFold(fold, candidates, caseIds);
}

/**
 * caseResults() of a folded history: a candidate's mean reward on a case sums its
 * repetitions in order.
 */
export function caseResultsOfFold(
  fold: HistoryFold,
  candidates: readonly string[],
  caseIds: readonly string[] | null,
): CaseResult[] {
  // Per candidate: case index → its rows, repetitions in order.
  const rowsByCase = candidates.map((name) => {
    const c = fold.candidates.get(name)!;
    const byCase = new Map<number, number[]>();
    for (const i of fold.canonicalRows(name)) {
      const k = c.caseIndex.at(i);
      const list = byCase.get(k);
      if (list) list.push(i);
      else byCase.set(k, [i]);
    }
    return { c, byCase };
  });
  return (caseIds ?? [null]).map((caseId) => {
    const k = fold.indexOfCase(caseId);
    return {
      caseId,
      cells: candidates.map((candidate, n) => {
        const { c, byCase } = rowsByCase[n];
        const rows = k < 0 ? [] : byCase.get(k) ?? [];
        let graded = 0;
        let passes = 0;
        let sum = 0;
        for (const i of rows) {
          const flags = c.flags.at(i);
          if (flags === 0) continue;
          graded++;
          if (flags === 3) passes++;
          sum += c.reward.at(i);
        }
        return {
          candidate,
          reward: graded > 0 ? sum / graded : null,
          passes,
          graded,
          faults: rows.length - graded,
        };
      }),
    };
  });
}
