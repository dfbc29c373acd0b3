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
 * The pool's shapes are sandbox/pool_types.ts, its state sandbox/pool_state.ts; the parts
 * here (starting and retiring workers, the answers and hangs of calls, growing and pumping
 * the queue) are functions over that state.
 *
 * Permissions: starting a process worker needs --allow-run for the deno executable (and
 * --allow-env to pass on where Deno keeps its cache); thread workers need none.
 */
import type { CheckerCallOptions } from "../core/checker.ts";
import type { CheckerFunction, Faulted, HostMessage, WorkerMessage } from "./protocol.ts";
import { sha256Hex } from "../core/sha256.ts";
import { startWorker } from "./worker_handle.ts";
import { after } from "./pool_timer.ts";
import {
  BASELINE_BUDGET_MS,
  BASELINE_CALL_MS,
  BASELINE_LONG_CALL_MS,
  BASELINE_WINDOW,
  type PoolResult,
  type WorkerPool,
  type WorkerPoolOptions,
  type WorkerSpec,
} from "./pool_types.ts";
import {
  backlogMs,
  fault,
  finish,
  GROWTH_CHECK_MS,
  type Job,
  mean,
  newPool,
  type Pool,
  poolStats,
  route,
  type Slot,
} from "./pool_state.ts";

export {
  DEFAULT_MEMORY_BYTES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_WORKERS,
  HANG_MARGIN_MS,
  type PoolResult,
  type WorkerPool,
  type WorkerPoolOptions,
  type WorkerPoolStats,
  type WorkerSpec,
} from "./pool_types.ts";

/** Creates a pool of `spec` workers; see the module comment. */
export function createWorkerPool<O extends { ok: boolean }>(
  spec: WorkerSpec,
  opts: WorkerPoolOptions = {},
): WorkerPool<O> {
  const p = newPool<O>(spec, opts);
  return {
    submit: (fn, source, input, callOpts) => submit(p, fn, source, input, callOpts),
    warm(): void {
      if (!p.closed && p.slots.length === 0) spawn(p);
    },
    close: () => close(p),
    stats: () => poolStats(p),
  };
}

function spawn<O>(p: Pool<O>): void {
  const slot = {
    state: "starting",
    spawnedAt: performance.now(),
    keys: new Set(),
    inflight: [],
    baseline: !p.optimizing,
  } as Partial<Slot<O>> as Slot<O>;
  slot.worker = startWorker<HostMessage, WorkerMessage<O>>(
    p.kind,
    {
      message: (msg) => onMessage(p, slot, msg),
      crash: (why) => onCrash(p, slot, why),
    },
    p.spec.entries,
    { baseline: slot.baseline },
  );
  p.slots.push(slot);
  p.counts.workersStarted++;
  p.counts.workersPeak = Math.max(p.counts.workersPeak, p.slots.length);
  // Not cancelled: once the worker is ready or gone, it does nothing.
  after(p.spec.startTimeoutMs, () => {
    if (slot.state !== "starting" || !p.slots.includes(slot)) return;
    failStart(p, slot, `${p.spec.engineName} did not load within ${p.spec.startTimeoutMs}ms`);
  });
  const layout = p.layouts?.known();
  const init = {
    type: "init",
    memoryBytes: p.memoryBytes,
    stackBytes: p.stackBytes,
    ...(layout ? { layout } : {}),
  } as const;
  const images = p.spec.bootImages?.() ?? null;
  if (!images) return slot.worker.send(init);
  // The checkers the queue waits for, whose images (made on the same boot image) let their
  // first calls load nothing.
  const keys = [...new Set(p.queue.map((j) => j.key))].slice(0, 4);
  // Read while the worker process starts; a worker gone meanwhile gets nothing.
  void (async () => {
    const base = await images.load();
    const checkers = base
      ? await Promise.all(
        keys.map(async (key) => ({ key, image: await images.loadChecker(base.id, key) })),
      )
      : [];
    if (!p.slots.includes(slot)) return;
    slot.baseId = base?.id;
    // A worker that cannot use the image (or got none) boots and sends its own back.
    slot.worker.send(
      base ? { ...init, image: base.image, keepImage: true } : { ...init, keepImage: true },
    );
    for (const { key, image } of checkers) {
      if (!image) continue;
      slot.worker.send({ type: "prepared", key, image });
      slot.keys.add(key);
    }
  })();
}

function remove<O>(p: Pool<O>, slot: Slot<O>, replaced: boolean): void {
  slot.watchdog?.cancel();
  slot.worker.kill();
  const i = p.slots.indexOf(slot);
  if (i >= 0) p.slots.splice(i, 1);
  if (replaced) {
    p.counts.workersReplaced++;
    // The replacement loads while nobody waits for it.
    if (!p.closed && p.spec.replaceAtOnce && p.slots.length === 0) spawn(p);
  }
}

function failStart<O>(p: Pool<O>, slot: Slot<O>, why: string): void {
  remove(p, slot, false);
  // With no worker left that could take the queue, the queued calls fail now
  // instead of waiting for a sandbox that cannot start.
  if (p.slots.length === 0) {
    for (const job of p.queue.splice(0)) {
      finish(job, fault("crashed", `${p.spec.sandboxName} could not start: ${why}`));
    }
  }
}

