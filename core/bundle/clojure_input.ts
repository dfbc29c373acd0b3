/**
 * The input of a Clojure checker (checker.clj) as the earlier system gave it: Clojure
 * data, with gold and params as their EDN (keywords, sets, `#inst`), which the plain
 * form of CheckerInput flattens. Gold and params are read from the bundle's own EDN
 * files, once per bundle. Pure.
 */
import { readEdn } from "../edn/read.ts";
import { isEdnMap, Keyword, mapGet } from "../edn/values.ts";
import type { EdnValue } from "../edn/values.ts";
import { keywordized, type Tagged, toTagged } from "../edn/tagged.ts";
import type { Bundle } from "./types.ts";
import { caseOf } from "./case_of.ts";
import { generatorOf } from "./generator.ts";
import type { CheckerInput, ClojureEdn, GenerateRequest } from "../checker.ts";

interface ClojureParts {
  params: Map<EdnValue, EdnValue>;
  /** Tagged gold by case id ("" for the bundle's gold.edn), computed on first use. */
  gold: Map<string, Tagged>;
}

/** What a checker grades: an answer's files, its case, and what the run adds. */
export interface AnswerFacts {
  files: Record<string, string>;
  caseId?: string | null;
  params?: Record<string, unknown>;
  fetched?: Record<string, string>;
  judgements?: Record<string, string>;
}

const parts = new WeakMap<Bundle, ClojureParts>();

function partsOf(bundle: Bundle): ClojureParts {
  let p = parts.get(bundle);
  if (!p) {
    const wf = readEdn(bundle.files.get("workflow.edn") ?? "{}", { file: "workflow.edn" });
    const params = isEdnMap(wf) ? mapGet(wf, "params") : undefined;
    p = { params: isEdnMap(params) ? params : new Map(), gold: new Map() };
    parts.set(bundle, p);
  }
  return p;
}

function goldOf(bundle: Bundle, caseId: string | null | undefined): Tagged {
  const p = partsOf(bundle);
  const generated = bundle.generated || generatorOf(bundle) !== null
    ? caseOf(bundle, caseId ?? null)
    : undefined;
  if (generated && generated.goldEdn !== undefined) return generated.goldEdn;
  if (generated && generated.gold !== null) {
    // generator.js's gold is JSON: its object keys become keywords, as params' do.
    return toTagged(keywordized(generated.gold) as EdnValue);
  }
  const own = caseId ? tagged(p, bundle, caseId, `cases/${caseId}/gold.edn`) : null;
  // As for checker.js: a case without gold (or with gold nil) gets the bundle's.
  return own !== null ? own : tagged(p, bundle, "", "gold.edn");
}

function tagged(p: ClojureParts, bundle: Bundle, key: string, file: string): Tagged {
  let t = p.gold.get(key);
  if (t === undefined) {
    const text = bundle.files.get(file);
    t = text === undefined ? null : toTagged(readEdn(text, { file }));
    p.gold.set(key, t);
  }
  return t;
}

const k = (name: string): Tagged => ["k", null, name];

/**
 * What a Clojure checker's input keeps that the plain CheckerInput flattens, as tagged
 * JSON: gold is the case's gold.edn when it has one, else the bundle's (nil when
 * neither); params are workflow.edn's :params with the run's merged over them (run wins;
 * its keys become keywords, as the earlier system's did).
 */
export function clojureEdnFor(bundle: Bundle, answer: AnswerFacts): ClojureEdn {
  const params = new Map(partsOf(bundle).params);
  for (const [name, v] of Object.entries(answer.params ?? {})) {
    params.set(Keyword.of(name), keywordized(v) as EdnValue);
  }
  return { params: toTagged(params), gold: goldOf(bundle, answer.caseId) };
}

/**
 * generator.clj's input, `{:seed n :split :train|:test :index n :params {…}}`, as tagged
 * JSON: params as EDN when given (else the plain ones with their keys as keywords).
 */
export function clojureGenerateInput(
  request: Omit<GenerateRequest, "clojure">,
  clojure: GenerateRequest["clojure"],
): Tagged {
  return [
    "m",
    k("seed"),
    request.seed,
    k("split"),
    k(request.split),
    k("index"),
    request.index,
    k("params"),
    clojure?.params ?? toTagged(keywordized(request.params) as EdnValue),
  ];
}

/**
 * The whole input of a Clojure checker, `{:files :params :gold :fetched :judgements}`
 * (without :judgements for `judge-requests`), as tagged JSON: files, fetched pages and
 * judgements from the input as it is now (a run adds judgements after the judge
 * answered), gold and params from its EDN.
 */
export function clojureInput(
  input: Pick<CheckerInput, "files" | "fetched"> & { judgements?: Record<string, string> },
  edn: ClojureEdn,
  withJudgements: boolean,
): Tagged {
  const out: Tagged[] = [
    "m",
    k("files"),
    toTagged(input.files),
    k("params"),
    edn.params,
    k("gold"),
    edn.gold,
    k("fetched"),
    toTagged(input.fetched ?? {}),
  ];
  if (withJudgements) out.push(k("judgements"), toTagged(input.judgements ?? {}));
  return out;
}
