/**
 * The scorecard and diagnosis of a run, from every try of its current cells in the home's
 * records, folded as they stream out of the state store (no record is held).
 */
import type { AttemptRecord, TrustTier } from "../bench/records.ts";
import type { ExperimentPlan } from "../bench/experiment.ts";
import { type Scorecard, scorecardOfFold, scorecardRecordCheck } from "../bench/scorecard.ts";
import { type Diagnosis, diagnosisOfFold } from "../bench/diagnosis.ts";
import { foldGroupedHistory, HistoryFold } from "../bench/history_fold.ts";
import { cellIndexer } from "../bench/resume.ts";
import type { StoppingRule } from "../bench/sequential.ts";
import type { StateStore } from "../ports/state_store.ts";

/**
 * The records of `plan`'s cells made with the cells' inputs, of a stream of the plan's
 * experiment (state.streamAttemptHistory or streamCellRecords), in its order.
 */
export async function* currentRecords(
  records: AsyncIterable<AttemptRecord>,
  plan: ExperimentPlan,
): AsyncGenerator<AttemptRecord> {
  const index = cellIndexer(plan);
  for await (const r of records) {
    const i = index(r.candidate, r.caseId, r.repetition);
    if (i >= 0 && plan.cells.inputHashAt(i) === r.inputHash) yield r;
  }
}

/**
 * The scorecard (also stored in the home when the run is complete) and the diagnosis of a
 * plan's records: every try of its cells, so what retried faults cost is counted.
 */
export async function scoreExperiment(
  state: StateStore,
  plan: ExperimentPlan,
  opts: {
    trust: TrustTier;
    baseline?: string;
    bundleCases: number;
    /** The run stopped comparisons when decided: the scorecard says where each stopped. */
    stopping?: StoppingRule;
  },
): Promise<{ scorecard: Scorecard; diagnosis: Diagnosis }> {
  const candidates = plan.definition.candidates.map((c) => c.name);
  const { stopping } = opts;
  const scorecardOptions = {
    candidates,
    expectedCells: plan.cells.length,
    baseline: stopping?.baseline ?? opts.baseline,
    trust: opts.trust,
    bundleId: plan.definition.bundle,
    experimentId: plan.id,
    ...(stopping
      ? {
        sequential: {
          rule: stopping,
          cases: plan.definition.cases,
          repetitions: plan.definition.repetitions,
        },
      }
      : {}),
  };
  const fold = new HistoryFold(candidates);
  await foldGroupedHistory(
    currentRecords(state.streamAttemptHistory(plan.id), plan),
    fold,
    scorecardRecordCheck(scorecardOptions),
  );
  const scorecard = scorecardOfFold(fold, scorecardOptions);
  const diagnosis = diagnosisOfFold(fold, {
    candidates,
    cases: plan.definition.cases,
    bundleCases: opts.bundleCases,
  });
  if (scorecard.complete) await state.putScorecard(plan.id, scorecard);
  return { scorecard, diagnosis };
}
