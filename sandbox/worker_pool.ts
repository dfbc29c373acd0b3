/**
 * A pool of sandbox workers of one kind (checker.js or checker.clj: sandbox/worker_kinds.ts
 * says what differs), one call per worker at a time, each call from a fresh interpreter
 * state inside the worker.
 *
 * - Sticky routing: a worker keeps each checker it loaded prepared (keyed by the checker's
 *   SHA-256), so a call goes to a free worker that holds its checker when there is one,
 *   else to the free worker holding the fewest.
 * - Size on demand: the pool starts one worker on the first call and adds one (up to its
 *   maximum, one start at a time) only when the calls waiting would take longer than twice
 *   what starting a worker takes: a burst of quick verdicts stays on one worker (~3,000
 *   verdicts/s), slow checkers get parallel workers. Each worker process costs ~60–90 MiB.
 * - Watchdog: a call that has not answered by its deadline plus a margin has its worker
 *   killed (a process is SIGKILLed, so its CPU is free at once) and gets a timeout fault.
 * - Replacement: a worker that crashed, hung, is poisoned (a wasm trap, a host stack
 *   overflow) or grew its memory past half its cap is killed; the caller sees only the
 *   fault of its own call and the calls queued behind it run elsewhere.
 *
 * Workers are processes where a `deno` executable can be started, else Deno Workers with
 * `permissions: "none"` (sandbox/worker_handle.ts). Every call resolves to a value.
 *
 * Permissions: starting a process worker needs --allow-run for the deno executable (and
 * --allow-env to pass on where Deno keeps its cache); thread workers need none.
 */
import type { CheckerCallOptions, CheckerFault } from "../core/checker.ts";
import type { CheckerFunction, Faulted, HostMessage, WorkerMessage } from "./protocol.ts";
import { createHash } from "node:crypto";
import {
  processWorkersAvailable,
  startWorker,
  type WorkerEntries,
  type WorkerHandle,
  type WorkerKind,
} from "./worker_handle.ts";

