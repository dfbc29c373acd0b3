/**
 * The checker pool: the CheckerRunner of the sandbox. checker.js runs in a worker pool
 * (sandbox/worker_pool.ts: sticky routing by checker hash, size on demand, watchdog,
 * replacement) of QuickJS workers, each call from a fresh interpreter state: a worker loads
 * each checker once, keeps a snapshot of its wasm memory right after the load, and restores
 * it before every call (sandbox/quickjs_call.ts). checker.clj goes to a second pool of the
 * same kind with Clojure workers (sandbox/clojure_pool.ts), started on the first Clojure call.
 *
 * Inside the sandbox a checker has the ECMAScript built-ins of QuickJS, `console` (kept,
 * bounded, returned as `logs`), `edn.parse`, a fixed-seed `Math.random` and QuickJS's own
 * `Date` (the real clock). It has no `Deno`, `fetch`, timers, module loader or host
 * object, and its worker has no Deno permission at all.
 *
 * Time is enforced inside the worker (QuickJS's interrupt handler, with the native loops
 * that ignore it bounded by sandbox/loop_guard.ts; the EDN bridge keeps the deadline
 * itself) and by a host-side watchdog for the rest: a loop whose every iteration is one slow
 * native call (`s.indexOf` on a 40 MB string) polls the interrupt handler too rarely. A
 * process worker is killed at the watchdog's deadline, so its CPU is free when the caller
 * gets the timeout. A thread worker cannot be stopped while busy (denoland/deno#35657): the
 * caller gets its timeout and a fresh worker, but the old thread runs on until the native
 * call returns (`stats().workersAbandoned` counts these).
 *
 * Permissions: starting a process worker needs --allow-run for the deno executable; without
 * it the pool uses thread workers.
 */
import type { CheckerInput, CheckerRunner } from "../core/checker.ts";
import type { CallOutcome } from "./protocol.ts";
import { readGenerated, readJudgeRequests, readVerdict } from "./verdict.ts";
import { clojureGenerateInput, clojureInput } from "../core/bundle/clojure_input.ts";
import type { createClojurePool } from "./clojure_pool.ts";
import { toCheckerRun, toGeneratorRun, toJudgeRequestsRun } from "./checker_runs.ts";
import { STACK_BYTES } from "./pool_types.ts";
import { CHECKER_THREAD_ENTRY } from "./early_thread.ts";
import { CHECKER_PROCESS_ENTRY } from "./worker_process.ts";
import { layoutFile, type LayoutStore, layoutStore } from "./layout_cache.ts";
import { imageDir, quickjsImageStore } from "./quickjs_image_cache.ts";
import type { BootImageStore } from "./sci_image_cache.ts";
import {
  createWorkerPool,
  type WorkerPoolOptions,
  type WorkerPoolStats,
  type WorkerSpec,
} from "./worker_pool.ts";

export interface CheckerPoolOptions extends WorkerPoolOptions {
  /**
   * Where checker.js workers' boot image is kept (sandbox/quickjs_image_cache.ts): each
   * worker is given it, and the first that runs the prelude keeps its own there. Default:
   * none (every worker runs the prelude).
   */
  images?: BootImageStore | null;
}

export interface CheckerPoolStats extends WorkerPoolStats {
  /** The Clojure workers, once a checker.clj ran. */
  clojure?: WorkerPoolStats;
}

/** A CheckerRunner backed by sandbox workers; `stats()` tells how the workers fared. */
export interface CheckerPool extends CheckerRunner {
  /**
   * Starts a worker for the bundle's checker file before the first call (a checker.js
   * worker loads QuickJS in 0.1–0.5 s, a checker.clj worker boots SCI in 0.5–3 s).
   */
  warm(file: "checker.js" | "checker.clj"): void;
  stats(): CheckerPoolStats;
}

export { STACK_BYTES };

/** checker.js workers: what differs from Clojure workers. */
export const CHECKER_WORKERS: WorkerSpec = {
  file: "checker.js",
  generatorFile: "generator.js",
  subject: "the checker",
  sandboxName: "The sandbox",
  timeoutSuffix: "",
  entries: {
    process: CHECKER_PROCESS_ENTRY,
    thread: CHECKER_THREAD_ENTRY,
  },
  engineName: "QuickJS",
  startTimeoutMs: 30_000,
  expectedStartMs: 200,
  // Calls wait in the worker's input while it runs the current one, so no round trip is
  // spent idle between calls; four, so that a `--parallel 4` run's calls all reach the
  // worker (fewer wake-ups of it, and calls sent in one turn share a write).
  pipeline: 4,
  minMemoryBytes: 32 * 1024 * 1024,
  stackBytes: STACK_BYTES,
  replaceAtOnce: true,
  // A 1,000-call run of a small checker: ~150 ms less CPU, as fast a call; a long
  // computation (a 200,000-step loop) ~3x slower until tier-up is earned.
  baselineFirst: true,
};

/**
 * Creates the sandbox's CheckerRunner. Workers start on demand (the first call pays the
 * worker start and QuickJS load, 0.1–0.5 s; `workers` is the most alive at once) and stay
 * warm until `close()`; a checker's first call on a worker also pays loading it.
 * Every call resolves to a value: a verdict, requests, or a fault with its reason.
 */
