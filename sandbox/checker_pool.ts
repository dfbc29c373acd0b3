/**
 * The checker pool: warm QuickJS workers that run checker.js, one call per worker at a
 * time, each call from a fresh interpreter state: a worker loads each checker once, keeps a
 * snapshot of its wasm memory right after the load, and restores it before every call (see
 * sandbox/quickjs_call.ts). Calls are routed sticky by checker hash: a call goes to an idle
 * worker that already holds its checker when there is one.
 *
 * Workers are processes where a `deno` executable can be started (`deno run` with every
 * permission denied, JSON lines over stdin/stdout: sandbox/worker_handle.ts), else Deno
 * Workers with `permissions: "none"`. A worker that is poisoned (a wasm trap), grew its
 * memory past half its cap, or did not answer by its deadline plus a margin is killed and
 * replaced; the caller only sees the fault of its own call. Calls queue when every worker
 * is busy.
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
import type {
  CheckerCallOptions,
  CheckerFault,
  CheckerInput,
  CheckerRun,
  CheckerRunner,
  JudgeRequestsRun,
} from "../core/checker.ts";
import type {
  CallMessage,
  CallOutcome,
  CheckerFunction,
  HostMessage,
  WorkerMessage,
} from "./protocol.ts";
import { createHash } from "node:crypto";
import { readJudgeRequests, readVerdict } from "./verdict.ts";
import { clojureInput } from "../core/bundle/clojure_input.ts";
import { type ClojurePool, type ClojurePoolStats, createClojurePool } from "./clojure_pool.ts";
import {
  processWorkersAvailable,
  startWorker,
  type WorkerHandle,
  type WorkerKind,
} from "./worker_handle.ts";

export interface CheckerPoolOptions {
  /** Workers kept warm; default 2. */
  workers?: number;
  /** Hard cap of each worker's WebAssembly memory; default 256 MiB. */
  memoryBytes?: number;
  /** Time limit of a call without its own `timeoutMs`; default 20,000 ms. */
  defaultTimeoutMs?: number;
  /**
   * How long past a call's deadline the host waits for the worker before terminating it;
   * default 2,000 ms. The worker's own interrupt handler ends nearly every overrun first.
   */
  hangMarginMs?: number;
  /** "process" (the default where a deno executable can be started) or "thread". */
  workerKind?: WorkerKind;
}

export interface CheckerPoolStats {
  /** Workers started since the pool was created, replacements included. */
  workersStarted: number;
  /** Workers terminated because they hung, were poisoned or grew too large. */
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
  /** Workers alive now (starting, idle or busy). */
  workersAlive: number;
  callsQueued: number;
  /** Deno permission states the last started worker reported about itself. */
  workerPermissions?: Record<string, string>;
  /** The Clojure workers, once a checker.clj ran. */
  clojure?: ClojurePoolStats;
}

/** A CheckerRunner backed by Deno Workers; `stats()` tells how the workers fared. */
export interface CheckerPool extends CheckerRunner {
  stats(): CheckerPoolStats;
}

export const DEFAULT_WORKERS = 2;
export const DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 20_000;
/** QuickJS stack limit; deeper stacks overflow the host's and poison the instance. */
export const STACK_BYTES = 128 * 1024;
/** How long past a call's deadline the host waits before terminating the worker. */
export const HANG_MARGIN_MS = 2_000;
/**
 * Calls sent to one worker ahead of its answers: the next call waits in the worker's input
 * while it runs the current one, so no round trip is spent idle between calls.
 */
const PIPELINE = 2;
/** How long a new worker may take to load QuickJS. */
const START_TIMEOUT_MS = 30_000;

type Outcome = { outcome: CallOutcome; logs: string[]; ms: number };

interface Job {
  fn: CheckerFunction;
  key: string;
  source: string;
  input: string;
  timeoutMs: number;
  resolve: (o: Outcome) => void;
  startedAt?: number;
}

