/**
 * Re-grading from kept evidence (`dvergr regrade`, MCP `experiment_regrade`): an experiment's
 * attempts graded again by a changed bundle's checker, without running any candidate. The
 * changed bundle must pose the same task (same task text, fixtures, cases, capture, web);
 * only what grades may differ. The re-grade is an experiment of its own (its definition is
 * the original's with the new bundle id, the new judge and `regradeOf`), run through the
 * engine's one path (run_experiment.ts: leases, group commits, resume) with a cell attempt
 * that grades the original's evidence (regrade_cell.ts), scored like any experiment and
 * compared with the original cell by cell (core/bench/regrade_comparison.ts).
 */
import type { FileBundle } from "../bundle/file_map.ts";
import { filesUnder } from "../bundle/file_map.ts";
import type { Bundle } from "../bundle/types.ts";
import { parseBundle } from "../bundle/parse.ts";
import { taskDifferences } from "../bench/same_task.ts";
import type { CheckerRunner } from "../checker.ts";
import { DvergrError } from "../errors.ts";
import {
  type ExperimentDefinition,
  type ExperimentPlan,
  planOfDefinition,
} from "../bench/experiment.ts";
import type { TrustTier } from "../bench/records.ts";
import { type RegradeComparison, RegradeFold } from "../bench/regrade_comparison.ts";
import type { Scorecard } from "../bench/scorecard.ts";
import type { Diagnosis } from "../bench/diagnosis.ts";
import type { Home } from "../ports/home.ts";
import type { Services } from "../ports/services.ts";
import { type ExperimentMeta, type StateStore, trustOf } from "../ports/state_store.ts";
import { type AttemptEffects, type EffectsOptions, prepareEffects } from "./attempt_effects.ts";
import { experimentBundle, putBundleFiles } from "./experiment_bundle.ts";
import { type ProgressEvent, runExperiment, type RunResult } from "./run_experiment.ts";
import { currentRecords, scoreExperiment } from "./score_experiment.ts";
import { regradeAttempt } from "./regrade_cell.ts";
import { withGeneratedCases } from "../bundle/generated_cases.ts";

export interface RegradeRequest {
  services: Services;
  home: Home;
  /** The experiment to grade again. */
  original: ExperimentMeta;
  /** The changed bundle. */
  bundle: FileBundle;
  env: (name: string) => string | undefined;
  /** Replaces parts of how the judge is reached (tests). */
  effects?: Partial<Omit<EffectsOptions, "env">>;
  /** Makes the worlds of an experiment whose cases generator.js made. */
  runner?: CheckerRunner;
}

/** A re-grade ready to run. */
export interface PreparedRegrade {
  original: ExperimentMeta;
  originalPlan: ExperimentPlan;
  /** The bundle the original ran. */
  originalBundle: Bundle;
  bundle: Bundle;
  plan: ExperimentPlan;
  room: string;
  trust: TrustTier;
  effects: AttemptEffects;
  /** The changed bundle's file manifest in the home's blobs (its reports read it). */
  bundleFiles: string;
}

export interface RegradeOutcome extends PreparedRegrade {
  result: RunResult;
  scorecard: Scorecard;
  diagnosis: Diagnosis;
  comparison: RegradeComparison;
}

/** Commits of the room looked through for the version of a bundle an experiment ran. */
const HISTORY_LOOKED_AT = 1000;

/**
 * The bundle an experiment ran: from its room's head or the store (experimentBundle), else
 * from the room's history (the room moved on since); NOT_FOUND when none has it.
 */
export async function bundleAsRun(home: Home, meta: ExperimentMeta): Promise<Bundle> {
  const found = await experimentBundle(home, meta).catch(() => null);
  if (found) return found;
  const prefix = `workflows/${meta.bundleName}`;
  const log = await home.rooms.hasRoom(meta.room).catch(() => false)
    ? await home.rooms.log(meta.room)
    : [];
  for (const commit of log.slice(0, HISTORY_LOOKED_AT)) {
    const files = filesUnder(await home.rooms.readFiles(meta.room, prefix, commit.id), prefix);
    if (files.size === 0) continue;
    try {
      const bundle = parseBundle({ name: meta.bundleName, files });
      if (bundle.id === meta.bundleId) return bundle;
    } catch {
      // An unreadable version is not the one that ran.
    }
  }
  throw new DvergrError(
    "NOT_FOUND",
    `Cannot re-grade experiment ${meta.id}: the home no longer has the bundle it ran ` +
      `(${meta.bundleName} ${meta.bundleId}), so the task cannot be compared`,
    { hint: `Its room "${meta.room}" holds another version and its history not this one` },
  );
}

/**
 * Everything before the first cell: the original's bundle found, the changed bundle checked
 * to pose the same task, the re-grade planned and its judge prepared.
 */
