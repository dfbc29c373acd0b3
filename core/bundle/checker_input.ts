import type { CheckerInput } from "../checker.ts";
import type { Bundle } from "./types.ts";

/**
 * The checker's input for an answer: gold is the case's gold when the case has one,
 * else the bundle's; params are the definition's merged with the run's (run wins).
 */
export function checkerInputFor(
  bundle: Bundle,
  answer: {
    files: Record<string, string>;
    caseId?: string | null;
    params?: Record<string, unknown>;
    fetched?: Record<string, string>;
    judgements?: Record<string, string>;
  },
): CheckerInput {
  const kase = answer.caseId ? bundle.cases.find((c) => c.id === answer.caseId) : undefined;
  return {
    files: answer.files,
    params: { ...bundle.definition.params, ...answer.params },
    gold: kase && kase.gold !== null ? kase.gold : bundle.gold,
    fetched: answer.fetched ?? {},
    judgements: answer.judgements ?? {},
  };
}
