/**
 * The golden scorecards, diagnoses and reports of tests/fixtures/streamed/: what
 * buildScorecard(), diagnose(), renderReport() and renderReportHtml() of commit 67e48a8
 * (every record held in memory) made of randomHistory(seed) in plan order, and the inputs
 * they were made with. Regenerated since when a candidate whose cost is unknown (a model
 * without prices) stopped showing per-attempt and per-pass costs and ranking as if free, and
 * when a frontier plot whose every cost is $0 or unknown came to plot against median time.
 */
import { randomHistory } from "./random_records.ts";

const DIR = new URL("../fixtures/streamed/", import.meta.url);

/** Seed → the golden scorecard and diagnosis (JSON). */
export const GOLDEN: Record<string, { scorecard: unknown; diagnosis: unknown }> = JSON.parse(
  await Deno.readTextFile(new URL("golden.json", DIR)),
);

export const GOLDEN_SEEDS: number[] = Object.keys(GOLDEN).map(Number);

/** Seeds with golden reports (report_<seed>.md and .html). */
export const REPORT_SEEDS = [100, 101];

/** The golden Markdown or HTML report of a seed. */
export function goldenReport(seed: number, ext: "md" | "html"): Promise<string> {
  return Deno.readTextFile(new URL(`report_${seed}.${ext}`, DIR));
}

/** What the goldens of a seed were made with. */
export function goldenInputs(seed: number) {
  const history = randomHistory(seed, seed >= 100 ? "large" : "small");
  const scorecardOptions = {
    candidates: history.candidates,
    expectedCells: history.candidates.length * (history.cases?.length ?? 1) * history.repetitions,
    trust: "ad-hoc" as const,
    bundleId: "bundle-rand",
    experimentId: "exp-rand",
    baseline: seed % 3 === 0 ? history.candidates.at(-1) : undefined,
  };
  const diagnosisOptions = {
    candidates: history.candidates,
    cases: history.cases,
    bundleCases: (history.cases?.length ?? 0) + 2,
  };
  return { history, scorecardOptions, diagnosisOptions };
}
