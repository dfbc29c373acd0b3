/**
 * How a worker pool starts, talks to and stops one sandbox worker, whatever engine it runs
 * (the entries: sandbox/checker_process.ts and sandbox/checker_worker.ts for checker.js, the
 * clojure_ ones for checker.clj). Two ways carry the same messages (sandbox/protocol.ts):
 *
 * - "process": `deno run` of the process entry with every permission denied, JSON lines
 *   over stdin/stdout. `kill()` is SIGKILL: it stops a checker stuck in a native call at once.
 * - "thread": a Deno Worker with `permissions: "none"`, for where no `deno` executable can be
 *   started (a compiled binary). `kill()` is `terminate()`, which does not stop a worker busy
 *   in one long native call (denoland/deno#35657): its thread runs on until that call returns.
 *
 * Permissions: "process" needs --allow-run for the deno executable (and --allow-env to pass
 * on where Deno keeps its cache); "thread" needs nothing.
 */
import type { HostMessage, InitMessage } from "./protocol.ts";
import { type EarlyThread, newThreadWorker, sameInit, takeEarlyThread } from "./early_thread.ts";
import { concatBytes, encodeJsonLine, readJsonLines } from "./json_lines.ts";

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

const CONFIG = new URL("../deno.json", import.meta.url);
/** Every permission denied explicitly, so the process also reports them as denied. */
const DENY_ALL = [
  "--deny-read",
  "--deny-write",
  "--deny-net",
  "--deny-env",
  "--deny-run",
  "--deny-ffi",
  "--deny-sys",
  "--deny-import",
];
/** Environment a worker process may see: where Deno's cache is, nothing else. */
const PASSED_ENV = ["DENO_DIR", "HOME", "XDG_CACHE_HOME"];
const STDERR_TAIL = 2_000;
/**
 * V8 flags of a worker process. A young generation of at most 1 MiB per semi-space: a worker
 * allocates little that lives, and V8's default let it grow by up to ~10 MiB of resident
 * memory under a stream of calls, at no measurable gain in verdicts per second.
 */
const WORKER_V8_FLAGS = "--max-semi-space-size=1";
/**
 * V8 flag of a worker process that runs WebAssembly on the baseline compiler only (Liftoff):
 * V8's optimizing tier-up of QuickJS's hot functions costs ~150 ms of CPU in background
 * threads, which a run of small checkers never earns back (see WorkerSpec.baselineFirst).
 */
const BASELINE_ONLY = "--liftoff-only";

/** How a worker process is started. */
export interface StartOptions {
  /** WebAssembly on the baseline compiler only (process workers; threads share the host's V8). */
  baseline?: boolean;
}

let available: boolean | undefined;

/**
 * Whether checker workers can be processes here: dvergr runs as a `deno` executable from
 * its source tree (not a compiled binary) and may run that executable.
 */
export function processWorkersAvailable(): boolean {
  if (available !== undefined) return available;
  try {
    const exec = Deno.execPath();
    available = /(^|[\\/])deno(\.exe)?$/.test(exec) &&
      new URL(import.meta.url).protocol === "file:" &&
      Deno.permissions.querySync({ name: "run", command: exec }).state === "granted" &&
      Deno.statSync(CONFIG).isFile;
  } catch {
    available = false;
  }
  return available;
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

function passedEnv(): Record<string, string> {
  const env: Record<string, string> = { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" };
  for (const name of PASSED_ENV) {
    try {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    } catch {
      // Without --allow-env Deno finds its cache the default way.
    }
  }
  return env;
}

/**
 * util-linux's setpriv, when this host has it: a worker process is started through it with
 * the parent-death signal KILL, so a worker stuck in a native call that never polls QuickJS's
 * interrupt handler does not outlive a pool whose process died (nothing else would stop it:
 * the pool's watchdog died with it). Looked up once; without it workers start directly.
 */
let setprivPath: string | null | undefined;
function setpriv(): string | null {
  if (setprivPath !== undefined) return setprivPath;
  setprivPath = null;
  for (const p of ["/usr/bin/setpriv", "/bin/setpriv"]) {
    try {
      if (Deno.statSync(p).isFile) return setprivPath = p;
    } catch {
      // Not there, or not readable without --allow-read: start workers directly.
    }
  }
  return setprivPath;
}

function startProcess<H, W>(
  events: WorkerEvents<W>,
  entry: URL,
  opts: StartOptions,
): WorkerHandle<H> {
  const v8Flags = [WORKER_V8_FLAGS, ...(opts.baseline ? [BASELINE_ONLY] : [])];
  const guard = setpriv();
  const child = new Deno.Command(guard ?? Deno.execPath(), {
    args: [
      ...(guard ? ["--pdeathsig", "KILL", "--", Deno.execPath()] : []),
      "run",
      "--quiet",
      "--no-prompt",
      "--cached-only",
      `--v8-flags=${v8Flags.join(",")}`,
      ...DENY_ALL,
      "--config",
      filePath(CONFIG),
      filePath(entry),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: passedEnv(),
  }).spawn();
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

/**
 * The path of a file: URL of this program's own files (POSIX paths). Not node:url's
 * fileURLToPath: importing node:url loads Deno's URL module of the Node layer (~4 ms before
 * a benchmark's first cell) for one call per worker.
 */
function filePath(url: URL): string {
  return decodeURIComponent(url.pathname);
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
