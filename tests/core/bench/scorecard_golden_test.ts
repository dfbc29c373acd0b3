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
import {
  buildScorecard,
  scorecardOfFold,
  scorecardRecordCheck,
} from "../../../core/bench/scorecard.ts";
import { diagnose, diagnosisOfFold } from "../../../core/bench/diagnosis.ts";
import { foldGroupedHistory, HistoryFold } from "../../../core/bench/history_fold.ts";
import type { StateStore } from "../../../core/ports/state_store.ts";
import { storedHistory as stored } from "../../helpers/random_records.ts";
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

/** The scorecard and diagnosis folded from the state store's streamed history. */
async function streamed(state: StateStore, seed: number) {
  const { scorecardOptions, diagnosisOptions } = goldenInputs(seed);
  const fold = new HistoryFold(scorecardOptions.candidates);
  await foldGroupedHistory(
    state.streamAttemptHistory("exp-rand"),
    fold,
    scorecardRecordCheck(scorecardOptions),
  );
  return {
    scorecard: scorecardOfFold(fold, scorecardOptions),
    diagnosis: diagnosisOfFold(fold, diagnosisOptions),
  };
}

Deno.test("the streamed scorecard, diagnosis and reports are byte-identical to the goldens", async () => {
  for (const seed of GOLDEN_SEEDS) {
    const state = await stored(goldenInputs(seed).history.records);
    const { scorecard, diagnosis } = await streamed(state, seed);
    assert.equal(JSON.stringify({ scorecard, diagnosis }), JSON.stringify(GOLDEN[String(seed)]));
    if (REPORT_SEEDS.includes(seed)) {
      const opts = { title: `Golden ${seed}`, diagnosis, certification: null };
      assert.equal(renderReport(scorecard, opts), await goldenReport(seed, "md"));
      assert.equal(renderReportHtml(scorecard, opts), await goldenReport(seed, "html"));
    }
    state.close();
  }
});
