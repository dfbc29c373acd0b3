/**
 * The worker pool's shapes (sandbox/worker_pool.ts): what differs between kinds of worker,
 * the pool's options, statistics and results, and its interface.
 */
import type { BootImageStore } from "./sci_image_cache.ts";
import type { LayoutStore } from "./layout_cache.ts";
import type { CheckerCallOptions } from "../core/checker.ts";
import type { CheckerFunction, Faulted } from "./protocol.ts";
import type { WorkerEntries, WorkerKind } from "./worker_handle.ts";

/** What differs between the kinds of worker a pool can hold. */
export interface WorkerSpec {
  /** The checker file this kind runs, for messages: "checker.js" or "checker.clj". */
  file: string;
  /** The generator file this kind runs (`generate` calls): "generator.js" or "generator.clj". */
  generatorFile: string;
  /** What faults name as running: "the checker" or "checker.clj". */
  subject: string;
  /** The sandbox, as messages name it: "The sandbox" or "The Clojure sandbox". */
  sandboxName: string;
  /** Suffix of a timeout message, e.g. " (checker.clj)". */
  timeoutSuffix: string;
  /** The modules a worker runs, as a process and as a thread. */
  entries: WorkerEntries;
  /** What a worker loads at start, for the start-timeout message: "QuickJS", "SCI". */
  engineName: string;
  /** How long a worker may take to start. */
  startTimeoutMs: number;
  /** What starting a worker is expected to take before one was measured. */
  expectedStartMs: number;
  /** Calls sent to one worker ahead of its answers (1: one at a time). */
  pipeline: number;
  /** Smallest wasm memory cap a worker gets. */
  minMemoryBytes: number;
  /** QuickJS stack limit. */
  stackBytes: number;
  /**
   * Start a replacement as soon as the last worker died, before a call waits for it (a
   * checker.js worker starts in ~0.2 s; a Clojure worker costs seconds of CPU to boot, so
   * it starts only when a call needs it).
   */
  replaceAtOnce: boolean;
  /**
   * Process workers start on V8's baseline WebAssembly compiler only (no optimizing tier-up
   * of QuickJS: ~150 ms less CPU a worker, and small checkers' calls as fast), until calls
   * have run BASELINE_BUDGET_MS beyond BASELINE_CALL_MS each (the quickest of the latest
   * BASELINE_WINDOW): from then on workers start with tier-up (a long computation runs ~3x
   * faster) and the baseline ones are replaced.
   */
  baselineFirst?: boolean;
  /**
   * Where this kind's boot image is kept (Clojure workers: sandbox/sci_image_cache.ts), or
   * null (none kept, or nowhere to keep it). Asked at each worker's start.
   */
  bootImages?: () => BootImageStore | null;
}

export interface WorkerPoolOptions {
  /** Most workers alive at once; default 2. The pool starts with one (see above). */
  workers?: number;
  /** Hard cap of each worker's WebAssembly memory; default 256 MiB. */
  memoryBytes?: number;
  /** Time limit of a call without its own `timeoutMs`; default 20,000 ms. */
  defaultTimeoutMs?: number;
  /** How long past a call's deadline the host waits before killing the worker; 2,000 ms. */
  hangMarginMs?: number;
  /** QuickJS stack limit, overriding the kind's (tests raise it past the host's). */
  stackBytes?: number;
  /** "process" (the default where a deno executable can be started) or "thread". */
  workerKind?: WorkerKind;
  /**
   * The QuickJS memory layout given to each worker's init and kept from the first that
   * found it (sandbox/layout_cache.ts); checker.js workers only. Default: none given.
   */
  layouts?: LayoutStore;
}

export interface WorkerPoolStats {
  /** Workers started since the pool was created, replacements included. */
  workersStarted: number;
  /** Workers terminated because they hung, crashed, were poisoned or grew too large. */
  workersReplaced: number;
  /**
   * Workers stopped by the watchdog while still running a call. A process worker is killed;
   * a thread worker is not stopped by `terminate()` (denoland/deno#35657): its thread runs
   * on until the native operation that ignored the interrupt returns.
   */
  workersAbandoned: number;
  /** What the workers are: processes or threads. */
  workerKind: WorkerKind;
  /** Process ids of the live process workers. */
  workerPids: number[];
  /** Workers alive now (starting or ready). */
  workersAlive: number;
  /** Most workers alive at once so far. */
  workersPeak: number;
  callsQueued: number;
  /** Calls sent to workers. */
  calls: number;
  /** Calls that loaded their checker (the rest found it prepared). */
  checkersLoaded: number;
  /** Workers now start with V8's optimizing WebAssembly tier (see WorkerSpec.baselineFirst). */
  optimizing: boolean;
  /** Live workers on the baseline WebAssembly compiler only. */
  baselineWorkers: number;
  /** Deno permission states the last started worker reported about itself. */
  workerPermissions?: Record<string, string>;
  /** How long the last worker took to load its engine. */
  lastBootMs?: number;
  /** The last worker restored its kind's boot image instead of booting (Clojure workers). */
  lastBootRestored?: boolean;
}

/** What a call came to, with its console lines and its running time in the worker. */
export interface PoolResult<O> {
  outcome: O | Faulted;
  logs: string[];
  ms: number;
}

/** A pool of one kind of worker; see the module comment. */
export interface WorkerPool<O> {
  /** Runs `fn` of the checker `source` on `input` (sent as JSON text). Never rejects. */
  submit(
    fn: CheckerFunction,
    source: string,
    input: unknown,
    opts?: CheckerCallOptions,
  ): Promise<PoolResult<O>>;
  /**
   * Starts a worker now when none is alive, so that its start and engine load happen while
   * the caller prepares other work instead of under the first call. Does nothing when closed.
   */
  warm(): void;
  close(): void;
  stats(): WorkerPoolStats;
}

/**
 * Calls on a baseline worker whose BASELINE_WINDOW latest all ran longer than this count the
 * excess of the quickest of them (a call the machine's load paused is not a heavy checker)…
 */
export const BASELINE_CALL_MS = 2;
export const BASELINE_WINDOW = 8;
/** …and once the excess adds up to this (about what tier-up costs), workers optimize. */
export const BASELINE_BUDGET_MS = 100;
/**
 * One call this long is a heavy checker on its own (a machine's pauses are milliseconds):
 * workers optimize at once, so that a call near its time limit is not tried again on the
 * baseline, ~3x slower.
 */
export const BASELINE_LONG_CALL_MS = 250;

export const DEFAULT_WORKERS = 2;
export const DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024;
/** QuickJS stack limit of checker.js workers; deeper stacks overflow the host's and poison the instance. */
export const STACK_BYTES = 128 * 1024;
export const DEFAULT_TIMEOUT_MS = 20_000;
export const HANG_MARGIN_MS = 2_000;
