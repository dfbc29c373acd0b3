/**
 * The benchmark use case, the one path the CLI (`dvergr benchmark`, `dvergr demo`) and MCP
 * (`catalog_benchmark`) share: resolve → baseline → plan → trust → run → score. A bundle's
 * candidates are resolved, the experiment is planned, and the bundle (from a directory or a
 * room) is installed in its room of the home (created once; `workflows/<name>/` written as
 * one commit, files the bundle no longer has removed, no commit when unchanged) before the
 * run (prepareBenchmark) or, on the CLI's path (benchmarkBundle), beside its first cells,
 * with nothing of the run recorded until it is there; then the run goes on (or resumes) and
 * is scored. The CLI adds flags, progress and printing; MCP adds the job wrapper
 * and refuses inline commands.
 */
import type { FileBundle } from "../bundle/file_map.ts";
import type { Bundle } from "../bundle/types.ts";
import { formatProblem } from "../bundle/parse_core.ts";
import { parseBundleLazily } from "../bundle/parse_lazily.ts";
import { goldProblems } from "./check.ts";
import { checkerLoadRefusal } from "../bundle/checker_loads.ts";
import { withGeneratedCases } from "../bundle/generated_cases.ts";
import { DEFAULT_GENERATOR_SEED, DEFAULT_SPLIT, generatorOf } from "../bundle/generator.ts";
import type { CheckerRunner } from "../checker.ts";
import type { TrustTier } from "../bench/records.ts";
import { candidatesToRun, type CellStates, readCellStates } from "../bench/resume.ts";
import type { Candidate } from "../bench/candidate.ts";
import { type ExperimentPlan, planExperiment, type PlanOptions } from "../bench/experiment.ts";
import { type ProgressEvent, runExperiment, type RunResult } from "./run_experiment.ts";
import { scoreExperiment } from "./score_experiment.ts";
import { enqueueBenchmark } from "./enqueue.ts";
import type { Scorecard } from "../bench/scorecard.ts";
import type { Diagnosis } from "../bench/diagnosis.ts";
import type { Home } from "../ports/home.ts";
import { roomSlug } from "../room_slug.ts";
import { bundleDir, syncBundle } from "../ports/room_store.ts";
import { type AttemptEffects, type EffectsOptions, prepareEffects } from "./attempt_effects.ts";
import { trustOf } from "../ports/state_store.ts";
import { DvergrError } from "../errors.ts";
import { checkRange } from "../ranges.ts";
import { DEFAULT_ALPHA, DEFAULT_DELTA, type StoppingRule } from "../bench/sequential.ts";
import type { ResourceLimits } from "../bench/resource_limits.ts";
import type { CandidateSpec, Isolation, NamedCommand } from "../ports/candidate_kind.ts";
import type { Services } from "../ports/services.ts";
import { userPolicyOf, type UserSources, type WebPolicy } from "../web/policy.ts";

export interface BenchmarkRequest extends PlanOptions {
  /** The adapters it runs on (adapters/compose.ts). */
  services: Services;
  bundle: FileBundle;
  specs: CandidateSpec[];
  /** Runs the bundle's generator.js, when it has one (the checker's sandbox). */
  runner?: CheckerRunner;
  home: Home;
  /**
   * The room to run in, where the bundle is `workflows/<bundle name>/` (a bundle named
   * `ROOM/NAME`); default: the room named after the bundle.
   */
  room?: string;
  /**
   * The bundle is not installed in a room of this home: a worker, whose bundle came from a
   * shared store (`room` names the experiment's room there).
   */
  roomless?: boolean;
  env: (name: string) => string | undefined;
  baseline?: string;
  /** Read-only mounts for inline command candidates (`--mount`). */
  mounts?: string[];
  /** Named commands besides the home's candidates.edn (these win). */
  named?: ReadonlyMap<string, NamedCommand>;
  /** Default: bubblewrap when it works here. */
  isolation?: Isolation;
  /** Resource limits of command candidates (recorded in their identity); default DEFAULT_LIMITS. */
  limits?: ResourceLimits;
  /** Makes model candidates (tests); default: the model registry. */
  createModel?: (model: string, index: number) => Promise<Candidate>;
  /** Replaces parts of how the web and the judge are reached (tests: a fetch trusting a test CA). */
  effects?: Partial<Omit<EffectsOptions, "env">>;
  /**
   * Stop each comparison with the baseline once its confidence sequence decides it
   * (`--stop-when-decided`); needs `baseline`.
   */
  stopWhenDecided?: { alpha?: number; delta?: number };
  /**
   * The user's sources (`--allow-sources`, `--block-sources`), composed with the home's
   * web-policy.edn and then with the bundle's policy. A worker (`roomless`) reads no home
   * file: the queued request carries the policy the experiment was enqueued with.
   */
  sources?: UserSources;
}

