/**
 * Problems with checker.js that only loading it shows: a syntax error, an import, a throw
 * while the module loads. The shape check reads checker.js as text; this asks the sandbox
 * (injected, so it stays testable) to load it once.
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
  const loading = run.fault === "syntax" || /^checker\.js threw while loading/.test(run.message);
  if (!loading) return []; // it loaded; what it does with an empty answer is not a shape problem
  const at = /\(checker\.js line (\d+)(?:, column (\d+))?\)/.exec(run.message);
  return [{
    file: "checker.js",
    ...(at ? { line: Number(at[1]) } : {}),
    ...(at?.[2] ? { column: Number(at[2]) } : {}),
    message: run.message.replace(/^checker\.js (has an? )?/, "").replace(
      / \(checker\.js line[^)]*\)$/,
      "",
    ),
  }];
}
