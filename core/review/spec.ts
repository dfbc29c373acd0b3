/**
 * The `:review` map of workflow.edn, read and checked:
 *
 * ```edn
 * :review {:checks [[:diff/only-paths ["wiki/"]] [:diff/max-files 40] :checker]
 *          :reviewer {:model "claude-sonnet-4-5" :instructions "…" :max-dollars 0.2}
 *          :on-pass :merge          ; or :propose
 *          :on-fail :escalate       ; or :discard
 *          :spot-check {:rate 0.1 :seed 7}}
 * ```
 *
 * `:checker` needs the checker's reward on the world (without gold) to be 1; `[:checker 0.8]`
 * sets the threshold. The check that the fork does not conflict with the room's head is
 * always made. Pure.
 */

export type ReviewCheckSpec =
  | { kind: "only-paths"; paths: string[] }
  | { kind: "max-files"; max: number }
  | { kind: "checker"; threshold: number };

export interface ReviewerSpec {
  model: string;
  instructions: string;
  /** The most one review may spend on the model, in micro-dollars (default 0.20 $). */
  budgetMicros: number;
}

export interface ReviewSpec {
  checks: ReviewCheckSpec[];
  reviewer: ReviewerSpec | null;
  onPass: "merge" | "propose";
  onFail: "escalate" | "discard";
  spotCheck: { rate: number; seed: number } | null;
}

/** A problem of a `:review` map: the field (`:review :checks 1`) and what is wrong. */
export interface ReviewProblem {
  field: string;
  message: string;
}

const KEYS = ["checks", "reviewer", "on-pass", "on-fail", "spot-check"];

/** The check's name as a person reads it in a record (`:diff/max-files 40`). */
export function checkName(c: ReviewCheckSpec): string {
  if (c.kind === "only-paths") return `:diff/only-paths ${JSON.stringify(c.paths)}`;
  if (c.kind === "max-files") return `:diff/max-files ${c.max}`;
  return `:checker ${c.threshold}`;
}

function readCheck(raw: unknown, at: string, problems: ReviewProblem[]): ReviewCheckSpec | null {
  const [name, arg, ...more] = Array.isArray(raw) ? raw : [raw];
  const bad = (message: string) => (problems.push({ field: at, message }), null);
  if (more.length > 0) return bad("a check is a keyword or [keyword argument]");
  if (name === "checker") {
    const t = arg ?? 1;
    if (typeof t !== "number" || !(t >= 0 && t <= 1)) {
      return bad("the checker's threshold is a reward from 0 to 1, e.g. [:checker 0.8]");
    }
    return { kind: "checker", threshold: t };
  }
  if (name === "diff/only-paths") {
    const ok = Array.isArray(arg) && arg.length > 0 &&
      arg.every((p) => typeof p === "string" && /^[^/\\]/.test(p) && !p.split("/").includes(".."));
    if (!ok) return bad('expected [:diff/only-paths ["wiki/" …]]: relative room paths');
    return { kind: "only-paths", paths: arg as string[] };
  }
  if (name === "diff/max-files") {
    if (!Number.isInteger(arg) || (arg as number) < 1) {
      return bad("expected [:diff/max-files N] with N a whole number of files, at least 1");
    }
    return { kind: "max-files", max: arg as number };
  }
  return bad(
    `unknown check ${JSON.stringify(name)}: the checks are :checker, [:diff/only-paths [...]] ` +
      "and [:diff/max-files N]",
  );
}

function readReviewer(raw: unknown, problems: ReviewProblem[]): ReviewerSpec | null {
  if (raw === undefined || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    problems.push({ field: ":review :reviewer", message: "expected {:model … :instructions …}" });
    return null;
  }
  const extra = Object.keys(r).filter((k) => !["model", "instructions", "max-dollars"].includes(k));
  if (extra.length > 0) {
    problems.push({
      field: ":review :reviewer",
      message: `unknown key ${extra.map((k) => ":" + k).join(", ")} (known: :model, ` +
        ":instructions, :max-dollars)",
    });
  }
  if (typeof r.model !== "string" || r.model === "") {
    problems.push({ field: ":review :reviewer :model", message: "expected a model id (text)" });
  }
  if (typeof r.instructions !== "string" || r.instructions.trim() === "") {
    problems.push({
      field: ":review :reviewer :instructions",
      message: "expected the reviewer's instructions (text)",
    });
  }
  const dollars = r["max-dollars"] ?? 0.2;
  if (typeof dollars !== "number" || !(dollars > 0 && dollars <= 10)) {
    problems.push({
      field: ":review :reviewer :max-dollars",
      message: "expected a budget in dollars, more than 0 and at most 10",
    });
  }
  return {
    model: String(r.model ?? ""),
    instructions: String(r.instructions ?? ""),
    budgetMicros: Math.round(Number(dollars) * 1_000_000),
  };
}

function oneOf<T extends string>(
  raw: unknown,
  field: string,
  options: readonly T[],
  fallback: T,
  problems: ReviewProblem[],
): T {
  if (raw === undefined) return fallback;
  if (typeof raw === "string" && (options as readonly string[]).includes(raw)) return raw as T;
  problems.push({
    field: `:review :${field}`,
    message: `expected ${options.map((o) => ":" + o).join(" or ")}, found ${JSON.stringify(raw)}`,
  });
  return fallback;
}

function readSpotCheck(raw: unknown, problems: ReviewProblem[]): ReviewSpec["spotCheck"] {
  if (raw === undefined || raw === null) return null;
  const r = (raw ?? {}) as Record<string, unknown>;
  const rate = r.rate, seed = r.seed ?? 0;
  if (typeof rate !== "number" || !(rate >= 0 && rate <= 1)) {
    problems.push({ field: ":review :spot-check :rate", message: "expected a rate from 0 to 1" });
  }
  if (!Number.isInteger(seed)) {
    problems.push({ field: ":review :spot-check :seed", message: "expected a whole number" });
  }
  return { rate: Number(rate), seed: Number(seed) };
}

/** Reads a `:review` map (plain values, keywords as names): the spec and every problem. */
export function readReviewSpec(
  review: Record<string, unknown>,
): { spec: ReviewSpec; problems: ReviewProblem[] } {
  const problems: ReviewProblem[] = [];
  for (const k of Object.keys(review)) {
    if (!KEYS.includes(k)) {
      problems.push({
        field: `:review :${k}`,
        message: `unknown key (known: ${KEYS.map((x) => ":" + x).join(", ")})`,
      });
    }
  }
  const checks: ReviewCheckSpec[] = [];
  const rawChecks = review.checks ?? [];
  if (!Array.isArray(rawChecks)) {
    problems.push({ field: ":review :checks", message: "expected a vector of checks" });
  } else {
    rawChecks.forEach((c, i) => {
      const check = readCheck(c, `:review :checks ${i + 1}`, problems);
      if (check) checks.push(check);
    });
  }
  const spec: ReviewSpec = {
    checks,
    reviewer: readReviewer(review.reviewer, problems),
    onPass: oneOf(review["on-pass"], "on-pass", ["merge", "propose"] as const, "propose", problems),
    onFail: oneOf(
      review["on-fail"],
      "on-fail",
      ["escalate", "discard"] as const,
      "escalate",
      problems,
    ),
    spotCheck: readSpotCheck(review["spot-check"], problems),
  };
  return { spec, problems };
}