/** A benchmark ready to run: what prepareBenchmark() decided. */
export interface PreparedBenchmark {
  bundle: Bundle;
  room: string;
  /** The commit that installed this version of the bundle, or null when it was there. */
  commit: string | null;
  plan: ExperimentPlan;
  /** Where the cells stood when it was prepared (a few bytes per cell, not their records). */
  cellStates: CellStates;
  candidates: Candidate[];
  trust: TrustTier;
  isolation: Isolation;
  baseline?: string;
  /** The attempts' web and judge (keys checked when cells remain to run). */
  effects: AttemptEffects;
  /** The stopping rule of `--stop-when-decided`, when given. */
  stopping?: StoppingRule;
  /** The bundle's file manifest in a shared store, once enqueued (core/engine/enqueue.ts). */
  bundleFiles?: string;
  /** The user's web policy (the home's file and the request's sources), or null: none. */
  webPolicy: WebPolicy | null;
}

export interface BenchmarkOutcome extends PreparedBenchmark {
  result: RunResult;
  scorecard: Scorecard;
  /** Outcomes, causes, per-case results and item analysis (folded from the records). */
  diagnosis: Diagnosis;
}

/**
 * Everything before the first cell: candidates resolved, the baseline checked, the
 * experiment planned, the verifier's trust read, the candidates that still have cells
 * preflighted (missing API keys, mounts…), so a request fails now rather than inside a job,
 * and then the bundle installed in its room. With `refuseUnloadable` (a run that only enqueues
 * its cells for workers), a checker that does not load is refused before that, as `dvergr
 * check` reports it: every worker would fault every cell.
 */
export async function prepareBenchmark(
  req: BenchmarkRequest,
  opts: { refuseUnloadable?: boolean } = {},
): Promise<PreparedBenchmark> {
  const { prepared, install } = await planBenchmark(req);
  if (opts.refuseUnloadable && req.runner) {
    const refused = await checkerLoadRefusal(prepared.bundle, req.runner);
    if (refused) throw refused;
  }
  return { ...prepared, commit: await install() };
}

/**
 * prepareBenchmark() but for the room: what installs the bundle in it (the commit, or null
 * when that version was there or the run is roomless) is returned to be called. Nothing is
 * written before it is: a request refused here leaves no room behind.
 */
