/**
 * Per-case results of an experiment: for every case, each candidate's mean reward and how
 * many of its repetitions passed. Built from the latest try of each cell. Pure.
 */
import type { AttemptRecord } from "./records.ts";

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

function rewardOf(r: AttemptRecord): number {
  const x = r.verdict?.reward;
  return typeof x === "number" && Number.isFinite(x) ? x : 0;
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
  // case → candidate → records (nested maps: no key strings to build per record).
  const byCell = new Map<string | null, Map<string, AttemptRecord[]>>();
  for (const r of records) {
    let row = byCell.get(r.caseId);
    if (!row) byCell.set(r.caseId, row = new Map());
    const list = row.get(r.candidate);
    if (list) list.push(r);
    else row.set(r.candidate, [r]);
  }
  return (caseIds ?? [null]).map((caseId) => ({
    caseId,
    cells: candidates.map((candidate) => {
      const mine = byCell.get(caseId)?.get(candidate) ?? [];
      const graded = mine.filter((r) => r.verdict !== null);
      return {
        candidate,
        reward: graded.length > 0
          ? graded.reduce((s, r) => s + rewardOf(r), 0) / graded.length
          : null,
        passes: graded.filter((r) => r.passed).length,
        graded: graded.length,
        faults: mine.length - graded.length,
      };
    }),
  }));
}