/** What differs between the kinds of worker a pool can hold. */
export interface WorkerSpec {
  /** The checker file this kind runs, for messages: "checker.js" or "checker.clj". */
  file: string;
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
  /** Deno permission states the last started worker reported about itself. */
  workerPermissions?: Record<string, string>;
  /** How long the last worker took to load its engine. */
  lastBootMs?: number;
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

export const DEFAULT_WORKERS = 2;
export const DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 20_000;
export const HANG_MARGIN_MS = 2_000;
/** How often the pool looks again whether waiting calls warrant another worker. */
const GROWTH_CHECK_MS = 50;
/** Weight of the newest sample in the running means of call and start times. */
const MEAN_WEIGHT = 0.2;

interface Job<O> {
  fn: CheckerFunction;
  key: string;
  source: string;
  input: string;
  timeoutMs: number;
  resolve: (r: PoolResult<O>) => void;
  startedAt?: number;
}

interface Slot<O> {
  worker: WorkerHandle<HostMessage>;
  state: "starting" | "ready";
  spawnedAt: number;
  /** Checker keys this worker was given: it holds them prepared (as far as it keeps them). */
  keys: Set<string>;
  /** Calls sent, in order; the worker runs the first, the others wait in its input. */
  inflight: Job<O>[];
  /** The watchdog of the first call in flight, or the start-up timer. */
  timer?: ReturnType<typeof setTimeout>;
}

/** Creates a pool of `spec` workers; see the module comment. */
export function createWorkerPool<O extends { ok: boolean }>(
  spec: WorkerSpec,
  opts: WorkerPoolOptions = {},
): WorkerPool<O> {
  const size = Math.max(1, Math.floor(opts.workers ?? DEFAULT_WORKERS));
  const memoryBytes = Math.max(spec.minMemoryBytes, opts.memoryBytes ?? DEFAULT_MEMORY_BYTES);
  const stackBytes = opts.stackBytes ?? spec.stackBytes;
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const hangMarginMs = opts.hangMarginMs ?? HANG_MARGIN_MS;
  const kind: WorkerKind = opts.workerKind ?? (processWorkersAvailable() ? "process" : "thread");
  const slots: Slot<O>[] = [];
  const queue: Job<O>[] = [];
  let closed = false;
  let nextId = 1;
  let growthTimer: ReturnType<typeof setTimeout> | undefined;
  /** Growth checks in a row that found the waiting calls behind. */
  let looksBehind = 0;
  /** Running means: how long a call runs in a worker, how long a worker takes to start. */
  let callMs = 0;
  let startMs = spec.expectedStartMs;
  const counts = {
    workersStarted: 0,
    workersReplaced: 0,
    workersAbandoned: 0,
    workersPeak: 0,
    calls: 0,
    checkersLoaded: 0,
  };
  let workerPermissions: Record<string, string> | undefined;
  let lastBootMs: number | undefined;

  const fault = (fault: CheckerFault, message: string): Faulted => ({ ok: false, fault, message });

  function finish(job: Job<O>, outcome: O | Faulted, logs: string[] = []): void {
    const ms = job.startedAt === undefined ? 0 : performance.now() - job.startedAt;
    job.resolve({ outcome, logs, ms });
  }

  function spawn(): void {
    const slot = {
      state: "starting",
      spawnedAt: performance.now(),
      keys: new Set(),
      inflight: [],
    } as Partial<Slot<O>> as Slot<O>;
    slot.worker = startWorker<HostMessage, WorkerMessage<O>>(kind, {
      message: (msg) => onMessage(slot, msg),
      crash: (why) => onCrash(slot, why),
    }, spec.entries);
    slots.push(slot);
    counts.workersStarted++;
    counts.workersPeak = Math.max(counts.workersPeak, slots.length);
    slot.timer = setTimeout(
      () => failStart(slot, `${spec.engineName} did not load within ${spec.startTimeoutMs}ms`),
      spec.startTimeoutMs,
    );
    slot.worker.send({ type: "init", memoryBytes, stackBytes });
  }

  function remove(slot: Slot<O>, replaced: boolean): void {
    clearTimeout(slot.timer);
    slot.worker.kill();
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    if (replaced) {
      counts.workersReplaced++;
      // The replacement loads while nobody waits for it.
      if (!closed && spec.replaceAtOnce && slots.length === 0) spawn();
    }
  }

  function failStart(slot: Slot<O>, why: string): void {
    remove(slot, false);
    // With no worker left that could take the queue, the queued calls fail now
    // instead of waiting for a sandbox that cannot start.
    if (slots.length === 0) {
      for (const job of queue.splice(0)) {
        finish(job, fault("crashed", `${spec.sandboxName} could not start: ${why}`));
      }
    }
  }

  /**
   * Takes a worker out. Its first call in flight gets `headFault`; the calls behind it never
   * started and go back to the front of the queue.
   */
  function retire(slot: Slot<O>, headFault: Faulted | undefined, replaced: boolean): void {
    const [head, ...waiting] = slot.inflight;
    slot.inflight = [];
    remove(slot, replaced);
    if (head && headFault) finish(head, headFault);
    queue.unshift(...waiting);
  }

  function onCrash(slot: Slot<O>, why: string): void {
    if (!slots.includes(slot)) return;
    if (slot.state === "starting") return failStart(slot, why);
    retire(
      slot,
      fault("crashed", `${spec.sandboxName} crashed while running ${spec.subject}: ${why}`),
      true,
    );
    pump();
  }

  function onMessage(slot: Slot<O>, msg: WorkerMessage<O>): void {
    if (!slots.includes(slot)) return;
    if (msg.type === "ready") {
      clearTimeout(slot.timer);
      slot.state = "ready";
      workerPermissions = msg.permissions;
      lastBootMs = msg.bootMs;
      startMs = mean(startMs, performance.now() - slot.spawnedAt);
      pump();
    } else if (msg.type === "init-failed") {
      failStart(slot, msg.message);
    } else if (msg.type === "result") {
      clearTimeout(slot.timer);
      const job = slot.inflight.shift();
      // Loading a checker is paid once per worker: it says nothing of the calls to come.
      if (job?.startedAt !== undefined && !msg.loaded) {
        callMs = mean(callMs, performance.now() - job.startedAt);
      }
      if (msg.loaded) counts.checkersLoaded++;
      if (msg.poisoned || msg.recycle) {
        retire(slot, undefined, true);
      } else if (slot.inflight.length > 0) {
        watch(slot);
      }
      if (job) finish(job, msg.outcome, msg.logs);
      pump();
    }
  }

  function onHang(slot: Slot<O>): void {
    const head = slot.inflight[0];
    counts.workersAbandoned++;
    retire(
      slot,
      head &&
        fault(
          "timeout",
          `The checker did not finish within ${head.timeoutMs}ms${spec.timeoutSuffix}`,
        ),
      true,
    );
    pump();
  }

  /** Starts the watchdog of the slot's first call in flight, which starts running now. */
  function watch(slot: Slot<O>): void {
    const head = slot.inflight[0];
    head.startedAt = performance.now();
    slot.timer = setTimeout(() => onHang(slot), head.timeoutMs + hangMarginMs);
  }

  function dispatch(slot: Slot<O>, job: Job<O>): void {
    slot.inflight.push(job);
    counts.calls++;
    if (slot.inflight.length === 1) watch(slot);
    slot.keys.add(job.key);
    const { fn, key, source, input, timeoutMs } = job;
    slot.worker.send({ type: "call", id: nextId++, fn, key, source, input, timeoutMs });
  }

  /** The free slot a job should go to: one holding its checker, else the least loaded. */
  function route(open: Slot<O>[], job: Job<O>): Slot<O> {
    let best = open[0];
    for (const s of open) {
      if (s.keys.has(job.key)) return s;
      if (s.keys.size < best.keys.size) best = s;
    }
    return best;
  }

  /**
   * How long the calls waiting now would take to drain on the ready workers: each takes
   * about as long as the mean call, or as a call that has been running longer than a growth
   * check's interval, if one has (a slow checker, before any of its calls finished).
   */
  function backlogMs(): number {
    const ready = slots.filter((s) => s.state === "ready");
    if (ready.length === 0) return 0;
    const now = performance.now();
    let perCall = callMs;
    let waiting = queue.length;
    for (const s of ready) {
      waiting += Math.max(0, s.inflight.length - 1);
      const started = s.inflight[0]?.startedAt;
      const running = started === undefined ? 0 : now - started;
      if (running >= GROWTH_CHECK_MS) perCall = Math.max(perCall, running);
    }
    return (waiting * perCall) / ready.length;
  }

  /**
   * Starts a worker at once when none is alive and calls wait. Otherwise, while calls wait,
   * no worker is starting and the pool may grow, it looks every GROWTH_CHECK_MS whether the
   * calls waiting would take more than twice a worker's start (the new one then saves at
   * least a quarter of the wait), and starts one when two looks in a row say so. Looking
   * later rather than at once lets a burst of quick calls show how quick they are; the
   * second look lets a fresh worker's first calls (slower until V8 has optimised QuickJS's
   * wasm) count for less.
   */
  function grow(): void {
    if (queue.length === 0 || slots.length >= size) return;
    if (slots.length === 0) return spawn();
    if (growthTimer !== undefined || slots.some((s) => s.state === "starting")) return;
    growthTimer = setTimeout(() => {
      growthTimer = undefined;
      if (closed) return;
      const starting = slots.some((s) => s.state === "starting");
      const behind = !starting && queue.length > 0 && slots.length < size &&
        backlogMs() > 2 * startMs;
      looksBehind = behind ? looksBehind + 1 : 0;
      if (looksBehind >= 2) {
        looksBehind = 0;
        spawn();
      }
      pump();
    }, GROWTH_CHECK_MS);
    Deno.unrefTimer(growthTimer);
  }

  function pump(): void {
    if (closed) return;
    while (queue.length > 0) {
      const ready = slots.filter((s) => s.state === "ready");
      // An idle worker first; else one that can take a call behind its current one.
      let open = ready.filter((s) => s.inflight.length === 0);
      if (open.length === 0) open = ready.filter((s) => s.inflight.length < spec.pipeline);
      if (open.length === 0) break;
      const job = queue.shift()!;
      dispatch(route(open, job), job);
    }
    grow();
  }

  function submit(
    fn: CheckerFunction,
    source: string,
    input: unknown,
    callOpts: CheckerCallOptions | undefined,
  ): Promise<PoolResult<O>> {
    const timeoutMs = validTimeout(callOpts?.timeoutMs) ?? defaultTimeoutMs;
    let resolve!: (r: PoolResult<O>) => void;
    const done = new Promise<PoolResult<O>>((r) => (resolve = r));
    const job: Job<O> = { fn, key: "", source, input: "", timeoutMs, resolve };
    if (closed) {
      finish(job, fault("crashed", "The checker could not run: its pool is closed"));
      return done;
    }
    if (typeof source !== "string") {
      finish(job, fault("syntax", `${spec.file} could not be read: its source is not text`));
      return done;
    }
    try {
      job.input = JSON.stringify(input) ?? "null";
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
    job.key = checkerKey(source);
    queue.push(job);
    pump();
    return done;
  }

  return {
    submit,
    warm(): void {
      if (!closed && slots.length === 0) spawn();
    },
    close(): void {
      if (closed) return;
      closed = true;
      clearTimeout(growthTimer);
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
    stats(): WorkerPoolStats {
      return {
        ...counts,
        workerKind: kind,
        workerPids: slots.flatMap((s) => (s.worker.pid === undefined ? [] : [s.worker.pid])),
        workersAlive: slots.length,
        callsQueued: queue.length,
        ...(workerPermissions ? { workerPermissions } : {}),
        ...(lastBootMs !== undefined ? { lastBootMs } : {}),
      };
    },
  };
}

const keys = new Map<string, string>();

/** The SHA-256 of a checker source (its routing key), remembered for the last few seen. */
export function checkerKey(source: string): string {
  let key = keys.get(source);
  if (key === undefined) {
    key = createHash("sha256").update(source).digest("hex");
    if (keys.size >= 64) keys.delete(keys.keys().next().value!);
    keys.set(source, key);
  }
  return key;
}

function mean(old: number, sample: number): number {
  return old === 0 ? sample : old + MEAN_WEIGHT * (sample - old);
}

function validTimeout(ms: number | undefined): number | undefined {
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? Math.ceil(ms) : undefined;
}
