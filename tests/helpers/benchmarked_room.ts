/** A memory home whose room "books" ran one benchmark of the recall bundle (inline, via ops). */
import { memoryHome } from "../../adapters/store/memory/home.ts";
import { callOp } from "../../core/ops/registry.ts";
import { catalogBenchmark } from "../../core/ops/catalog_run.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { testOpContext } from "./op_context.ts";
import { recallBundle } from "./bundles.ts";

/** noop and reference × `repetitions`; `rooms` are created empty beside "books". */
export async function benchmarkedRoom(opts: { repetitions: number; rooms?: string[] }) {
  const home = await memoryHome();
  const pool = createCheckerPool({ workers: 1 });
  await home.rooms.createRoom("books");
  for (const r of opts.rooms ?? []) await home.rooms.createRoom(r);
  const files = new Map<string, string | null>();
  for (const [p, t] of recallBundle()) files.set(`workflows/recall/${p}`, t);
  await home.rooms.writeFiles("books", files, "Recall bundle");
  const ctx = testOpContext(home, pool);
  const run = await callOp(catalogBenchmark, ctx, {
    room: "books",
    name: "recall",
    candidates: ["builtin:noop", "builtin:reference"],
    repetitions: opts.repetitions,
  }) as { experiment: string };
  return {
    ctx,
    experiment: run.experiment,
    async close() {
      pool.close();
      await home.close();
    },
  };
}
