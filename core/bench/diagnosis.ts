/**
 * Why an experiment came out as it did, from its attempt records: per candidate the outcome
 * of every attempt and each distinct cause of the ones that did not pass, the candidates
 * none of whose attempts ran properly, per-case results and the item analysis of the cases.
 * What the report's "What went wrong", "Per-case results" and "Item analysis" sections,
 * `--json` and MCP show. Pure.
 */
import type { AttemptRecord } from "./records.ts";
import {
  type BrokenCandidate,
  brokenCandidate,
  type FailureCause,
  type OutcomeCounts,
} from "./outcome.ts";
import { type CaseResult, caseResultsOfFold } from "./case_results.ts";
import { foldRecords, HistoryFold } from "./history_fold.ts";
import { itemAnalysis, type ItemStats } from "./item_analysis.ts";

export interface CandidateDiagnosis {
  candidate: string;
  outcomes: OutcomeCounts;
  /** Distinct causes of the attempts that did not pass, most frequent first. */
  causes: FailureCause[];
}

export interface Diagnosis {
  candidates: CandidateDiagnosis[];
  /** Candidates every attempt of which crashed or faulted. */
  broken: BrokenCandidate[];
  /** The cases the experiment ran (null: one environment), and how many the bundle has. */
  cases: { ran: string[] | null; ofBundle: number };
  caseResults: CaseResult[];
  items: ItemStats[];
}

/**
 * The diagnosis of an experiment. `records` may hold every try: only the latest of each
 * cell counts. `cases` is the experiment's case selection (null for one environment) and
 * `bundleCases` how many cases the bundle has.
 */
export function diagnose(
  records: readonly AttemptRecord[],
  opts: DiagnosisOptions,
): Diagnosis {
  const fold = new HistoryFold(opts.candidates);
  foldRecords(records, fold);
  return diagnosisOfFold(fold, opts);
}

export interface DiagnosisOptions {
  candidates: readonly string[];
  cases: readonly string[] | null;
  bundleCases: number;
}

/** diagnose() of a folded history (a HistoryFold of `opts.candidates`). */
export function diagnosisOfFold(fold: HistoryFold, opts: DiagnosisOptions): Diagnosis {
  const results = caseResultsOfFold(fold, opts.candidates, opts.cases);
  const candidates = opts.candidates.map((candidate) => {
    const c = fold.candidates.get(candidate)!;
    return { candidate, outcomes: { ...c.outcomes }, causes: c.causes.causes() };
  });
  return {
    candidates,
    broken: candidates.flatMap((d) => {
      const b = brokenCandidate(d.candidate, d.outcomes, () => d.causes);
      return b ? [b] : [];
    }),
    cases: { ran: opts.cases === null ? null : [...opts.cases], ofBundle: opts.bundleCases },
    caseResults: results,
    items: itemAnalysis(results),
  };
}