async function planBenchmark(
  req: BenchmarkRequest,
): Promise<{ prepared: PreparedBenchmark; install: () => Promise<string | null> }> {
  const bundle = await worldsOf(await parseBundleLazily(req.bundle), req);
  refuseCasesWithoutGold(bundle);
  const { home } = req;
  const webPolicy = userPolicyOf(
    req.roomless ? null : await req.services.web.homePolicy(home.dir),
    req.sources,
  );
  const room = req.room ?? roomSlug(bundle.name);
  const install = async () => {
    if (req.roomless) return null;
    const name = req.room ? bundle.name : room;
    // A new room is made holding the bundle: one pack and one round of syncs, where making
    // it and then installing the bundle wrote and synced twice and read the room back.
    if (await home.rooms.createRoom(room, bundleDir(name, bundle.files))) {
      return await home.rooms.head(room);
    }
    return await syncBundle(home.rooms, room, name, bundle.files);
  };

  const { candidates, isolation } = await req.services.candidates.resolve(req.specs, {
    bundle,
    env: req.env,
    isolation: req.isolation,
    candidatesFile: home.candidatesFile,
    named: req.named,
    mounts: req.mounts,
    limits: req.limits,
    homeDir: home.dir,
    createModel: req.createModel,
  });
  const baseline = resolveBaseline(req.baseline, candidates);
  const stopping = req.stopWhenDecided
    ? stoppingRule(baseline, candidates, req.stopWhenDecided)
    : undefined;
  const effects = await prepareEffects(
    bundle,
    { env: req.env, homeDir: home.dir, ...req.effects, webPolicy },
    req.services,
  );
  const plan = planExperiment(bundle, candidates, { ...req, verifier: effects.identity });
  const trust = await trustOf(home.state, bundle.id);
  const cellStates = await readCellStates(plan, home.state.streamCellRecords(plan.id));
  const toRun = candidatesToRun(plan, cellStates);
  for (const c of candidates) if (toRun.has(c.name)) await c.preflight?.();
  // The judge grades every attempt; the web's keys matter only to candidates that can use
  // tools (built-ins never do).
  if (toRun.size > 0) {
    effects.preflight({
      web: candidates.some((c) => toRun.has(c.name) && c.identity.kind !== "builtin"),
    });
  }
  const prepared = {
    bundle,
    room,
    commit: null,
    plan,
    cellStates,
    candidates,
    trust,
    isolation,
    baseline,
    effects,
    ...(stopping ? { stopping } : {}),
    webPolicy,
  };
  return { prepared, install };
}

/**
 * The bundle with its generated worlds as cases when it has generator.js (`cases` worlds of
 * `split`, from `seed`); refuses `split` and `seed` without a generator, `cases` on a bundle
 * that has neither a generator nor cases, and a generator without `cases`.
 */
async function worldsOf(bundle: Bundle, req: BenchmarkRequest): Promise<Bundle> {
  const { cases, split, seed } = req;
  if (generatorOf(bundle) === null) {
    if (split !== undefined || seed !== undefined) {
      throw new DvergrError(
        "USAGE",
        `Cannot use ${split !== undefined ? "a split" : "a seed"} on bundle "${bundle.name}": ` +
          "only generated worlds have splits and seeds, and it has no generator.js",
        { hint: "Leave out --split and --seed (MCP: split, seed)" },
      );
    }
    if (cases !== undefined && bundle.cases.length === 0) {
      throw new DvergrError(
        "USAGE",
        `Cannot take ${cases} cases of bundle "${bundle.name}": it is one world (fixtures/, ` +
          "no cases/ and no generator.js)",
        {
          hint: "Leave out --cases (MCP: cases), or add a generator.js exporting " +
            "generate({seed, split, index, params}) to benchmark generated worlds",
        },
      );
    }
    return bundle;
  }
  if (req.caseIds !== undefined || cases === undefined) {
    throw new DvergrError(
      "USAGE",
      req.caseIds !== undefined
        ? `Cannot select cases by id in bundle "${bundle.name}": its worlds are generated`
        : `Cannot benchmark bundle "${bundle.name}" without the number of worlds to generate`,
      {
        hint: "Give --cases N [--split train|test] [--seed S] (MCP: cases, split, seed): " +
          "generator.js makes worlds 0..N-1 of the split (default test)",
      },
    );
  }
  if (!req.runner) throw new Error("prepareBenchmark: a generated bundle needs a runner");
  // Refused before a world is made, not after a million of them.
  checkRange("cases", cases, "cases");
  checkRange(
    "cells",
    req.specs.length * cases * (req.repetitions ?? 1),
    "the number of cells (candidates × cases × repetitions)",
  );
  return await withGeneratedCases(
    bundle,
    req.runner,
    { split: split ?? DEFAULT_SPLIT, count: cases, seed: seed ?? DEFAULT_GENERATOR_SEED },
    req.params,
  );
}

