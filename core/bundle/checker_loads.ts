/**
 * Problems with the checker (checker.js, or checker.clj) that only loading it shows: a
 * syntax error, an import, a throw while it loads, a top level that never ends. The shape check reads the checker as
 * text; this asks the sandbox (injected, so it stays testable) to load it once.
 */
import type { CheckerRunner } from "../checker.ts";
import { checkerInputFor } from "./checker_input.ts";
import type { Bundle, BundleProblem } from "./types.ts";

/** The checker's load problems (none when it loads), each with its line when the sandbox gave one. */
export async function checkerLoadProblems(
  bundle: Bundle,
  runner: CheckerRunner,
): Promise<BundleProblem[]> {
  const run = await runner.check(
    bundle.checker,
    checkerInputFor(bundle, { files: {}, caseId: bundle.cases[0]?.id ?? null }),
  );
  if (run.ok) return [];
  const file = bundle.checkerFile;
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
