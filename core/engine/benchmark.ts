/**
 * The benchmark use case, end to end: a bundle (read from a directory) is installed in its
 * room of the home (created once; `workflows/<name>/` written as one commit, files the
 * bundle no longer has removed, no commit when unchanged), its candidates are resolved,
 * the experiment is planned, run (or resumed) and scored. The CLI (`dvergr benchmark`,
 * `dvergr demo`) and the engine benchmark call this.
 */
import type { FileBundle } from "../bundle/file_map.ts";
import type { Bundle } from "../bundle/types.ts";
import { parseBundle } from "../bundle/parse.ts";
import type { CheckerRunner } from "../checker.ts";
import type { TrustTier } from "../bench/records.ts";
import type { Candidate } from "../bench/candidate.ts";
import {
  type CandidateSpec,
  checkBaseline,
  readNamedCommands,
  resolveCandidates,
} from "./candidate_spec.ts";
import { type ExperimentPlan, planExperiment, type PlanOptions } from "../bench/experiment.ts";
import {
  type ProgressEvent,
  runExperiment,
  type RunResult,
  scoreExperiment,
} from "./run_experiment.ts";
import type { Scorecard } from "../bench/scorecard.ts";
import type { CertificationSummary } from "../bench/report.ts";
import type { Home } from "../io/home.ts";
import { roomSlug } from "../io/home.ts";
import { syncBundle } from "../io/room_store.ts";
import { trustOf } from "../io/state_store.ts";
import { type CommandSpec, detectBwrap, type Isolation } from "../io/candidates/command.ts";

export interface BenchmarkRequest extends PlanOptions {
  bundle: FileBundle;
  specs: CandidateSpec[];
  home: Home;
  /**
   * The room to run in, where the bundle is `workflows/<bundle name>/` (a bundle named
   * `ROOM/NAME`); default: the room named after the bundle.
   */
  room?: string;
  runner: CheckerRunner;
  env: (name: string) => string | undefined;
  parallel?: number;
  baseline?: string;
  /** Read-only mounts for inline command candidates (`--mount`). */
  mounts?: string[];
  /** Named commands besides the home's candidates.edn (these win). */
  named?: Map<string, CommandSpec>;
  /** Default: bubblewrap when it works here. */
  isolation?: Isolation;
  /** Makes model candidates (tests); default: the model registry. */
  createModel?: (model: string, index: number) => Promise<Candidate>;
  onEvent?: (e: ProgressEvent) => void;
  /** Called once the experiment is planned, before any cell runs. */
  onPlan?: (info: { bundle: Bundle; room: string; plan: ExperimentPlan }) => void;
  signal?: AbortSignal;
  clock?: () => Date;
}

export interface BenchmarkOutcome {
  bundle: Bundle;
  room: string;
  /** The commit that installed this version of the bundle, or null when it was there. */
  commit: string | null;
  plan: ExperimentPlan;
  candidates: Candidate[];
  result: RunResult;
  scorecard: Scorecard;
  trust: TrustTier;
  isolation: Isolation;
}

/** A case pack's certification counts, when the bundle has certification.edn. */
export function certificationSummary(bundle: Bundle): CertificationSummary | null {
  const c = bundle.certification;
  if (!c) return null;
  const byReason = (c["by-reason"] ?? {}) as Record<string, number>;
  return { cases: Number(c.cases), certified: Number(c.certified), byReason };
}

/** Installs the bundle in the home and runs (or resumes) its experiment. */
export async function benchmarkBundle(req: BenchmarkRequest): Promise<BenchmarkOutcome> {
  const bundle = parseBundle(req.bundle);
  const { home } = req;
  const room = req.room ?? roomSlug(bundle.name);
  await home.rooms.createRoom(room);
  const commit = await syncBundle(home.rooms, room, req.room ? bundle.name : room, bundle.files);

  const isolation = req.isolation ?? ((await detectBwrap(req.env)) ? "bwrap" : "none");
  const named = await readNamedCommands(home.candidatesFile);
  for (const [k, v] of req.named ?? []) named.set(k, v);
  const candidates = await resolveCandidates(req.specs, {
    bundle,
    env: req.env,
    isolation,
    named,
    mounts: req.mounts,
    homeDir: home.dir,
    createModel: req.createModel,
  });
  checkBaseline(req.baseline, candidates);
  const plan = planExperiment(bundle, candidates, req);
  req.onPlan?.({ bundle, room, plan });
  const trust = await trustOf(home.state, bundle.id);
  const result = await runExperiment({
    state: home.state,
    blobs: home.blobs,
    worldsDir: home.worldsDir,
    bundle,
    plan,
    candidates,
    runner: req.runner,
    room,
    trust,
    parallel: req.parallel,
    onEvent: req.onEvent,
    signal: req.signal,
    clock: req.clock,
  });
  const scorecard = await scoreExperiment(home.state, plan, result, {
    trust,
    baseline: req.baseline,
  });
  return { bundle, room, commit, plan, candidates, result, scorecard, trust, isolation };
}