/** A case whose checker would get gold nil (goldProblems) fails every cell: refused first. */
function refuseCasesWithoutGold(bundle: Bundle): void {
  const problems = goldProblems(bundle);
  if (problems.length === 0) return;
  throw new DvergrError(
    "BUNDLE_INVALID",
    `Bundle "${bundle.name}" is not well formed: ${problems.map(formatProblem).join("; ")}`,
    {
      hint: "Run `dvergr check` on it to list every problem",
      details: { bundle: bundle.name, problems },
    },
  );
}

/** The rule of `--stop-when-decided`: a baseline and another candidate at least. */
function stoppingRule(
  baseline: string | undefined,
  candidates: readonly Candidate[],
  given: { alpha?: number; delta?: number },
): StoppingRule {
  if (baseline === undefined) {
    throw new DvergrError("USAGE", "Cannot stop when decided without a baseline", {
      hint: "Name the candidate the others are compared with: --baseline NAME",
    });
  }
  if (candidates.length < 2) {
    throw new DvergrError("USAGE", "Cannot stop when decided with one candidate", {
      hint: "Sequential stopping compares candidates with the baseline: give another one",
    });
  }
  return {
    baseline,
    alpha: checkRange("alpha", given.alpha ?? DEFAULT_ALPHA, "the error level (alpha)"),
    delta: checkRange("delta", given.delta ?? DEFAULT_DELTA, "the equivalence margin (delta)"),
  };
}

export interface RunBenchmarkOptions {
  /** The adapters it runs on (adapters/compose.ts). */
  services: Services;
  runner: CheckerRunner;
  /** Attempts at once; default 4. */
  parallel?: number;
  onEvent?: (e: ProgressEvent) => void;
  signal?: AbortSignal;
  clock?: () => Date;
  /**
   * The run follows its preparation at once, so where the cells stood then is current (a
   * job that runs later reads it again).
   */
  fresh?: boolean;
  /** Nothing of the run is recorded before this settles (RunOptions.recordAfter). */
  recordAfter?: Promise<unknown>;
}

/** Runs (or resumes) a prepared benchmark's cells and scores them. */
export async function runBenchmark(
  home: Home,
  prepared: PreparedBenchmark,
  opts: RunBenchmarkOptions,
): Promise<BenchmarkOutcome> {
  const { bundle, plan, candidates, room, trust } = prepared;
  const refusal = refuseUnloadableChecker(prepared, opts);
  let result: RunResult;
  try {
    result = await runExperiment({
      services: opts.services,
      state: home.state,
      blobs: home.blobs,
      worldsDir: home.worldsDir,
      bundle,
      plan,
      candidates,
      runner: opts.runner,
      room,
      trust,
      effects: prepared.effects,
      parallel: opts.parallel,
      onEvent: opts.onEvent,
      signal: refusal.signal,
      clock: opts.clock,
      cellStates: opts.fresh ? prepared.cellStates : undefined,
      stopping: prepared.stopping,
      bundleFiles: prepared.bundleFiles,
      // Nothing is recorded, the experiment included, before the checker is known to load
      // (the first verdicts come after its load anyway); a refusal rejects this, so the run
      // records nothing and throws it.
      recordAfter: Promise.all([opts.recordAfter, refusal.loaded]),
    });
  } catch (e) {
    // Workers of a shared store would only fault its cells too.
    if (e === refusal.error() && prepared.bundleFiles) await home.queue?.close(plan.id);
    throw e;
  }
  const { scorecard, diagnosis } = await scoreExperiment(home.state, plan, {
    trust,
    baseline: prepared.baseline,
    bundleCases: bundle.cases.length,
    stopping: prepared.stopping,
  });
  // Workers need not look at it any more.
  if (scorecard.complete && prepared.bundleFiles) await home.queue?.close(plan.id);
  return { ...prepared, result, scorecard, diagnosis };
}

/**
 * A checker that does not load (a syntax error, a refused import, a throw or no end while
 * loading) faults every cell after its candidate ran: an agent's time and API spend for
 * nothing. It is loaded once beside the run's first cells (the pool's first call: the first
 * verdicts need it loaded anyway). `loaded` settles then: nothing of the run is recorded
 * before (RunOptions.recordAfter). When it is broken, the run's signal stops its attempts
 * at once and `loaded` rejects with the refusal, as `dvergr check` reports it
 * (BUNDLE_INVALID): the run records nothing and throws it. A run with no cell left to run
 * loads nothing.
 */
