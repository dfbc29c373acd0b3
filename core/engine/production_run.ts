/**
 * A production run: one attempt of a room's bundle whose world is the room's own tree at its
 * head (without `workflows/`, where the bundles and their gold live), run by the engine's
 * attempt path (runAttempt(): the same sandbox, limits, gateway and time limit as a benchmark
 * attempt) and graded by the bundle's checker without gold. What the candidate left under the
 * bundle's capture directories, compared with the room, becomes a fork: the branch
 * `runs/<id>` of the room's repository, on the commit the run started from. The run's record
 * is written when it starts and when it ends (a run of a dead process is interrupted; it is
 * never resumed). Reviewing the fork is review_run.ts's.
 */
import type { FileBundle } from "../bundle/file_map.ts";
import type { Bundle } from "../bundle/types.ts";
import { parseBundle } from "../bundle/parse.ts";
import { readParamTexts } from "../bundle/params.ts";
import { planExperiment } from "../bench/experiment.ts";
import type { AttemptRecord } from "../bench/records.ts";
import type { CheckerRunner } from "../checker.ts";
import { DvergrError } from "../errors.ts";
import type { Home } from "../ports/home.ts";
import type { Services } from "../ports/services.ts";
import type { DeployRecords } from "../ports/deploy_records.ts";
import { getJson } from "../ports/blob_store.ts";
import type { Capture, World } from "../ports/world_factory.ts";
import { trustOf } from "../ports/state_store.ts";
import type { RunAttempt, RunRecord } from "../review/records.ts";
import { captureChanges, worldOfRoom } from "../review/fork_diff.ts";
import { runAttempt } from "./attempt.ts";
import { prepareEffects } from "./attempt_effects.ts";

/** What a production run needs. */
export interface RunRequest {
  services: Services;
  home: Home;
  runner: CheckerRunner;
  env: (name: string) => string | undefined;
  clock: () => Date;
  room: string;
  /** The bundle as the room holds it (`workflows/<name>/`). */
  bundle: FileBundle;
  /** The candidate spec as given. */
  candidate: string;
  /** `--param` values as text. */
  params?: Record<string, string>;
  /** The run's id (a schedule names it before it claims its slot); default a new one. */
  id?: string;
  schedule?: { id: string; slot: string };
  signal?: AbortSignal;
}

/** The home's deploy records, or a clear refusal on a store that keeps none. */
export function deployRecordsOf(home: Home): DeployRecords {
  if (home.state.deploy) return home.state.deploy;
  throw new DvergrError("USAGE", "Cannot keep runs, reviews or schedules in this home's store", {
    hint: "Use the embedded home (Deno KV) or a PostgreSQL store (--store), which keep them",
  });
}

/** A new run id: the UTC start to the second, then six random hex digits (a branch segment). */
export function newRunId(now: Date): string {
  const t = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const rand = crypto.randomUUID().replace(/-/g, "").slice(0, 6);
  return `${t}-${rand}`;
}

/** The bundle a run grades with: the room's tree as its only fixtures, no cases, no gold. */
function productionBundle(bundle: Bundle, world: Record<string, string>): Bundle {
  return { ...bundle, fixtures: world, cases: [], gold: null };
}

/** The attempt part of a run's record. */
function runAttemptOf(record: AttemptRecord, capture: Capture | null): RunAttempt {
  const status = record.status === "fault" ? "fault" : record.status;
  return {
    status: status as RunAttempt["status"],
    message: record.fault?.message ?? record.ending?.message ?? record.failure?.message ?? null,
    verdict: record.verdict,
    elapsedMs: record.elapsedMs,
    billedMicros: record.billedMicros,
    evidenceRef: record.evidenceRef,
    skipped: capture ? capture.skipped.length + capture.skippedUnlisted : 0,
  };
}

/**
 * Runs a room's bundle once on the room's tree and keeps the world's changes as the fork
 * `runs/<id>`. Returns the ended run's record (with no review yet).
 */
export async function productionRun(req: RunRequest): Promise<RunRecord> {
  const deploy = deployRecordsOf(req.home);
  const { home, services, room } = req;
  const parsed = parseBundle(req.bundle);
  const spec = services.candidates.parse(req.candidate);
  const { candidates } = await services.candidates.resolve([spec], {
    bundle: parsed,
    env: req.env,
    candidatesFile: home.candidatesFile,
    homeDir: home.dir,
  });
  const candidate = candidates[0];
  await candidate.preflight?.();
  const effects = await prepareEffects(parsed, { env: req.env, homeDir: home.dir }, services);
  effects.preflight({ web: candidate.identity.kind !== "builtin" });

  const base = await home.rooms.head(room);
  const world = worldOfRoom(await home.rooms.readFiles(room, undefined, base));
  const bundle = productionBundle(parsed, world);
  const plan = planExperiment(bundle, candidates, {
    params: readParamTexts(req.params ?? {}),
    verifier: effects.identity,
  });
  const started = req.clock();
  const run: RunRecord = {
    id: req.id ?? newRunId(started),
    room,
    name: parsed.name,
    bundle: parsed.id,
    candidate: req.candidate,
    params: req.params ?? {},
    base,
    status: "running",
    startedAt: started.toISOString(),
    endedAt: null,
    owner: services.processes.self(),
    ...(req.schedule ? { schedule: req.schedule } : {}),
  };
  await deploy.putRun(run);

  const removals: Promise<void>[] = [];
  const record = await runAttempt(
    {
      services,
      blobs: home.blobs,
      worldsDir: home.worldsDir,
      bundle,
      plan,
      runner: req.runner,
      trust: await trustOf(home.state, parsed.id),
      signal: req.signal,
    },
    effects,
    candidate,
    { index: 0, cell: plan.cells.at(0), tryNo: 1, retriesLeft: 0 },
    req.clock,
    (w: World) => void removals.push(w.remove().catch(() => {})),
  );
  await Promise.all(removals);
  if (!record) {
    const stopped = { ...run, status: "interrupted" as const, endedAt: req.clock().toISOString() };
    await deploy.putRun(stopped);
    return stopped;
  }
  const ended = await keepFork(req, run, bundle, record);
  await deploy.putRun(ended);
  return ended;
}

/** Reads what the attempt captured and commits its changes as the run's branch. */
async function keepFork(
  req: RunRequest,
  run: RunRecord,
  bundle: Bundle,
  record: AttemptRecord,
): Promise<RunRecord> {
  const evidence = record.evidenceRef
    ? await getJson<{ captured?: Capture }>(req.home.blobs, record.evidenceRef)
    : null;
  const capture = record.status === "fault" ? null : evidence?.captured ?? null;
  const ended: RunRecord = {
    ...run,
    status: "ended",
    endedAt: req.clock().toISOString(),
    attempt: runAttemptOf(record, capture),
    fork: null,
    changed: [],
  };
  if (!capture) return ended;
  const changes = captureChanges(
    bundle.fixtures,
    capture.files,
    bundle.definition.capture,
    // Files the capture did not keep are never taken for removed; when it did not even list
    // them all, nothing is.
    new Set(
      capture.skippedUnlisted > 0
        ? Object.keys(bundle.fixtures)
        : capture.skipped.map((s) => s.path),
    ),
  );
  if (changes.size === 0) return ended;
  const branch = `runs/${run.id}`;
  const commit = await req.home.rooms.commitOn(run.room, {
    on: run.base,
    changes,
    message: `Run ${run.id} of ${run.name} by ${run.candidate}`,
    branch,
  });
  return { ...ended, fork: { branch, commit }, changed: [...changes.keys()].sort() };
}