/**
 * Takes a worker out. With `headFault`, its first call in flight (the one running) gets
 * it; every other call never started and goes back to the front of the queue. Without one
 * (the running call has its result), all of them go back.
 */
function retire<O>(
  p: Pool<O>,
  slot: Slot<O>,
  headFault: Faulted | undefined,
  replaced: boolean,
): void {
  const calls = slot.inflight.splice(0);
  remove(p, slot, replaced);
  if (headFault && calls.length > 0) finish(calls.shift()!, headFault);
  p.queue.unshift(...calls);
}

function onCrash<O>(p: Pool<O>, slot: Slot<O>, why: string): void {
  if (!p.slots.includes(slot)) return;
  if (slot.state === "starting") return failStart(p, slot, why);
  retire(
    p,
    slot,
    fault("crashed", `${p.spec.sandboxName} crashed while running ${p.spec.subject}: ${why}`),
    true,
  );
  pump(p);
}

function onMessage<O>(p: Pool<O>, slot: Slot<O>, msg: WorkerMessage<O>): void {
  if (!p.slots.includes(slot)) return;
  if (msg.type === "ready") {
    slot.state = "ready";
    p.workerPermissions = msg.permissions;
    p.lastBootMs = msg.bootMs;
    p.lastBootRestored = msg.restored === true;
    if (msg.layout) p.layouts?.keep(msg.layout);
    // Booted rather than restored: its own image is its base (none sent: unknown).
    if (!msg.restored) {
      slot.baseId = msg.image ? p.spec.bootImages?.()?.save(msg.image).id : undefined;
    }
    p.startMs = mean(p.startMs, performance.now() - slot.spawnedAt);
    pump(p);
  } else if (msg.type === "init-failed") {
    failStart(p, slot, msg.message);
  } else if (msg.type === "result") {
    const job = slot.inflight.shift();
    // Loading a checker is paid once per worker: it says nothing of the calls to come.
    if (job?.startedAt !== undefined) {
      const ran = performance.now() - job.startedAt;
      if (!msg.loaded) p.callMs = mean(p.callMs, ran);
      // The worker's own measure: a busy host reads answers late.
      if (slot.baseline) noteBaselineCall(p, msg.ranMs ?? ran, msg.loaded);
    }
    if (msg.loaded) p.counts.checkersLoaded++;
    if (msg.image && job && slot.baseId) {
      void p.spec.bootImages?.()?.saveChecker(slot.baseId, job.key, msg.image);
    }
    if (msg.poisoned || msg.recycle) {
      retire(p, slot, undefined, true);
    } else if (slot.baseline && p.optimizing) {
      // Its calls behind this one go to a worker with tier-up, started now if none is left.
      retire(p, slot, undefined, false);
      if (!p.closed && p.slots.length === 0) spawn(p);
    } else if (slot.inflight.length > 0) {
      watch(p, slot);
    }
    if (job) finish(job, msg.outcome, msg.logs);
    pump(p);
  }
}

/**
 * Counts a call of a baseline worker: once the quickest of the latest BASELINE_WINDOW calls,
 * call after call, has run BASELINE_BUDGET_MS beyond BASELINE_CALL_MS in all, the checkers
 * are heavy enough to earn V8's tier-up, and workers start with it
 * (WorkerSpec.baselineFirst). The quickest, not each: on a loaded machine a quick call now
 * and then waits for a core mid-way, which says nothing of the checker; one call of
 * BASELINE_LONG_CALL_MS does.
 */
function noteBaselineCall<O>(p: Pool<O>, ms: number, loaded: boolean): void {
  if (ms >= BASELINE_LONG_CALL_MS) p.optimizing = true;
  // A call that loaded its checker says nothing of the calls to come, unless it ran that long.
  if (loaded) return;
  const recent = p.baselineRecent;
  recent.push(ms);
  if (recent.length > BASELINE_WINDOW) recent.shift();
  if (recent.length < BASELINE_WINDOW) return;
  p.baselineExcessMs += Math.max(0, Math.min(...recent) - BASELINE_CALL_MS);
  if (p.baselineExcessMs >= BASELINE_BUDGET_MS) p.optimizing = true;
}

function onHang<O>(p: Pool<O>, slot: Slot<O>): void {
  const head = slot.inflight[0];
  p.counts.workersAbandoned++;
  retire(
    p,
    slot,
    head &&
      fault(
        "timeout",
        head.fn === "generate"
          ? `${p.spec.generatorFile} did not finish within ${head.timeoutMs}ms`
          : `The checker did not finish within ${head.timeoutMs}ms${p.spec.timeoutSuffix}`,
      ),
    true,
  );
  pump(p);
}

/**
 * Watches the slot's first call in flight, which starts running now: past its time limit and
 * the margin the worker is abandoned (onHang). One timer per slot, left armed when a call
 * answers: the next call's watch finds it armed no later than its own deadline, and when it
 * goes off early it is armed again for what is left of the first call's (a timer set and
 * cleared per call was ~5 ms of this thread per 1,000 calls).
 */
