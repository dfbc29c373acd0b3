/**
 * Why an experiment came out as it did, from its attempt records: per candidate the outcome
 * of every attempt and each distinct cause of the ones that did not pass, the candidates
 * none of whose attempts ran properly, per-case results and the item analysis of the cases.
 * What the report's "What went wrong", "Per-case results" and "Item analysis" sections,
 * `--json` and MCP show. Pure.
 */
import type { AttemptRecord } from "./records.ts";
import { latestTries } from "./records.ts";
import {
  type BrokenCandidate,
  brokenCandidates,
  countOutcomes,
  type FailureCause,
  failureCauses,
  type OutcomeCounts,
} from "./outcome.ts";
import { type CaseResult, caseResults } from "./case_results.ts";
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

function canonicalOrder(a: AttemptRecord, b: AttemptRecord): number {
  const x = a.caseId ?? "";
  const y = b.caseId ?? "";
  return x < y ? -1 : x > y ? 1 : a.repetition - b.repetition;
}

/**
 * The diagnosis of an experiment. `records` may hold every try: only the latest of each
 * cell counts. `cases` is the experiment's case selection (null for one environment) and
 * `bundleCases` how many cases the bundle has.
 */
export function diagnose(
  records: readonly AttemptRecord[],
  opts: { candidates: readonly string[]; cases: readonly string[] | null; bundleCases: number },
): Diagnosis {
  const latest = latestTries(records);
  const byCandidate = new Map<string, AttemptRecord[]>(opts.candidates.map((c) => [c, []]));
  for (const r of latest) byCandidate.get(r.candidate)?.push(r);
  for (const list of byCandidate.values()) list.sort(canonicalOrder);
  const results = caseResults(latest, opts.candidates, opts.cases);
  return {
    candidates: opts.candidates.map((candidate) => {
      const mine = byCandidate.get(candidate)!;
      return { candidate, outcomes: countOutcomes(mine), causes: failureCauses(mine) };
    }),
    broken: brokenCandidates(byCandidate),
    cases: { ran: opts.cases === null ? null : [...opts.cases], ofBundle: opts.bundleCases },
    caseResults: results,
    items: itemAnalysis(results),
  };
}
