/**
 * The checker contract: what a bundle's checker.js receives and must return.
 * All values are plain JSON (EDN keywords become strings without the colon).
 */

export interface CheckerInput {
  /** Captured files by absolute world path, e.g. "/out/answer.edn". */
  files: Record<string, string>;
  params: Record<string, unknown>;
  /** The case's gold, else the bundle's; null when neither exists. */
  gold: unknown;
  fetched: Record<string, string>;
  judgements: Record<string, string>;
  /**
   * Present iff the checker is checker.clj: gold and params as their EDN (keywords, sets,
   * `#inst`), which the plain fields flatten. The pool runs such a checker in the Clojure
   * sandbox, on `{:files :params :gold :fetched :judgements}` as the earlier system gave it
   * (core/bundle/clojure_input.ts).
   */
  clojure?: ClojureEdn;
}

/**
 * EDN as JSON that keeps keywords, sets, `#inst` and the rest, each compound value an
 * array tagged by its first element (core/edn/tagged.ts makes and documents it).
 */
export type Tagged = null | boolean | number | string | Tagged[];

/** A Clojure checker's gold and params, as tagged JSON. */
export interface ClojureEdn {
  gold: Tagged;
  params: Tagged;
}

export interface Verdict {
  checks: Record<string, boolean>;
  /** In [0, 1]. */
  reward: number;
}

export type CheckerFault =
  | "timeout"
  | "memory"
  | "threw"
  | "invalid-verdict"
  | "no-check"
  | "syntax"
  | "crashed";

/**
 * A checker run is a value, never an exception: a verdict or a fault with its reason.
 * `logs` holds what the checker wrote with console.* (bounded), when it wrote anything.
 */
export type CheckerRun =
  | { ok: true; verdict: Verdict; ms: number; logs?: string[] }
  | { ok: false; fault: CheckerFault; message: string; ms: number; logs?: string[] };

export interface JudgeRequest {
  id: string;
  prompt: string;
}

export type JudgeRequestsRun =
  | { ok: true; requests: JudgeRequest[]; ms: number; logs?: string[] }
  | { ok: false; fault: CheckerFault; message: string; ms: number; logs?: string[] };

/**
 * What generator.js's `generate` is asked: the world's seed (derived from the benchmark's
 * seed, the split and the index: core/bundle/generator.ts), its split and index, and the
 * workflow's params.
 */
export interface GenerateRequest {
  seed: number;
  split: "train" | "test";
  index: number;
  params: Record<string, unknown>;
  /**
   * For generator.clj: the params as EDN (workflow.edn's :params with the run's over them),
   * which `params` flattens. Not part of what generator.js gets.
   */
  clojure?: { params: Tagged };
}

/** Which generator a generate call runs. */
export interface GenerateOptions extends CheckerCallOptions {
  /** Default generator.js; generator.clj runs in the Clojure sandbox. */
  file?: "generator.js" | "generator.clj";
}

/** One generated world, as generate returned it (shape checked, paths not yet). */
export interface GeneratedWorld {
  /** World path → text, as a case's fixtures ("/docs/a.md"). */
  files: Record<string, string>;
  /** The world's gold, as a case's gold.edn reads (plain JSON). */
  gold: unknown;
  /** generator.clj's gold as EDN (keywords, sets), which a checker.clj gets. */
  goldEdn?: Tagged;
}

export type GeneratorRun =
  | { ok: true; world: GeneratedWorld; ms: number; logs?: string[] }
  | { ok: false; fault: CheckerFault; message: string; ms: number; logs?: string[] };

export interface CheckerCallOptions {
  /** Time limit for this call; default 20,000 ms. */
  timeoutMs?: number;
}

/** Runs checker source in the sandbox. Implementations: a QuickJS worker pool. */
export interface CheckerRunner {
  check(source: string, input: CheckerInput, opts?: CheckerCallOptions): Promise<CheckerRun>;
  judgeRequests(
    source: string,
    input: Omit<CheckerInput, "judgements">,
    opts?: CheckerCallOptions,
  ): Promise<JudgeRequestsRun>;
  /**
   * Runs generator.js's (or generator.clj's) `generate` on a request in the same sandbox (no permissions, the
   * same time and memory limits; Math.random starts from the request's seed).
   */
  generate(
    source: string,
    request: GenerateRequest,
    opts?: GenerateOptions,
  ): Promise<GeneratorRun>;
  /** Terminates the workers; the runner is unusable afterwards. */
  close(): void;
}