function watch<O>(p: Pool<O>, slot: Slot<O>): void {
  const head = slot.inflight[0];
  head.startedAt = performance.now();
  const due = head.startedAt + head.timeoutMs + p.hangMarginMs;
  if (slot.watchdog !== undefined && slot.watchdogAt! <= due) return;
  slot.watchdog?.cancel();
  armWatchdog(p, slot, due);
}

function armWatchdog<O>(p: Pool<O>, slot: Slot<O>, at: number): void {
  slot.watchdogAt = at;
  slot.watchdog = after(at - performance.now(), () => {
    slot.watchdog = undefined;
    const head = slot.inflight[0];
    if (head?.startedAt === undefined) return; // nothing runs: the next call arms it again
    const due = head.startedAt + head.timeoutMs + p.hangMarginMs;
    if (performance.now() >= due) onHang(p, slot);
    else armWatchdog(p, slot, due);
  });
}

function dispatch<O>(p: Pool<O>, slot: Slot<O>, job: Job<O>): void {
  slot.inflight.push(job);
  p.counts.calls++;
  slot.keys.add(job.key);
  const { fn, key, source, input, timeoutMs } = job;
  slot.worker.send({ type: "call", id: p.nextId++, fn, key, source, input, timeoutMs });
  if (slot.inflight.length === 1) watch(p, slot);
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
function grow<O>(p: Pool<O>): void {
  if (p.queue.length === 0 || p.slots.length >= p.size) return;
  if (p.slots.length === 0) return spawn(p);
  if (p.growthTimer !== undefined || p.slots.some((s) => s.state === "starting")) return;
  p.growthTimer = after(GROWTH_CHECK_MS, () => {
    p.growthTimer = undefined;
    if (p.closed) return;
    const starting = p.slots.some((s) => s.state === "starting");
    const behind = !starting && p.queue.length > 0 && p.slots.length < p.size &&
      backlogMs(p) > 2 * p.startMs;
    p.looksBehind = behind ? p.looksBehind + 1 : 0;
    if (p.looksBehind >= 2) {
      p.looksBehind = 0;
      spawn(p);
    }
    pump(p);
  });
}

/** Sends waiting calls to the ready workers that can take them, then sees to growth. */
function pump<O>(p: Pool<O>): void {
  if (p.closed) return;
  while (p.queue.length > 0) {
    const ready = p.slots.filter((s) => s.state === "ready");
    // An idle worker first; else one that can take a call behind its current one.
    let open = ready.filter((s) => s.inflight.length === 0);
    if (open.length === 0) open = ready.filter((s) => s.inflight.length < p.spec.pipeline);
    if (open.length === 0) break;
    const job = p.queue.shift()!;
    dispatch(p, route(open, job), job);
  }
  grow(p);
}

/** submit() of the pool: a call queued, or answered at once with why it cannot run. */
function submit<O>(
  p: Pool<O>,
  fn: CheckerFunction,
  source: string,
  input: unknown,
  callOpts: CheckerCallOptions | undefined,
): Promise<PoolResult<O>> {
  const timeoutMs = validTimeout(callOpts?.timeoutMs) ?? p.defaultTimeoutMs;
  let resolve!: (r: PoolResult<O>) => void;
  const done = new Promise<PoolResult<O>>((r) => (resolve = r));
  const job: Job<O> = { fn, key: "", source, input: "", timeoutMs, resolve };
  if (p.closed) {
    finish(job, fault("crashed", "The checker could not run: its pool is closed"));
    return done;
  }
  if (typeof source !== "string") {
    finish(job, fault("syntax", `${p.spec.file} could not be read: its source is not text`));
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
  // generator.js is loaded under its own name: never the prepared module of a checker.js
  // whose text happens to be the same.
  job.key = checkerKey(fn === "generate" ? `${p.spec.generatorFile}\u0000${source}` : source);
  p.queue.push(job);
  pump(p);
  return done;
}

/** close() of the pool: every worker stopped, every call answered. */
function close<O>(p: Pool<O>): void {
  if (p.closed) return;
  p.closed = true;
  p.growthTimer?.cancel();
  for (const slot of [...p.slots]) {
    const jobs = slot.inflight;
    remove(p, slot, false);
    for (const job of jobs) {
      finish(job, fault("crashed", "The checker was stopped: its pool was closed"));
    }
  }
  for (const job of p.queue.splice(0)) {
    finish(job, fault("crashed", "The checker could not run: its pool was closed"));
  }
}

const keys = new Map<string, string>();

/** The SHA-256 of a checker source (its routing key), remembered for the last few seen. */
export function checkerKey(source: string): string {
  let key = keys.get(source);
  if (key === undefined) {
    key = sha256Hex(source);
    if (keys.size >= 64) keys.delete(keys.keys().next().value!);
    keys.set(source, key);
  }
  return key;
}

function validTimeout(ms: number | undefined): number | undefined {
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? Math.ceil(ms) : undefined;
}
