/**
 * What RunResult.records used to hold, for tests that look at records: the latest record of
 * every cell of a plan made with its inputs, in plan order (a run no longer holds them).
 */
import type { AttemptRecord } from "../../core/bench/records.ts";
import type { ExperimentPlan } from "../../core/bench/experiment.ts";
import { cellIndexer } from "../../core/bench/resume.ts";
import { currentRecords } from "../../core/engine/score_experiment.ts";
import type { StateStore } from "../../core/ports/state_store.ts";

export async function planRecords(
  state: StateStore,
  plan: ExperimentPlan,
): Promise<AttemptRecord[]> {
  const index = cellIndexer(plan);
  const at = (r: AttemptRecord) => index(r.candidate, r.caseId, r.repetition);
  const records = await Array.fromAsync(currentRecords(state.streamCellRecords(plan.id), plan));
  return records.sort((a, b) => at(a) - at(b));
}

/** A run's result with the records of its plan, as tests read them. */
export async function withRecords<R extends object>(
  state: StateStore,
  plan: ExperimentPlan,
  result: R,
): Promise<R & { records: AttemptRecord[] }> {
  return { ...result, records: await planRecords(state, plan) };
}