export async function prepareRegrade(req: RegradeRequest): Promise<PreparedRegrade> {
  const { home, original } = req;
  const def = original.definition as unknown as ExperimentDefinition;
  const { originalBundle, bundle } = await generatedAgain(
    req,
    def,
    await bundleAsRun(home, original),
    parseBundle(req.bundle),
  );
  const differs = taskDifferences(originalBundle, bundle, def);
  if (differs.length > 0) {
    throw new DvergrError(
      "USAGE",
      `Cannot re-grade experiment ${original.id} with bundle "${bundle.name}": it poses another ` +
        `task (${differs.join("; ")})`,
      {
        hint: "A re-grade changes only what grades (the checker, gold, calibration, the " +
          "judge): benchmark a changed task instead",
        details: { differs },
      },
    );
  }
  const effects = await prepareEffects(
    bundle,
    { env: req.env, homeDir: home.dir, ...req.effects },
    req.services,
  );
  const { verifier: _, regradeOf: __, generated: ___, ...rest } = def;
  const definition: ExperimentDefinition = {
    ...rest,
    bundle: bundle.id,
    ...(bundle.generated ? { generated: bundle.generated } : {}),
    ...(effects.identity ? { verifier: effects.identity } : {}),
    regradeOf: original.id,
  };
  return {
    original,
    originalPlan: planOfDefinition(def, original.id),
    originalBundle,
    bundle,
    plan: planOfDefinition(definition),
    room: original.room,
    trust: await trustOf(home.state, bundle.id),
    effects,
    bundleFiles: await putBundleFiles(home.blobs, bundle.files),
  };
}

/**
 * For an experiment whose cases generator.js made: both bundles with those worlds made again
 * (the same split, count, seed and params); the original's must be the worlds it ran (a hash
 * in its definition), and the changed bundle's must pose the same task (taskDifferences
 * compares their files; their gold may differ). Other experiments: the bundles as they are.
 */
async function generatedAgain(
  req: RegradeRequest,
  def: ExperimentDefinition,
  originalBundle: Bundle,
  bundle: Bundle,
): Promise<{ originalBundle: Bundle; bundle: Bundle }> {
  const g = def.generated;
  if (!g) return { originalBundle, bundle };
  if (!req.runner) throw new Error("prepareRegrade: generated worlds need a runner");
  const set = { split: g.split, count: g.count, seed: g.seed };
  const before = await withGeneratedCases(originalBundle, req.runner, set, def.params);
  if (before.generated?.worlds !== g.worlds) {
    throw new DvergrError(
      "USAGE",
      `Cannot re-grade experiment ${req.original.id}: its generator.js no longer makes the ` +
        "worlds it ran (it is not deterministic), so their gold is not known",
      { hint: "Make generate draw only from its seed (`dvergr check` compares two calls)" },
    );
  }
  return {
    originalBundle: before,
    bundle: await withGeneratedCases(bundle, req.runner, set, def.params),
  };
}

export interface RunRegradeOptions {
  services: Services;
  runner: CheckerRunner;
  /** Cells graded at once; default 4. */
  parallel?: number;
  onEvent?: (e: ProgressEvent) => void;
  signal?: AbortSignal;
  clock?: () => Date;
}

/** Runs (or resumes) a prepared re-grade, scores it and compares it with the original. */
export async function runRegrade(
  home: Home,
  prepared: PreparedRegrade,
  opts: RunRegradeOptions,
): Promise<RegradeOutcome> {
  const { bundle, plan, originalPlan, trust } = prepared;
  const judge = (originalPlan.definition.verifier?.judge ?? null) as Record<string, unknown> | null;
  const result = await runExperiment({
    services: opts.services,
    state: home.state,
    blobs: home.blobs,
    worldsDir: home.worldsDir,
    bundle,
    plan,
    candidates: [],
    runner: opts.runner,
    room: prepared.room,
    trust,
    effects: prepared.effects,
    parallel: opts.parallel,
    onEvent: opts.onEvent,
    signal: opts.signal,
    clock: opts.clock,
    bundleFiles: prepared.bundleFiles,
    attempt: regradeAttempt({ plan: originalPlan, state: home.state, judge }),
  });
  const { scorecard, diagnosis } = await scoreExperiment(home.state, plan, {
    trust,
    bundleCases: bundle.cases.length,
  });
  const comparison = await compareRegrade(home.state, originalPlan, plan);
  return { ...prepared, result, scorecard, diagnosis, comparison };
}

/** Prepares and runs a re-grade. */
export async function regradeExperiment(
  req: RegradeRequest & RunRegradeOptions,
): Promise<RegradeOutcome> {
  return await runRegrade(req.home, await prepareRegrade(req), req);
}

/** The cell-by-cell comparison of an experiment and its re-grade, from their records. */
export async function compareRegrade(
  state: StateStore,
  originalPlan: ExperimentPlan,
  plan: ExperimentPlan,
): Promise<RegradeComparison> {
  const names = plan.definition.candidates.map((c) => c.name);
  const fold = new RegradeFold(originalPlan.id, plan.id, names, plan.cells.length);
  for await (const r of currentRecords(state.streamCellRecords(originalPlan.id), originalPlan)) {
    fold.noteOriginal(r);
  }
  for await (const r of currentRecords(state.streamCellRecords(plan.id), plan)) {
    fold.noteRegrade(r);
  }
  return fold.result();
}
