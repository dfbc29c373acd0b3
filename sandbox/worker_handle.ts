/**
 * How a worker pool starts, talks to and stops one sandbox worker, whatever engine it runs
 * (the entries: sandbox/checker_process.ts and sandbox/checker_worker.ts for checker.js, the
 * clojure_ ones for checker.clj). Two ways carry the same messages (sandbox/protocol.ts):
 *
 * - "process": `deno run` of the process entry with every permission denied, JSON lines
 *   over stdin/stdout (its command, and the one started early: sandbox/worker_process.ts).
 *   `kill()` is SIGKILL: it stops a checker stuck in a native call at once.
 * - "thread": a Deno Worker with `permissions: "none"`, for where no `deno` executable can be
 *   started (a compiled binary). `kill()` is `terminate()`, which does not stop a worker busy
 *   in one long native call (denoland/deno#35657): its thread runs on until that call returns.
 *
 * Permissions: "process" needs --allow-run for the deno executable (and --allow-env to pass
 * on where Deno keeps its cache); "thread" needs nothing.
 */
import type { HostMessage, InitMessage, PreparedMessage } from "./protocol.ts";
import {
  type EarlyThread,
  newThreadWorker,
  sameInit,
  sameInitMessage,
  takeEarlyThread,
} from "./early_thread.ts";
import { concatBytes, encodeJsonLine, readJsonLines } from "./json_lines.ts";
import { spawnWorkerProcess, workerProcess } from "./worker_process.ts";

export { processWorkersAvailable } from "./worker_process.ts";

export type WorkerKind = "process" | "thread";

export interface WorkerEvents<W> {
  message(message: W): void;
  /** The worker died or broke its protocol; called at most once, never after `kill()`. */
  crash(why: string): void;
}

export interface WorkerHandle<H = HostMessage> {
  readonly kind: WorkerKind;
  /** The process id of a "process" worker. */
  readonly pid?: number;
  send(message: H): void;
  /** Stops the worker; no event follows. */
  kill(): void;
}

/** The modules a worker runs: as a process, and as a thread. */
export interface WorkerEntries {
  process: URL;
  thread: URL;
}

const STDERR_TAIL = 2_000;

/** How a worker process is started. */
export interface StartOptions {
  /** WebAssembly on the baseline compiler only (process workers; threads share the host's V8). */
  baseline?: boolean;
}

/** Starts one worker of `kind` running `entries`. */
export function startWorker<H, W>(
  kind: WorkerKind,
  events: WorkerEvents<W>,
  entries: WorkerEntries,
  opts: StartOptions = {},
): WorkerHandle<H> {
  return kind === "process"
    ? startProcess(events, entries.process, opts)
    : startThread(events, entries.thread);
}

function startProcess<H, W>(
  events: WorkerEvents<W>,
  entry: URL,
  opts: StartOptions,
): WorkerHandle<H> {
  const baseline = opts.baseline === true;
  // Started before the pool (sandbox/worker_process.ts) when it was the same; else now.
  const { child, init, prepared } = workerProcess(entry, baseline);
  return init === undefined
    ? processHandle(events, child)
    : takeGivenInit(events, { child, init, prepared }, () => spawnWorkerProcess(entry, baseline));
}

/**
 * The handle of the worker process `child`, started early and given its init `given` as its
 * arguments (sandbox/init_args.ts): the pool's first message, its init, is not sent when it
 * is the same (what the process said meanwhile is delivered next, in order), and the checker
 * image `prepared`, if any, is sent first; otherwise the process is stopped and `spawn`
 * starts the pool's own, which is sent everything.
 */
function takeGivenInit<H, W>(
  events: WorkerEvents<W>,
  started: { child: Deno.ChildProcess; init: InitMessage; prepared?: PreparedMessage },
  spawn: () => Deno.ChildProcess,
): WorkerHandle<H> {
  const { child, init: given, prepared } = started;
  let decided = false;
  const held: W[] = [];
  let failure: string | undefined;
  const first = processHandle<H, W>({
    message: (message) => decided ? events.message(message) : void held.push(message),
    crash: (why) => decided ? events.crash(why) : void (failure ??= why),
  }, child);
  let handle: WorkerHandle<H> | undefined;
  let killed = false;
  return {
    kind: "process",
    get pid() {
      return (handle ?? first).pid;
    },
    send(message) {
      if (killed) return;
      if (!handle) {
        if (sameInitMessage(given, message as InitMessage)) {
          handle = first;
          if (prepared) first.send(prepared as H);
          // Once the pool has registered this worker: it is still inside its start.
          queueMicrotask(() => {
            decided = true;
            for (const m of held.splice(0)) events.message(m);
            if (failure !== undefined) events.crash(failure);
          });
          return;
        }
        first.kill();
        handle = processHandle(events, spawn());
      }
      handle.send(message);
    },
    kill() {
      killed = true;
      (handle ?? first).kill();
    },
  };
}

