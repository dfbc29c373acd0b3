/**
 * The Clojure checker pool: warm Clojure workers (sandbox/clojure_worker.ts), one
 * call per worker at a time. Each worker keeps the checkers it prepared, keyed by the
 * SHA-256 of checker.clj, so routing is sticky: a call goes to an idle worker that has
 * its checker prepared, else to the idle worker with the fewest prepared (which prepares
 * it once, ~0.1–0.3 s). Workers start on the first Clojure call (~0.4–2 s: QuickJS
 * compiles scittle) and stay warm until `close()`.
 *
 * Workers are processes where a `deno` executable can be started (`deno run` of
 * sandbox/clojure_process.ts with every permission denied, JSON lines over stdin/stdout),
 * else Deno Workers with `permissions: "none"` (sandbox/clojure_worker.ts), exactly as for
 * checker.js (sandbox/worker_handle.ts). A worker that is poisoned (a host stack overflow),
 * grew its memory past half its cap, or did not answer by its deadline plus a margin is
 * killed and replaced; the caller sees only the fault of its own call. A process is killed
 * at once; a busy thread cannot be stopped (denoland/deno#35657), though QuickJS's
 * interrupt handler ends every SCI loop first, since SCI is JavaScript bytecode.
 *
 * Permissions: starting a process worker needs --allow-run for the deno executable; without
 * it the pool uses thread workers.
 */
import type {
  CheckerCallOptions,
  CheckerFault,
  CheckerRun,
  JudgeRequestsRun,
} from "../core/checker.ts";
import type { Tagged } from "../core/edn/tagged.ts";
import type {
  ClojureCallMessage,
  ClojureHostMessage,
  ClojureWorkerMessage,
} from "./clojure_protocol.ts";
import type { ClojureFunction, ClojureOutcome } from "./sci_engine.ts";
import { readClojureJudgeRequests, readClojureVerdict } from "./clojure_verdict.ts";
import { sha256Hex } from "./scittle_source.ts";
import {
  processWorkersAvailable,
  startWorker,
  type WorkerEntries,
  type WorkerHandle,
  type WorkerKind,
} from "./worker_handle.ts";

const CLOJURE_ENTRIES: WorkerEntries = {
  process: new URL("./clojure_process.ts", import.meta.url),
  thread: new URL("./clojure_worker.ts", import.meta.url),
};

export interface ClojurePoolOptions {
  /** Workers kept warm once Clojure checkers run; default 2. */
  workers?: number;
  /** Hard cap of each worker's WebAssembly memory; default 256 MiB. */
  memoryBytes?: number;
  /** Time limit of a call without its own `timeoutMs`; default 20,000 ms. */
  defaultTimeoutMs?: number;
  /** How long past a call's deadline the host waits before terminating the worker. */
  hangMarginMs?: number;
  /** QuickJS stack limit; default CLOJURE_STACK_BYTES (tests raise it past the host's). */
  stackBytes?: number;
  /** "process" (the default where a deno executable can be started) or "thread". */
  workerKind?: WorkerKind;
}

export interface ClojurePoolStats {
  workersStarted: number;
  workersReplaced: number;
  workersAbandoned: number;
  workersAlive: number;
  /** What the workers are: processes or threads. */
  workerKind: WorkerKind;
  /** Process ids of the live process workers. */
  workerPids: number[];
  callsQueued: number;
  /** Calls that loaded their checker (the rest found it prepared). */
  checkersLoaded: number;
  calls: number;
  workerPermissions?: Record<string, string>;
  /** How long the last worker took to boot SCI. */
  lastBootMs?: number;
}

/** Runs checker.clj sources; created by the checker pool on the first Clojure call. */
export interface ClojurePool {
  check(source: string, input: Tagged, opts?: CheckerCallOptions): Promise<CheckerRun>;
  /** `judge-requests` (its input has no `:judgements`); no such function: no requests. */
  judgeRequests(
    source: string,
    input: Tagged,
    opts?: CheckerCallOptions,
  ): Promise<JudgeRequestsRun>;
  close(): void;
  stats(): ClojurePoolStats;
}

const DEFAULT_WORKERS = 2;
const DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 20_000;
/**
 * QuickJS stack for SCI: ≈100–250 nested Clojure calls, and the most that stays inside
 * the Worker's own V8 stack (deeper, the host overflows first and the worker is replaced).
 */
export const CLOJURE_STACK_BYTES = 256 * 1024;
const HANG_MARGIN_MS = 2_000;
/** Booting SCI compiles ~1 MB of JavaScript in QuickJS: slow on a loaded machine. */
const START_TIMEOUT_MS = 120_000;

type Outcome = { outcome: ClojureOutcome; logs: string[]; ms: number };

