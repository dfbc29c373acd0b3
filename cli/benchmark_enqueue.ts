/**
 * `dvergr benchmark BUNDLE … --store URL --enqueue`: plans the experiment into the shared
 * store (the bundle's files by content id, the candidates and the plan's options) and prints
 * its id; `dvergr worker` on any machine runs its cells.
 */
import type { CliContext } from "./context.ts";
import { ENQUEUE_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { type BenchmarkRequest, prepareBenchmark } from "../core/engine/benchmark.ts";
import { enqueueBenchmark } from "../core/engine/enqueue.ts";

/** Enqueues the benchmark and closes its home; exit status 0. */
export async function enqueueOnly(
  ctx: CliContext,
  req: BenchmarkRequest,
  json: boolean,
): Promise<number> {
  const { home } = req;
  try {
    const prepared = await prepareBenchmark(req, { refuseUnloadable: true });
    await enqueueBenchmark(home, prepared, req);
    const { bundle, plan, room } = prepared;
    if (json) {
      printJson(ctx, ENQUEUE_FORMAT, {
        bundle: bundle.name,
        bundleId: bundle.id,
        experiment: plan.id,
        store: home.where,
        room,
        cells: plan.cells.length,
        enqueued: true,
      });
    } else {
      ctx.stdout(`Bundle ${bundle.name} ${bundle.id}\n`);
      ctx.stdout(`Experiment ${plan.id}: ${plan.cells.length} cells enqueued in ${home.where}\n`);
      ctx.stdout(
        `Run them: dvergr worker --store URL; see them: dvergr show ${
          plan.id.slice(0, 8)
        } --store URL\n`,
      );
    }
    return 0;
  } finally {
    await home.close();
  }
}
