/**
 * Scorecards, diagnoses and reports byte for byte as the code before records were streamed
 * made them (tests/helpers/golden.ts): the folds that replaced it give the same bytes.
 */
import assert from "node:assert/strict";
import {
  GOLDEN,
  GOLDEN_SEEDS,
  goldenInputs,
  goldenReport,
  REPORT_SEEDS,
} from "../../helpers/golden.ts";
import { buildScorecard } from "../../../core/bench/scorecard.ts";
import { diagnose } from "../../../core/bench/diagnosis.ts";
import { renderReport } from "../../../core/bench/report.ts";
import { renderReportHtml } from "../../../core/bench/report_html.ts";

Deno.test("buildScorecard() and diagnose() give the golden JSON of the in-memory code", () => {
  for (const seed of GOLDEN_SEEDS) {
    const { history, scorecardOptions, diagnosisOptions } = goldenInputs(seed);
    const scorecard = buildScorecard(history.records, scorecardOptions);
    const diagnosis = diagnose(history.records, diagnosisOptions);
    assert.equal(
      JSON.stringify({ scorecard, diagnosis }),
      JSON.stringify(GOLDEN[String(seed)]),
      `seed ${seed}`,
    );
  }
});

Deno.test("renderReport() and renderReportHtml() give the golden reports byte for byte", async () => {
  for (const seed of REPORT_SEEDS) {
    const { history, scorecardOptions, diagnosisOptions } = goldenInputs(seed);
    const scorecard = buildScorecard(history.records, scorecardOptions);
    const opts = {
      title: `Golden ${seed}`,
      diagnosis: diagnose(history.records, diagnosisOptions),
      certification: null,
    };
    assert.equal(renderReport(scorecard, opts), await goldenReport(seed, "md"));
    assert.equal(renderReportHtml(scorecard, opts), await goldenReport(seed, "html"));
  }
});