interface Job {
  fn: ClojureFunction;
  key: string;
  source: string;
  input: string;
  timeoutMs: number;
  resolve: (o: Outcome) => void;
  startedAt?: number;
}

interface Slot {
  worker: WorkerHandle<ClojureHostMessage>;
  state: "starting" | "idle" | "busy";
  job?: Job;
  timer?: ReturnType<typeof setTimeout>;
  /** Checker keys this worker prepared (it may have evicted some since). */
  prepared: Set<string>;
}

/** Creates a pool of Clojure workers; every call resolves to a value, never throws. */
export function createClojurePool(opts: ClojurePoolOptions = {}): ClojurePool {
  const size = Math.max(1, Math.floor(opts.workers ?? DEFAULT_WORKERS));
  const memoryBytes = Math.max(64 * 1024 * 1024, opts.memoryBytes ?? DEFAULT_MEMORY_BYTES);
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const hangMarginMs = opts.hangMarginMs ?? HANG_MARGIN_MS;
  const kind: WorkerKind = opts.workerKind ?? (processWorkersAvailable() ? "process" : "thread");
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let closed = false;
  let nextId = 1;
  const counts = {
    workersStarted: 0,
    workersReplaced: 0,
    workersAbandoned: 0,
    checkersLoaded: 0,
    calls: 0,
  };
  let workerPermissions: Record<string, string> | undefined;
  let lastBootMs: number | undefined;

  function finish(job: Job, outcome: ClojureOutcome, logs: string[] = []): void {
    const ms = job.startedAt === undefined ? 0 : performance.now() - job.startedAt;
    job.resolve({ outcome, logs, ms });
  }

  function fault(fault: CheckerFault, message: string): ClojureOutcome {
    return { ok: false, fault, message };
  }

  function spawn(): void {
    const slot = { state: "starting", prepared: new Set() } as Partial<Slot> as Slot;
    slot.worker = startWorker<ClojureHostMessage, ClojureWorkerMessage>(kind, {
      message: (m) => onMessage(slot, m),
      crash: (why) => onCrash(slot, why),
    }, CLOJURE_ENTRIES);
    slots.push(slot);
    counts.workersStarted++;
    slot.timer = setTimeout(
      () => failStart(slot, `SCI did not load within ${START_TIMEOUT_MS}ms`),
      START_TIMEOUT_MS,
    );
    const init: ClojureHostMessage = {
      type: "init",
      memoryBytes,
      stackBytes: opts.stackBytes ?? CLOJURE_STACK_BYTES,
    };
    slot.worker.send(init);
  }

  function remove(slot: Slot, replaced: boolean): void {
    clearTimeout(slot.timer);
    slot.worker.kill();
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    if (replaced) {
      counts.workersReplaced++;
      // Replace only when calls wait: an idle Clojure worker costs ~60 MiB.
      pump();
    }
  }

  function failStart(slot: Slot, why: string): void {
    remove(slot, false);
    if (slots.length === 0) {
      for (const job of queue.splice(0)) {
        finish(job, fault("crashed", `The Clojure sandbox could not start: ${why}`));
      }
    }
  }

  function onCrash(slot: Slot, why: string): void {
    if (!slots.includes(slot)) return;
    if (slot.state === "starting") return failStart(slot, why);
    const job = slot.job;
    slot.job = undefined;
    remove(slot, true);
    if (job) {
      finish(job, fault("crashed", `The sandbox crashed while running checker.clj: ${why}`));
    }
    pump();
  }

  function onMessage(slot: Slot, msg: ClojureWorkerMessage): void {
    if (!slots.includes(slot)) return;
    if (msg.type === "ready") {
      clearTimeout(slot.timer);
      slot.state = "idle";
      workerPermissions = msg.permissions;
      lastBootMs = msg.bootMs;
      pump();
    } else if (msg.type === "init-failed") {
      failStart(slot, msg.message);
    } else if (msg.type === "result") {
      const job = slot.job;
      clearTimeout(slot.timer);
      slot.job = undefined;
      slot.state = "idle";
      if (job) {
        slot.prepared.add(job.key);
        if (msg.loaded) counts.checkersLoaded++;
      }
      if (msg.poisoned || msg.recycle) remove(slot, true);
      if (job) finish(job, msg.outcome, msg.logs);
      pump();
    }
  }

  function onHang(slot: Slot): void {
    const job = slot.job;
    slot.job = undefined;
    counts.workersAbandoned++;
    remove(slot, true);
    if (job) {
      finish(
        job,
        fault("timeout", `The checker did not finish within ${job.timeoutMs}ms (checker.clj)`),
      );
    }
    pump();
  }

  function dispatch(slot: Slot, job: Job): void {
    slot.state = "busy";
    slot.job = job;
    job.startedAt = performance.now();
    counts.calls++;
    const msg: ClojureCallMessage = {
      type: "call",
      id: nextId++,
      fn: job.fn,
      key: job.key,
      source: job.source,
      input: job.input,
      timeoutMs: job.timeoutMs,
    };
    slot.timer = setTimeout(() => onHang(slot), job.timeoutMs + hangMarginMs);
    slot.worker.send(msg);
  }

  /** The queued job this idle slot should take: the first it has prepared, else the first. */
  function pick(slot: Slot): number {
    const sticky = queue.findIndex((j) => slot.prepared.has(j.key));
    if (sticky >= 0) return sticky;
    // Leave a job to an idle worker that has its checker prepared.
    const idle = slots.filter((s) => s !== slot && s.state === "idle");
    return queue.findIndex((j) => !idle.some((s) => s.prepared.has(j.key)));
  }

  function pump(): void {
    if (closed) return;
    for (const slot of [...slots].sort((a, b) => a.prepared.size - b.prepared.size)) {
      if (queue.length === 0) return;
      if (slot.state !== "idle") continue;
      const i = pick(slot);
      if (i >= 0) dispatch(slot, queue.splice(i, 1)[0]);
    }
    const starting = slots.filter((s) => s.state === "starting").length;
    let wanted = Math.min(queue.length - starting, size - slots.length);
    while (wanted-- > 0) spawn();
  }

  async function submit(
    fn: ClojureFunction,
    source: string,
    input: Tagged,
    callOpts: CheckerCallOptions | undefined,
  ): Promise<Outcome> {
    const timeoutMs = validTimeout(callOpts?.timeoutMs) ?? defaultTimeoutMs;
    const job: Job = { fn, key: "", source, input: "", timeoutMs, resolve: () => {} };
    const done = new Promise<Outcome>((resolve) => (job.resolve = resolve));
    if (closed) {
      finish(job, fault("crashed", "The checker could not run: its pool is closed"));
      return done;
    }
    if (typeof source !== "string") {
      finish(job, fault("syntax", "checker.clj could not be read: its source is not text"));
      return done;
    }
    try {
      job.input = JSON.stringify(input);
    } catch (e) {
      finish(
        job,
        fault(
          "crashed",
          `The checker input cannot be sent to the sandbox: ${
            e instanceof Error ? e.message : String(e)
          }`,
        ),
      );
      return done;
    }
    job.key = await sha256Hex(source);
    queue.push(job);
    pump();
    return done;
  }

  return {
    async check(source, input, callOpts): Promise<CheckerRun> {
      const { outcome, logs, ms } = await submit("check", source, input, callOpts);
      const extra = logs.length > 0 ? { logs } : {};
      if (!outcome.ok) {
        return { ok: false, fault: outcome.fault, message: outcome.message, ms, ...extra };
      }
      const v = readClojureVerdict(outcome.edn);
      return v.ok
        ? { ok: true, verdict: v.value, ms, ...extra }
        : { ok: false, fault: "invalid-verdict", message: v.message, ms, ...extra };
    },
    async judgeRequests(source, input, callOpts): Promise<JudgeRequestsRun> {
      const { outcome, logs, ms } = await submit("judgeRequests", source, input, callOpts);
      const extra = logs.length > 0 ? { logs } : {};
      if (!outcome.ok) {
        return { ok: false, fault: outcome.fault, message: outcome.message, ms, ...extra };
      }
      const r = readClojureJudgeRequests(outcome.edn);
      return r.ok
        ? { ok: true, requests: r.value, ms, ...extra }
        : { ok: false, fault: "invalid-verdict", message: r.message, ms, ...extra };
    },
    close(): void {
      if (closed) return;
      closed = true;
      for (const slot of [...slots]) {
        const job = slot.job;
        remove(slot, false);
        if (job) finish(job, fault("crashed", "The checker was stopped: its pool was closed"));
      }
      for (const job of queue.splice(0)) {
        finish(job, fault("crashed", "The checker could not run: its pool was closed"));
      }
    },
    stats(): ClojurePoolStats {
      return {
        ...counts,
        workersAlive: slots.length,
        workerKind: kind,
        workerPids: slots.flatMap((s) => (s.worker.pid === undefined ? [] : [s.worker.pid])),
        callsQueued: queue.length,
        ...(workerPermissions ? { workerPermissions } : {}),
        ...(lastBootMs !== undefined ? { lastBootMs } : {}),
      };
    },
  };
}

function validTimeout(ms: number | undefined): number | undefined {
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? Math.ceil(ms) : undefined;
}