/** The handle of the worker process `child`, whose events go to `events`. */
function processHandle<H, W>(events: WorkerEvents<W>, child: Deno.ChildProcess): WorkerHandle<H> {
  let ended = false;
  let stderr = "";
  const writer = child.stdin.getWriter();
  const end = (why: string) => {
    if (ended) return;
    ended = true;
    turn.port1.close();
    events.crash(why);
  };
  // Messages sent until the event loop's next turn (the calls of the cells that one read of
  // answers let go on) go in one write: each write to the pipe wakes the worker, which costs
  // more than the bytes (a 1,000-cell run wrote ~545 times instead of ~920). The turn is a
  // message to this handle's own port: setTimeout(0) waits for the timers' millisecond,
  // which left the worker idle (a call took ~0.8 ms instead of ~0.3 in a burst).
  let outbox: Uint8Array[] = [];
  const turn = new MessageChannel();
  const flush = () => {
    const parts = outbox;
    outbox = [];
    if (ended || parts.length === 0) return;
    writer.write(parts.length === 1 ? parts[0] : concatBytes(parts)).catch((e) =>
      end(`the worker process could not be sent a message: ${errorText(e)}`)
    );
  };
  turn.port1.onmessage = flush;
  void child.status.then(() => {}, () => {});
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      stderr = (stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
    }
  })().catch(() => {});
  (async () => {
    for await (const message of readJsonLines<W>(child.stdout)) {
      if (ended) return;
      events.message(message);
    }
    const status = await child.status;
    end(
      `the worker process exited (${
        status.signal ? `signal ${status.signal}` : `code ${status.code}`
      })${stderr.trim() ? `: ${stderr.trim().split("\n").slice(-3).join(" / ")}` : ""}`,
    );
  })().catch((e) => end(`a message from the worker process could not be read: ${errorText(e)}`));
  return {
    kind: "process",
    pid: child.pid,
    send(message) {
      outbox.push(encodeJsonLine(message));
      if (outbox.length === 1) turn.port2.postMessage(null);
    },
    kill() {
      ended = true;
      // An open port would keep this process alive.
      turn.port1.close();
      try {
        child.kill("SIGKILL");
      } catch {
        // It has exited already.
      }
      child.unref();
      try {
        writer.releaseLock();
      } catch {
        // A write in flight keeps the lock; the process is gone either way.
      }
    },
  };
}

function startThread<H, W>(events: WorkerEvents<W>, entry: URL): WorkerHandle<H> {
  // One started before the pool (sandbox/early_thread.ts) is taken on the pool's init.
  const early = takeEarlyThread(entry);
  return early ? takeOnInit(events, entry, early) : threadHandle(events, newThreadWorker(entry));
}

/** The handle of a worker `worker` whose events go to `events`. */
function threadHandle<H, W>(events: WorkerEvents<W>, worker: Worker): WorkerHandle<H> {
  let ended = false;
  const end = (why: string) => {
    if (ended) return;
    ended = true;
    events.crash(why);
  };
  worker.onmessage = (e: MessageEvent<W>) => {
    if (!ended) events.message(e.data);
  };
  worker.onerror = (e: ErrorEvent) => {
    // Handled here: an unhandled worker error would be rethrown in the host.
    e.preventDefault();
    end(e.message || "the worker failed");
  };
  worker.onmessageerror = () => end("a message from the worker could not be read");
  return {
    kind: "thread",
    send: (message) => worker.postMessage(message),
    kill() {
      ended = true;
      worker.terminate();
    },
  };
}

/**
 * The handle of the worker `early` started for `entry` before the pool: on the pool's first
 * message, its init, the worker is the pool's when it was sent the same init (what it said
 * so far is delivered next, in order); otherwise it is stopped and a worker is started as
 * startThread does.
 */
function takeOnInit<H, W>(
  events: WorkerEvents<W>,
  entry: URL,
  early: EarlyThread,
): WorkerHandle<H> {
  let handle: WorkerHandle<H> | undefined;
  let killed = false;
  const adopt = (): WorkerHandle<H> => {
    let ended = false;
    const end = (why: string) => {
      if (ended) return;
      ended = true;
      events.crash(why);
    };
    early.onMessage = (message) => {
      if (!ended) events.message(message as W);
    };
    early.onFailure = end;
    const { messages, failure } = early;
    // Once the pool has registered this worker: it is still inside its start.
    queueMicrotask(() => {
      for (const message of messages) early.onMessage(message);
      if (failure !== undefined) end(failure);
    });
    return {
      kind: "thread",
      send: (message) => early.worker.postMessage(message),
      kill() {
        ended = true;
        early.worker.terminate();
      },
    };
  };
  return {
    kind: "thread",
    send(message) {
      if (killed) return;
      if (!handle) {
        if (sameInit(early, message as InitMessage)) return void (handle = adopt());
        early.worker.terminate();
        handle = threadHandle(events, newThreadWorker(entry));
      }
      handle.send(message);
    },
    kill() {
      killed = true;
      if (handle) handle.kill();
      else early.worker.terminate();
    },
  };
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
