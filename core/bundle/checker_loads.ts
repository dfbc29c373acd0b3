/**
 * Problems with the checker (checker.js, or checker.clj) that only loading it shows: a
 * syntax error, an import, a throw while it loads, a top level that never ends. The shape check reads the checker as
 * text; this asks the sandbox (injected, so it stays testable) to load it once.
 */
import type { CheckerInput, CheckerRun, CheckerRunner } from "../checker.ts";
import { checkerInputFor } from "./checker_input.ts";
import type { Bundle, BundleProblem } from "./types.ts";
import { DvergrError } from "../errors.ts";
import { formatProblem } from "./parse_core.ts";

/** The checker's load problems (none when it loads), each with its line when the sandbox gave one. */
export async function checkerLoadProblems(
  bundle: Bundle,
  runner: CheckerRunner,
): Promise<BundleProblem[]> {
  return loadProblemsOf(bundle.checkerFile, await loadRun(bundle, runner));
}

/** checkerLoadError() of the bundle's checker loaded once by `runner` (on an empty answer). */
export async function checkerLoadRefusal(
  bundle: Bundle,
  runner: CheckerRunner,
): Promise<DvergrError | null> {
  return checkerLoadError(bundle, await loadRun(bundle, runner));
}

/** The checker run on an empty answer, its first case's gold: what loading it shows. */
function loadRun(bundle: Bundle, runner: CheckerRunner): Promise<CheckerRun> {
  return runner.check(
    bundle.checker,
    checkerInputFor(bundle, { files: {}, caseId: bundle.cases[0]?.id ?? null }),
  );
}

/**
 * The load problems of the checker among a bundle's files that do not parse as a bundle (an
 * EDN problem elsewhere): it is loaded on an empty answer without gold or params, so its own
 * syntax errors are reported with the rest rather than after they are fixed. None when the
 * bundle has no checker (the shape check says so).
 */
export async function checkerFileLoadProblems(
  files: ReadonlyMap<string, string>,
  runner: CheckerRunner,
): Promise<BundleProblem[]> {
  const js = files.get("checker.js");
  const clj = files.get("checker.clj");
  const checkerFile = js !== undefined ? "checker.js" : "checker.clj";
  const source = js ?? clj;
  if (source === undefined) return [];
  const input: CheckerInput = {
    files: {},
    params: {},
    gold: null,
    fetched: {},
    judgements: {},
    ...(checkerFile === "checker.clj" ? { clojure: { gold: null, params: ["m"] } } : {}),
  };
  return loadProblemsOf(checkerFile, await runner.check(source, input));
}

export function loadProblemsOf(
  file: "checker.js" | "checker.clj",
  run: CheckerRun,
): BundleProblem[] {
  if (run.ok) return [];
  const name = file.replace(".", "\\.");
  // A syntax error, a refused import, a throw, or a top level that never ends.
  const loading = run.fault === "syntax" ||
    new RegExp(`^${name} threw while loading`).test(run.message) ||
    (run.fault === "timeout" &&
      new RegExp(`^${name} (did not finish|never finished) loading`).test(run.message));
  if (!loading) return []; // it loaded; what it does with an empty answer is not a shape problem
  const at = new RegExp(`\\(${name} line (\\d+)(?:, column (\\d+))?\\)`).exec(run.message);
  return [{
    file,
    ...(at ? { line: Number(at[1]) } : {}),
    ...(at?.[2] ? { column: Number(at[2]) } : {}),
    message: run.message.replace(new RegExp(`^${name} (has an? )?`), "").replace(
      new RegExp(` \\(${name} line[^)]*\\)$`),
      "",
    ),
  }];
}

/**
 * A checker that did not load, as `dvergr check` reports it (BUNDLE_INVALID, exit 2): for a
 * command that graded with it (`run`, one of its failed runs) and so found the bundle broken
 * rather than an answer wrong. Null when `run` loaded it.
 */
export function checkerLoadError(
  bundle: Pick<Bundle, "name" | "checkerFile">,
  run: CheckerRun,
): DvergrError | null {
  const problems = loadProblemsOf(bundle.checkerFile, run);
  if (problems.length === 0) return null;
  return new DvergrError(
    "BUNDLE_INVALID",
    `Bundle "${bundle.name}" is not well formed: ${problems.map(formatProblem).join("; ")}`,
    {
      hint: `Fix ${bundle.checkerFile} (\`dvergr check\` lists every problem of the bundle)`,
      details: { bundle: bundle.name, problems },
    },
  );
}
