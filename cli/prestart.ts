/**
 * The sandbox of a command that grades (`dvergr calibrate`, `dvergr check --answer`) started
 * before the command's modules load: the first argument that is a bundle directory says which
 * checker it has, and a pool of thread workers (sandbox/checker_pool.ts
 * prestartCommandPool) loads QuickJS while this thread loads the command, reads the bundle
 * and parses it. A ROOM/NAME bundle, or none, starts nothing (the command starts its pool
 * when it needs it).
 *
 * `dvergr benchmark` starts its checker pool of worker processes the same way
 * (prestartBenchmarkPool): the first worker process (started by cli/early_start.ts, else
 * here) boots Deno and loads QuickJS while the command's modules load and the bundle is
 * read, parsed and installed in its room, instead of from the moment the home is open.
 */
import { join } from "../core/path.ts";
import type { CheckerPool, CheckerPoolOptions } from "../sandbox/checker_pool.ts";
import { importLater } from "./import_later.ts";
import { prepareSandboxIdentity } from "../sandbox/load_cache.ts";

/**
 * Which checker file the directory `dir` holds, or null when it is not a bundle's. Stat'ed
 * synchronously: an async stat costs a thread hop and an event loop turn (~0.2 ms) on the
 * way to the pool, before the command's modules load.
 */
function checkerFileOf(dir: string): "checker.js" | "checker.clj" | null {
  for (const file of ["checker.js", "checker.clj"] as const) {
    try {
      if (Deno.statSync(join(dir, file)).isFile) return file;
    } catch {
      // Not there (or not readable): the command says so in its own words.
    }
  }
  return null;
}

/**
 * Starts the sandbox for the first bundle directory among `args`; resolves to what closes it
 * when the command did not take it (call it once the command has returned).
 */
export async function prestartSandbox(args: string[]): Promise<() => void> {
  for (const arg of args) {
    if (arg.startsWith("-")) continue;
    const file = checkerFileOf(arg);
    if (file === null) continue;
    const { prestartCommandPool } = await importLater<typeof import("../sandbox/checker_pool.ts")>(
      "../sandbox/checker_pool.ts",
      import.meta.url,
    );
    // The pool names its kept layout by the sandbox's identity: hashed off this thread since
    // cli/early_start.ts started the worker, done by now (not hashed again here).
    await prepareSandboxIdentity();
    return prestartCommandPool(file);
  }
  return () => {};
}

/** Checker workers of a benchmark run at once (the pool grows to this on demand). */
export const BENCHMARK_WORKERS = 2;

/**
 * The options of a benchmark run's checker pool: BENCHMARK_WORKERS process workers, given
 * the QuickJS memory layout kept in the cache directory as `check` and `calibrate` give
 * theirs (a worker then skips finding it, ~30 ms of its start), and with `keptImages` the
 * boot and checker images kept there (sandbox/quickjs_image_cache.ts: a worker restores the
 * prelude's state, and a checker loaded before, instead of running them).
 */
export function benchmarkPoolOptions(
  pools:
    & Pick<typeof import("../sandbox/checker_pool.ts"), "keptLayouts">
    & Partial<Pick<typeof import("../sandbox/checker_pool.ts"), "keptImages">>,
): CheckerPoolOptions {
  return {
    workers: BENCHMARK_WORKERS,
    layouts: pools.keptLayouts(),
    ...(pools.keptImages ? { images: pools.keptImages() } : {}),
  };
}

let benchmarkPool: CheckerPool | undefined;

/**
 * Starts the checker pool of `dvergr benchmark` (process workers, as the run's) for the first
 * bundle directory among `args`; resolves to what closes it when the run did not take it.
 */
export async function prestartBenchmarkPool(args: string[]): Promise<() => void> {
  // --check calibrates with a pool of its own; --enqueue runs no cell here.
  if (args.includes("--check") || args.includes("--enqueue")) return () => {};
  for (const arg of args) {
    if (arg.startsWith("-")) continue;
    const file = checkerFileOf(arg);
    if (file === null) continue;
    const pools = await importLater<typeof import("../sandbox/checker_pool.ts")>(
      "../sandbox/checker_pool.ts",
      import.meta.url,
    );
    const pool = pools.createCheckerPool(benchmarkPoolOptions(pools));
    pool.warm(file);
    benchmarkPool?.close();
    benchmarkPool = pool;
    return () => {
      if (benchmarkPool === pool) {
        benchmarkPool = undefined;
        pool.close();
      }
    };
  }
  return () => {};
}

/** The pool prestartBenchmarkPool started, taken (the caller closes it), or undefined. */
export function takeBenchmarkPool(): CheckerPool | undefined {
  const pool = benchmarkPool;
  benchmarkPool = undefined;
  return pool;
}
