/** The scorecard of a run, from every try of its current cells in the home's records. */
import { cellKey, type TrustTier } from "../bench/records.ts";
import type { ExperimentPlan } from "../bench/experiment.ts";
import { buildScorecard, type Scorecard } from "../bench/scorecard.ts";
import type { StateStore } from "../io/state_store.ts";
import type { RunResult } from "./run_experiment.ts";

/** The scorecard of a run's records (also stored in the home when the run is complete). */
export async function scoreExperiment(
  state: StateStore,
  plan: ExperimentPlan,
  result: RunResult,
  opts: { trust: TrustTier; baseline?: string },
): Promise<Scorecard> {
  // Every try of the current cells (same inputs), so what retried faults cost is counted.
  const inputOf = new Map(
    result.records.map((r) => [cellKey(r.candidate, r.caseId, r.repetition), r.inputHash]),
  );
  const history = (await state.attemptHistory(plan.id)).filter((r) =>
    inputOf.get(cellKey(r.candidate, r.caseId, r.repetition)) === r.inputHash
  );
  const scorecard = buildScorecard(history, {
    candidates: plan.definition.candidates.map((c) => c.name),
    expectedCells: plan.cells.length,
    baseline: opts.baseline,
    trust: opts.trust,
    bundleId: plan.definition.bundle,
    experimentId: plan.id,
  });
  if (scorecard.complete) await state.putScorecard(plan.id, scorecard);
  return scorecard;
}
