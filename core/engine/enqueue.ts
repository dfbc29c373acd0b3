/**
 * Opens a prepared benchmark to workers (`dvergr benchmark … --store URL [--enqueue]`): the
 * bundle's files go into the store's blobs by content id (workers need no room or checkout),
 * the experiment is recorded with their manifest, and the queue gets what a worker needs to
 * plan the same experiment: candidate specs and the plan's options, never a key.
 */
import type { Home } from "../ports/home.ts";
import type { QueuedRequest } from "../ports/experiment_queue.ts";
import { DvergrError } from "../errors.ts";
import { putBundleFiles } from "./experiment_bundle.ts";
import type { Bundle } from "../bundle/types.ts";
import type { ExperimentPlan, PlanOptions } from "../bench/experiment.ts";
import type { CandidateSpec } from "../ports/candidate_kind.ts";
import type { ResourceLimits } from "../bench/resource_limits.ts";
import { sourcesOf, type WebPolicy } from "../web/policy.ts";

/** What of a benchmark request the queue carries (BenchmarkRequest has it all). */
export interface EnqueuedRequest extends PlanOptions {
  specs: CandidateSpec[];
  baseline?: string;
  stopWhenDecided?: { alpha?: number; delta?: number };
  limits?: ResourceLimits;
  mounts?: string[];
}

type QueuedSources = NonNullable<QueuedRequest["sources"]>;

/** The plan's options of a request, as the queue carries them. */
function planOptionsOf(req: EnqueuedRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keys = ["repetitions", "cases", "caseIds", "split", "seed", "params", "timeoutMs"];
  for (const k of [...keys, "budgetMicros"]) {
    const v = (req as unknown as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * Enqueues a prepared benchmark in the home's shared store; returns the blob id of the
 * bundle's file manifest (runBenchmark records it with the experiment too).
 */
export async function enqueueBenchmark(
  home: Home,
  prepared: { bundle: Bundle; plan: ExperimentPlan; room: string; webPolicy?: WebPolicy | null },
  req: EnqueuedRequest,
  clock: () => Date = () => new Date(),
): Promise<string> {
  if (!home.queue) {
    throw new DvergrError("USAGE", "Cannot enqueue an experiment on a home of one machine", {
      hint: "Give --store postgres://USER@HOST:PORT/DATABASE (or set DVERGR_STORE)",
    });
  }
  const { bundle, plan, room } = prepared;
  const files = await putBundleFiles(home.blobs, bundle.files);
  await home.state.putExperiment({
    id: plan.id,
    room,
    bundleName: bundle.name,
    bundleId: bundle.id,
    createdAt: clock().toISOString(),
    cells: plan.cells.length,
    definition: plan.definition as unknown as Record<string, unknown>,
    bundleFiles: files,
  });
  const request: QueuedRequest = {
    bundle: { name: bundle.name, files },
    room,
    specs: req.specs,
    plan: planOptionsOf(req),
    ...(req.baseline !== undefined ? { baseline: req.baseline } : {}),
    ...(req.stopWhenDecided ? { stopWhenDecided: req.stopWhenDecided } : {}),
    ...(req.limits ? { limits: req.limits as unknown as Record<string, unknown> } : {}),
    ...(req.mounts && req.mounts.length > 0 ? { mounts: req.mounts } : {}),
    ...(prepared.webPolicy ? { sources: sourcesOf(prepared.webPolicy) as QueuedSources } : {}),
  };
  await home.queue.enqueue(plan.id, request);
  return files;
}
