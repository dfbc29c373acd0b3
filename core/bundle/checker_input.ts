import type { CheckerInput } from "../checker.ts";
import type { Bundle } from "./types.ts";
import { caseOf } from "./case_of.ts";
import { type AnswerFacts, clojureEdnFor } from "./clojure_input.ts";

/**
 * The checker's input for an answer: gold is the case's gold when the case has one,
 * else the bundle's; params are the definition's merged with the run's (run wins). For
 * a checker.clj bundle it also carries gold and params as EDN (`clojure`), which routes
 * the call to the Clojure sandbox.
 */
export function checkerInputFor(bundle: Bundle, answer: AnswerFacts): CheckerInput {
  const kase = answer.caseId ? caseOf(bundle, answer.caseId) : undefined;
  return {
    files: answer.files,
    params: { ...bundle.definition.params, ...answer.params },
    gold: kase && kase.gold !== null ? kase.gold : bundle.gold,
    fetched: answer.fetched ?? {},
    judgements: answer.judgements ?? {},
    ...(bundle.checkerFile === "checker.clj" ? { clojure: clojureEdnFor(bundle, answer) } : {}),
  };
}