export function createCheckerPool(opts: CheckerPoolOptions = {}): CheckerPool {
  const { images } = opts;
  const js = createWorkerPool<CallOutcome>(
    images ? { ...CHECKER_WORKERS, bootImages: () => images } : CHECKER_WORKERS,
    opts,
  );
  // checker.clj runs in Clojure workers of its own, started on the first Clojure call: an
  // input carrying `clojure` EDN is a Clojure checker's. Their module is loaded then too:
  // its boot image cache imports node:crypto, whose first import costs a checker.js
  // command ~15-20 ms of its start.
  let clojure: ReturnType<typeof createClojurePool> | undefined;
  let made: Promise<ReturnType<typeof createClojurePool>> | undefined;
  let closed = false;
  const clojurePool = () =>
    made ??= import("./clojure_pool.ts").then((m) => {
      clojure = m.createClojurePool({ ...opts, stackBytes: undefined, layouts: undefined });
      // Closed before it was made: later Clojure calls find it closed.
      if (closed) clojure.close();
      return clojure;
    });

  return {
    async check(source, input: CheckerInput, callOpts) {
      if (input.clojure !== undefined) {
        return await (await clojurePool()).check(
          source,
          clojureInput(input, input.clojure, true),
          callOpts,
        );
      }
      const r = await js.submit("check", source, input, callOpts);
      return toCheckerRun(r, (o) => readVerdict(o.json));
    },
    async judgeRequests(source, input, callOpts) {
      if (input.clojure !== undefined) {
        return await (await clojurePool()).judgeRequests(
          source,
          clojureInput(input, input.clojure, false),
          callOpts,
        );
      }
      const r = await js.submit("judgeRequests", source, input, callOpts);
      return toJudgeRequestsRun(r, (o) => readJudgeRequests(o.json));
    },
    async generate(source, request, callOpts) {
      const { clojure, ...plain } = request;
      if (callOpts?.file === "generator.clj") {
        return await (await clojurePool()).generate(
          source,
          clojureGenerateInput(plain, clojure),
          callOpts,
        );
      }
      const r = await js.submit("generate", source, plain, callOpts);
      return toGeneratorRun(r, (o) => readGenerated(o.json));
    },
    warm(file) {
      if (file === "checker.clj") void clojurePool().then((p) => p.warm());
      else js.warm();
    },
    close(): void {
      js.close();
      // Made closed if need be, so that later Clojure calls also find the pool closed.
      closed = true;
      clojure?.close();
    },
    stats(): CheckerPoolStats {
      return { ...js.stats(), ...(clojure ? { clojure: clojure.stats() } : {}) };
    },
  };
}

/**
 * The pool of a command that asks for a few verdicts and exits (`dvergr check`, `dvergr
 * calibrate`): thread workers (Deno Workers with no permission at all) in this process, not
 * worker processes. A thread starts no `deno` (~60–90 MiB and a process start less), runs the
 * same QuickJS sandbox with the same time and memory limits and gives the same verdicts. What
 * a thread cannot do, be stopped inside one long native call (denoland/deno#35657), ends
 * with the command: its caller still gets the timeout at the deadline and a fresh worker,
 * and the abandoned thread goes when the process exits at the command's end (main.ts).
 */
export function commandCheckerPool(): CheckerPool {
  const early = prestarted;
  prestarted = undefined;
  return early ?? createCheckerPool(commandPoolOptions());
}

let prestarted: CheckerPool | undefined;

/**
 * A command's pool: two thread workers, given the QuickJS memory layout and boot image kept
 * in the cache directory, which the first worker that makes them keeps there.
 */
function commandPoolOptions(): CheckerPoolOptions {
  return { workers: 2, workerKind: "thread", layouts: keptLayouts(), images: keptImages() };
}

/** The environment, or nothing without --allow-env (then nothing is kept). */
function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The QuickJS memory layout kept in the cache directory (sandbox/layout_cache.ts): a worker
 * given it skips finding it (~30 ms of its start); the first that finds it keeps it there.
 */
export function keptLayouts(): LayoutStore {
  return layoutStore(layoutFile(env));
}

/**
 * The checker.js boot image kept in the cache directory (sandbox/quickjs_image_cache.ts): a
 * worker given it restores it instead of running the prelude; the first that runs the
 * prelude keeps its own there.
 */
export function keptImages(): BootImageStore | null {
  return quickjsImageStore(imageDir(env));
}

/**
 * Starts the pool the next commandCheckerPool() returns, its first worker loading QuickJS
 * for `file` (or SCI), so that the sandbox starts while the command's modules load. Returns
 * what closes it when no command took it (the command failed before it needed a checker).
 */
export function prestartCommandPool(file: "checker.js" | "checker.clj"): () => void {
  const pool = createCheckerPool(commandPoolOptions());
  pool.warm(file);
  prestarted?.close();
  prestarted = pool;
  return () => {
    if (prestarted === pool) {
      prestarted = undefined;
      pool.close();
    }
  };
}

let shared: CheckerPool | undefined;

/**
 * The process-wide pool for the CLI, created on first use with the default options.
 * Its workers keep the process alive until `close()` (or `Deno.exit`, as main.ts does);
 * after `close()` the next call creates a new pool.
 */
export function sharedCheckerPool(): CheckerPool {
  if (!shared) {
    const pool = createCheckerPool();
    const wrapper: CheckerPool = {
      ...pool,
      close() {
        pool.close();
        if (shared === wrapper) shared = undefined;
      },
    };
    shared = wrapper;
  }
  return shared;
}