interface Slot {
  worker: WorkerHandle;
  state: "starting" | "ready";
  /** Checker hashes this worker was given: it holds them prepared (as far as its cache keeps). */
  keys: Set<string>;
  /** Calls sent, in order; the worker runs the first, the others wait in its input. */
  inflight: Job[];
  /** The watchdog of the first call in flight, or the start-up timer. */
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * Creates a pool of QuickJS workers implementing CheckerRunner. Workers start on demand
 * (the first call pays the worker start and QuickJS load, 0.1–0.5 s) and stay warm until
 * `close()`; a checker's first call on a worker also pays loading it.
 * Every call resolves to a value: a verdict, requests, or a fault with its reason.
 */
export function createCheckerPool(opts: CheckerPoolOptions = {}): CheckerPool {
  const size = Math.max(1, Math.floor(opts.workers ?? DEFAULT_WORKERS));
  const memoryBytes = Math.max(32 * 1024 * 1024, opts.memoryBytes ?? DEFAULT_MEMORY_BYTES);
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const hangMarginMs = opts.hangMarginMs ?? HANG_MARGIN_MS;
  const kind: WorkerKind = opts.workerKind ?? (processWorkersAvailable() ? "process" : "thread");
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let closed = false;
  let nextId = 1;
  const stats = { workersStarted: 0, workersReplaced: 0, workersAbandoned: 0 } as {
    workersStarted: number;
    workersReplaced: number;
    workersAbandoned: number;
    workerPermissions?: Record<string, string>;
  };

  function finish(job: Job, outcome: CallOutcome, logs: string[] = []): void {
    const ms = job.startedAt === undefined ? 0 : performance.now() - job.startedAt;
    job.resolve({ outcome, logs, ms });
  }

  function fault(fault: CheckerFault, message: string): CallOutcome {
    return { ok: false, fault, message };
  }

  function spawn(): void {
    const slot = { state: "starting", keys: new Set(), inflight: [] } as unknown as Slot;
    slot.worker = startWorker(kind, {
      message: (msg) => onMessage(slot, msg),
      crash: (why) => onCrash(slot, why),
    });
    slots.push(slot);
    stats.workersStarted++;
    slot.timer = setTimeout(
      () => failStart(slot, `QuickJS did not load within ${START_TIMEOUT_MS}ms`),
      START_TIMEOUT_MS,
    );
    const init: HostMessage = {
      type: "init",
      memoryBytes,
      stackBytes: STACK_BYTES,
    };
    slot.worker.send(init);
  }

  function remove(slot: Slot, replaced: boolean): void {
    clearTimeout(slot.timer);
    slot.worker.kill();
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    if (replaced) {
      stats.workersReplaced++;
      // Keep the pool warm: the replacement loads QuickJS while nobody waits for it.
      if (!closed && slots.length < size) spawn();
    }
  }

  function failStart(slot: Slot, why: string): void {
    remove(slot, false);
    // With no worker left that could take the queue, the queued calls fail now
    // instead of waiting for a sandbox that cannot start.
    if (slots.length === 0) {
      for (const job of queue.splice(0)) {
        finish(job, fault("crashed", `The sandbox could not start: ${why}`));
      }
    }
  }

  /**
   * Takes a worker out. Its first call in flight gets `headFault`; the calls behind it never
   * started and go back to the front of the queue.
   */
  function retire(slot: Slot, headFault: CallOutcome | undefined, replaced: boolean): void {
    const [head, ...waiting] = slot.inflight;
    slot.inflight = [];
    remove(slot, replaced);
    if (head && headFault) finish(head, headFault);
    queue.unshift(...waiting);
  }

  function onCrash(slot: Slot, why: string): void {
    if (!slots.includes(slot)) return;
    if (slot.state === "starting") return failStart(slot, why);
    retire(
      slot,
      fault("crashed", `The sandbox crashed while running the checker: ${why}`),
      true,
    );
    pump();
  }

  function onMessage(slot: Slot, msg: WorkerMessage): void {
    if (!slots.includes(slot)) return;
    if (msg.type === "ready") {
      clearTimeout(slot.timer);
      slot.state = "ready";
      stats.workerPermissions = msg.permissions;
      pump();
    } else if (msg.type === "init-failed") {
      failStart(slot, msg.message);
    } else if (msg.type === "result") {
      clearTimeout(slot.timer);
      const job = slot.inflight.shift();
      if (msg.poisoned || msg.recycle) {
        retire(slot, undefined, true);
      } else if (slot.inflight.length > 0) {
        watch(slot);
      }
      if (job) finish(job, msg.outcome, msg.logs);
      pump();
    }
  }

  function onHang(slot: Slot): void {
    const head = slot.inflight[0];
    stats.workersAbandoned++;
    retire(
      slot,
      head && fault("timeout", `The checker did not finish within ${head.timeoutMs}ms`),
      true,
    );
    pump();
  }

  /** Starts the watchdog of the slot's first call in flight, which starts running now. */
  function watch(slot: Slot): void {
    const head = slot.inflight[0];
    head.startedAt = performance.now();
    slot.timer = setTimeout(() => onHang(slot), head.timeoutMs + hangMarginMs);
  }

  function dispatch(slot: Slot, job: Job): void {
    slot.inflight.push(job);
    const msg: CallMessage = {
      type: "call",
      id: nextId++,
      fn: job.fn,
      key: job.key,
      source: job.source,
      input: job.input,
      timeoutMs: job.timeoutMs,
    };
    if (slot.inflight.length === 1) watch(slot);
    slot.keys.add(job.key);
    slot.worker.send(msg);
  }

  function pump(): void {
    if (closed) return;
    while (queue.length > 0) {
      const ready = slots.filter((s) => s.state === "ready");
      // An idle worker first; else one that can take a call behind its current one.
      let open = ready.filter((s) => s.inflight.length === 0);
      if (open.length === 0) open = ready.filter((s) => s.inflight.length < PIPELINE);
      if (open.length === 0) break;
      const job = queue.shift()!;
      // Sticky by checker hash: a worker that holds the checker skips loading it.
      dispatch(open.find((s) => s.keys.has(job.key)) ?? open[0], job);
    }
    const starting = slots.filter((s) => s.state === "starting").length;
    let wanted = Math.min(queue.length - starting, size - slots.length);
    while (wanted-- > 0) spawn();
  }

  function submit(
    fn: CheckerFunction,
    source: string,
    input: unknown,
    callOpts: CheckerCallOptions | undefined,
  ): Promise<Outcome> {
    return new Promise((resolve) => {
      const timeoutMs = validTimeout(callOpts?.timeoutMs) ?? defaultTimeoutMs;
      const job: Job = { fn, key: "", source, input: "", timeoutMs, resolve };
      if (closed) {
        return finish(job, fault("crashed", "The checker could not run: its pool is closed"));
      }
      if (typeof source !== "string") {
        return finish(job, fault("syntax", "checker.js could not be read: its source is not text"));
      }
      job.key = checkerKey(source);
      try {
        job.input = JSON.stringify(input) ?? "null";
      } catch (e) {
        return finish(
          job,
          fault(
            "crashed",
            `The checker input cannot be sent to the sandbox: ${
              e instanceof Error ? e.message : String(e)
            }`,
          ),
        );
      }
      queue.push(job);
      pump();
    });
  }

  // checker.clj runs in Clojure workers of its own (sandbox/), started on the
  // first Clojure call: an input carrying `clojure` EDN is a Clojure checker's.
  let clojure: ClojurePool | undefined;
  const clojurePool = () =>
    clojure ??= createClojurePool({
      workers: size,
      memoryBytes,
      defaultTimeoutMs,
      hangMarginMs,
      workerKind: kind,
    });

  return {
    async check(source, input: CheckerInput, callOpts): Promise<CheckerRun> {
      if (input.clojure !== undefined) {
        return await clojurePool().check(
          source,
          clojureInput(input, input.clojure, true),
          callOpts,
        );
      }
      const { outcome, logs, ms } = await submit("check", source, input, callOpts);
      const extra = logs.length > 0 ? { logs } : {};
      if (!outcome.ok) {
        return { ok: false, fault: outcome.fault, message: outcome.message, ms, ...extra };
      }
      const v = readVerdict(outcome.json);
      return v.ok
        ? { ok: true, verdict: v.value, ms, ...extra }
        : { ok: false, fault: "invalid-verdict", message: v.message, ms, ...extra };
    },
    async judgeRequests(source, input, callOpts): Promise<JudgeRequestsRun> {
      if (input.clojure !== undefined) {
        return await clojurePool().judgeRequests(
          source,
          clojureInput(input, input.clojure, false),
          callOpts,
        );
      }
      const { outcome, logs, ms } = await submit("judgeRequests", source, input, callOpts);
      const extra = logs.length > 0 ? { logs } : {};
      if (!outcome.ok) {
        return { ok: false, fault: outcome.fault, message: outcome.message, ms, ...extra };
      }
      const r = readJudgeRequests(outcome.json);
      return r.ok
        ? { ok: true, requests: r.value, ms, ...extra }
        : { ok: false, fault: "invalid-verdict", message: r.message, ms, ...extra };
    },
    close(): void {
      if (closed) return;
      closed = true;
      // Created if need be, so that later Clojure calls also find the pool closed.
      clojurePool().close();
      for (const slot of [...slots]) {
        const jobs = slot.inflight;
        remove(slot, false);
        for (const job of jobs) {
          finish(job, fault("crashed", "The checker was stopped: its pool was closed"));
        }
      }
      for (const job of queue.splice(0)) {
        finish(job, fault("crashed", "The checker could not run: its pool was closed"));
      }
    },
    stats(): CheckerPoolStats {
      return {
        workersStarted: stats.workersStarted,
        workersReplaced: stats.workersReplaced,
        workersAbandoned: stats.workersAbandoned,
        workerKind: kind,
        workerPids: slots.flatMap((s) => s.worker.pid === undefined ? [] : [s.worker.pid]),
        workersAlive: slots.length,
        callsQueued: queue.length,
        ...(stats.workerPermissions ? { workerPermissions: stats.workerPermissions } : {}),
        ...(clojure ? { clojure: clojure.stats() } : {}),
      };
    },
  };
}

const keys = new Map<string, string>();

/** The sha256 of a checker source, remembered for the last few sources seen. */
export function checkerKey(source: string): string {
  let key = keys.get(source);
  if (key === undefined) {
    key = createHash("sha256").update(source).digest("hex");
    if (keys.size >= 64) keys.delete(keys.keys().next().value!);
    keys.set(source, key);
  }
  return key;
}

function validTimeout(ms: number | undefined): number | undefined {
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? Math.ceil(ms) : undefined;
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
