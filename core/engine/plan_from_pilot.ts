/**
 * `dvergr plan` and MCP `experiment_plan`: a pilot experiment's records folded as they
 * stream (never held), each candidate's paired differences to the baseline, and the plan
 * of each comparison (core/bench/power_plan.ts): cases × repetitions for a fixed-size paired
 * interval, and the cells sequential stopping is expected to use.
 */
import { generatorOf } from "../bundle/generator.ts";
import { DvergrError } from "../errors.ts";
import type { ExperimentDefinition } from "../bench/experiment.ts";
import { foldGroupedHistory, HistoryFold } from "../bench/history_fold.ts";
import { scorecardOfFold } from "../bench/scorecard.ts";
import { type ComparisonPlan, pilotDifferences, planComparison } from "../bench/power_plan.ts";
import { currentRecords } from "./score_experiment.ts";
import { experimentBundle } from "./experiment_bundle.ts";
import { planOfDefinition } from "../bench/experiment.ts";
import type { Home } from "../ports/home.ts";
import type { ExperimentMeta } from "../ports/state_store.ts";
import type { CandidateKinds } from "../ports/candidate_kind.ts";
import { resolveBaseline } from "./benchmark.ts";

export interface PilotPlanRequest {
  /** The half-width the fixed-size interval should have (a reward difference). */
  halfWidth: number;
  alpha: number;
  /** The equivalence margin of the simulated stopping rule. */
  delta: number;
  /**
   * The candidate the others are compared with, by name or as `benchmark --baseline` names
   * it (a model's id or alias); default the pilot's scorecard baseline.
   */
  baseline?: string;
}

/** The plan of every comparison of a pilot. */
export interface PilotPlan {
  experiment: string;
  bundle: string;
  baseline: string;
  halfWidth: number;
  alpha: number;
  delta: number;
  /** The bundle's cases, when its room still holds the version the pilot ran; else null. */
  casesAvailable: number | null;
  /** Every other candidate against the baseline, in declared order; plan null below 2 pairs. */
  comparisons: { candidate: string; baseline: string; plan: ComparisonPlan | null }[];
}

/**
 * The baseline a plan names, resolved as `benchmark --baseline` resolves it (resolveBaseline):
 * a name, else the one candidate answering to it, its other names read from its recorded
 * identity by the candidate kinds (only when the name is not a candidate's).
 */
async function pilotBaseline(
  def: ExperimentDefinition,
  experiment: string,
  baseline: string | undefined,
  kinds: CandidateKinds,
  homeDir: string,
): Promise<string | undefined> {
  const named = baseline === undefined || def.candidates.some((c) => c.name === baseline);
  const candidates = named ? def.candidates : await Promise.all(
    def.candidates.map(async (c) => ({
      name: c.name,
      aliases: await kinds.aliasesOf(c.identity, { homeDir }),
    })),
  );
  return resolveBaseline(baseline, candidates, `experiment ${experiment}`);
}

/**
 * Plans each comparison of experiment `meta` of `home` from its records; `kinds` reads the
 * other names a baseline may give a candidate by.
 */
export async function planFromPilot(
  home: Home,
  meta: ExperimentMeta,
  req: PilotPlanRequest,
  kinds: CandidateKinds,
): Promise<PilotPlan> {
  const def = meta.definition as unknown as ExperimentDefinition;
  const names = def.candidates.map((c) => c.name);
  const given = await pilotBaseline(def, meta.id, req.baseline, kinds, home.dir);
  if (names.length < 2) {
    throw new DvergrError(
      "USAGE",
      `Cannot plan from experiment ${meta.id}: it has one candidate, so no paired difference`,
      { hint: "Run a pilot with the baseline and at least one other candidate" },
    );
  }
  const plan = planOfDefinition(def);
  const fold = new HistoryFold(names);
  await foldGroupedHistory(currentRecords(home.state.streamCellRecords(meta.id), plan), fold);
  const baseline = given ??
    scorecardOfFold(fold, {
      candidates: names,
      expectedCells: meta.cells,
      trust: "ad-hoc",
      bundleId: meta.bundleId,
      experimentId: meta.id,
    }).baseline!;
  const bundle = await experimentBundle(home, meta).catch(() => null);
  // A generator makes as many worlds as a benchmark asks for: no bound.
  const casesAvailable = bundle === null || generatorOf(bundle) !== null
    ? null
    : Math.max(1, bundle.cases.length);
  return {
    experiment: meta.id,
    bundle: meta.bundleName,
    baseline,
    halfWidth: req.halfWidth,
    alpha: req.alpha,
    delta: req.delta,
    casesAvailable,
    comparisons: names.filter((n) => n !== baseline).map((candidate) => ({
      candidate,
      baseline,
      plan: planComparison(pilotDifferences(fold, candidate, baseline), {
        halfWidth: req.halfWidth,
        alpha: req.alpha,
        delta: req.delta,
        casesAvailable,
      }),
    })),
  };
}