function refuseUnloadableChecker(
  prepared: PreparedBenchmark,
  opts: RunBenchmarkOptions,
): { signal: AbortSignal | undefined; loaded: Promise<void>; error: () => DvergrError | null } {
  if (candidatesToRun(prepared.plan, prepared.cellStates).size === 0) {
    return { signal: opts.signal, loaded: Promise.resolve(), error: () => null };
  }
  const stop = new AbortController();
  let refused: DvergrError | null = null;
  // A sandbox that fails otherwise fails the cells' own grading, which says so.
  const loaded = checkerLoadRefusal(prepared.bundle, opts.runner).catch(() => null).then((e) => {
    if (!e) return;
    refused = e;
    stop.abort();
    throw e;
  });
  loaded.catch(() => {}); // the run throws it
  return {
    signal: opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal,
    loaded,
    error: () => refused,
  };
}

/** Prepares and runs a benchmark: the CLI's `benchmark` and `demo` path. */
export async function benchmarkBundle(
  req: BenchmarkRequest & RunBenchmarkOptions & {
    /** Called once the experiment is planned, before any cell runs. */
    onPlan?: (info: { bundle: Bundle; room: string; plan: ExperimentPlan }) => void;
  },
): Promise<BenchmarkOutcome> {
  const { prepared, install } = await planBenchmark(req);
  req.onPlan?.(prepared);
  // The bundle goes into its room beside the first cells (~0.1 s of hashing, packing and
  // syncing for 1,000 cases), not before them: the run records nothing, not even the
  // experiment, until it is there, so a record never names a bundle its room lacks.
  // Measured, 1,000 cases: the install holds the main thread ~70 ms (the first workers wait
  // for their second lease meanwhile), yet neither turns of the event loop inside it (every
  // 1-4 ms) nor a Web Worker doing it made the job faster: the main thread is the run's
  // bottleneck, and with turns the cells reach the cap on records landing before it ends.
  // Only less install work pays (none at all: 0.78 -> 0.72 s).
  const installing = install();
  installing.catch(() => {}); // the run throws it (or the enqueue's error comes first)
  // On a store shared by workers, they may run its cells too.
  if (req.home.queue) prepared.bundleFiles = await enqueueBenchmark(req.home, prepared, req);
  // Run at once: where prepare found the cells is where to resume from.
  const outcome = await runBenchmark(req.home, prepared, {
    ...req,
    fresh: true,
    recordAfter: installing,
  });
  return { ...outcome, commit: await installing };
}

/**
 * The candidate a baseline names: its name, else the one candidate that answers to it (a
 * model's id, the name it was given as or an alias: `--baseline haiku`). Refuses one that no
 * candidate or more than one answers to, naming the candidates. `of` says whose candidates
 * they are in its messages (`this run`, `experiment …`). The one resolution of `benchmark
 * --baseline` and `plan --baseline` (core/engine/plan_from_pilot.ts).
 */
export function resolveBaseline(
  baseline: string | undefined,
  candidates: readonly { name: string; aliases?: readonly string[] }[],
  of = "this run",
): string | undefined {
  if (baseline === undefined || candidates.some((c) => c.name === baseline)) return baseline;
  const answering = candidates.filter((c) => c.aliases?.includes(baseline));
  if (answering.length === 1) return answering[0].name;
  const names = (list: readonly { name: string }[]) => list.map((c) => `"${c.name}"`).join(", ");
  if (answering.length > 1) {
    throw new DvergrError(
      "USAGE",
      `Cannot compare against baseline "${baseline}": ${answering.length} candidates are ` +
        `that model (${names(answering)})`,
      { hint: `Name one of them: ${names(answering)}` },
    );
  }
  throw new DvergrError(
    "USAGE",
    `Cannot compare against baseline "${baseline}": it is not a candidate of ${of}`,
    { hint: `Name one of: ${names(candidates)} (a model candidate also by its model id or alias)` },
  );
}
