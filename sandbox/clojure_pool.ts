/**
 * The Clojure checker pool: a worker pool (sandbox/worker_pool.ts) of Clojure workers, SCI
 * booted in QuickJS (sandbox/clojure_process.ts, sandbox/clojure_worker.ts,
 * sandbox/sci_engine.ts). Routing is sticky by the SHA-256 of checker.clj: a worker prepares
 * a checker once (~0.1–0.3 s) and keeps its snapshot. Workers start on the first Clojure
 * call (~0.4–3 s: QuickJS compiles scittle) and stay until `close()`; a dead one is
 * replaced only when a call needs it (an idle Clojure worker costs ~60–110 MiB).
 *
 * Permissions: as sandbox/worker_pool.ts.
 */
import type {
  CheckerCallOptions,
  CheckerRun,
  GeneratorRun,
  JudgeRequestsRun,
} from "../core/checker.ts";
import type { Tagged } from "../core/edn/tagged.ts";
import type { ClojureOutcome } from "./sci_engine.ts";
import {
  readClojureJudgeRequests,
  readClojureVerdict,
  readClojureWorld,
} from "./clojure_verdict.ts";
import { sciImageStore } from "./sci_image_cache.ts";
import { toCheckerRun, toGeneratorRun, toJudgeRequestsRun } from "./checker_runs.ts";
import {
  createWorkerPool,
  type WorkerPoolOptions,
  type WorkerPoolStats,
  type WorkerSpec,
} from "./worker_pool.ts";

/**
 * QuickJS stack for SCI: ≈100–250 nested Clojure calls, and the most that stays inside
 * the Worker's own V8 stack (deeper, the host overflows first and the worker is replaced).
 */
export const CLOJURE_STACK_BYTES = 256 * 1024;

/** Clojure workers: what differs from checker.js workers. */
export const CLOJURE_WORKERS: WorkerSpec = {
  file: "checker.clj",
  generatorFile: "generator.clj",
  subject: "checker.clj",
  sandboxName: "The Clojure sandbox",
  timeoutSuffix: " (checker.clj)",
  entries: {
    process: new URL("./clojure_process.ts", import.meta.url),
    thread: new URL("./clojure_worker.ts", import.meta.url),
  },
  engineName: "SCI",
  // Booting SCI compiles ~1 MB of JavaScript in QuickJS: slow on a loaded machine.
  startTimeoutMs: 120_000,
  expectedStartMs: 2_000,
  pipeline: 1,
  minMemoryBytes: 64 * 1024 * 1024,
  stackBytes: CLOJURE_STACK_BYTES,
  replaceAtOnce: false,
  bootImages: () => sciImageStore(),
};

export interface ClojurePoolOptions extends WorkerPoolOptions {
  /**
   * Where boot and checker images are kept (sandbox/sci_image_cache.ts); null keeps none.
   * Default: the user's cache directory, from the environment.
   */
  imageDir?: string | null;
}
export type ClojurePoolStats = WorkerPoolStats;

/** Runs checker.clj sources; created by the checker pool on the first Clojure call. */
export interface ClojurePool {
  check(source: string, input: Tagged, opts?: CheckerCallOptions): Promise<CheckerRun>;
  /** `judge-requests` (its input has no `:judgements`); no such function: no requests. */
  judgeRequests(
    source: string,
    input: Tagged,
    opts?: CheckerCallOptions,
  ): Promise<JudgeRequestsRun>;
  /** generator.clj's `generate` on `{:seed :split :index :params}`. */
  generate(source: string, input: Tagged, opts?: CheckerCallOptions): Promise<GeneratorRun>;
  /** Starts a Clojure worker (SCI boots in it: 0.5–3 s) before the first call needs it. */
  warm(): void;
  close(): void;
  stats(): ClojurePoolStats;
}

/** Creates a pool of Clojure workers; every call resolves to a value, never throws. */
export function createClojurePool(opts: ClojurePoolOptions = {}): ClojurePool {
  const spec = opts.imageDir === undefined
    ? CLOJURE_WORKERS
    : { ...CLOJURE_WORKERS, bootImages: () => sciImageStore(opts.imageDir ?? null) };
  const pool = createWorkerPool<ClojureOutcome>(spec, opts);
  return {
    async check(source, input, callOpts) {
      const r = await pool.submit("check", source, input, callOpts);
      return toCheckerRun(r, (o) => readClojureVerdict(o.edn));
    },
    async judgeRequests(source, input, callOpts) {
      const r = await pool.submit("judgeRequests", source, input, callOpts);
      return toJudgeRequestsRun(r, (o) => readClojureJudgeRequests(o.edn));
    },
    async generate(source, input, callOpts) {
      const r = await pool.submit("generate", source, input, callOpts);
      return toGeneratorRun(r, (o) => readClojureWorld(o.edn));
    },
    warm: () => pool.warm(),
    close: () => pool.close(),
    stats: () => pool.stats(),
  };
}
