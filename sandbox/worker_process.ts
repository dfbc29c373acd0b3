/**
 * How a sandbox worker process is started (sandbox/worker_handle.ts talks to it), and one
 * started before its pool exists: `dvergr benchmark` of a bundle directory with a checker.js
 * starts its first checker worker process as the first thing it evaluates
 * (cli/early_start.ts), so that Deno boots and loads the worker's modules there while this
 * process loads the command's, instead of from when the pool is made (~50-100 ms later). The
 * process reads nothing before its pool's first message, its init; the first process worker
 * a pool then starts with the same entry and flags takes it over (sandbox/worker_handle.ts).
 * One is kept at most; one not taken sees its stdin close when this process exits, and ends.
 *
 * The early process can be given its init (the boot image with it) as its arguments
 * (sandbox/init_args.ts): over stdin, it waited in the pipe for this process's event loop,
 * which does not turn while the command's modules load. The pool that takes it then sends no
 * init of its own when its init is the same (sandbox/worker_handle.ts), and replaces it when
 * not. The image of the bundle's checker, when one is kept, goes over its stdin as the pool
 * takes it: any local user can read a process's arguments, and that image holds the
 * bundle's checker, which is kept private (files in a 0700 directory); the boot image holds
 * only dvergr's own prelude.
 *
 * Permissions: --allow-run for the deno executable (and --allow-env to pass on where Deno
 * keeps its cache).
 */

import type { InitMessage, PreparedMessage } from "./protocol.ts";
import { messageArgs } from "./init_args.ts";

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

/** The entry of checker.js process workers (sandbox/checker_pool.ts CHECKER_WORKERS). */
export const CHECKER_PROCESS_ENTRY = new URL("./checker_process.ts", import.meta.url);

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

/**
 * The path of a file: URL of this program's own files (POSIX paths). Not node:url's
 * fileURLToPath: importing node:url loads Deno's URL module of the Node layer (~4 ms before
 * a benchmark's first cell) for one call per worker.
 */
function filePath(url: URL): string {
  return decodeURIComponent(url.pathname);
}

/** The V8 flags of a worker process, baseline-only or not. */
function v8Flags(baseline: boolean): string {
  return [WORKER_V8_FLAGS, ...(baseline ? [BASELINE_ONLY] : [])].join(",");
}

/**
 * Starts a worker process of `entry` (stdin, stdout and stderr piped), given `args` (its init:
 * sandbox/init_args.ts) when there are any.
 */
export function spawnWorkerProcess(
  entry: URL,
  baseline: boolean,
  args: string[] = [],
): Deno.ChildProcess {
  const guard = setpriv();
  return new Deno.Command(guard ?? Deno.execPath(), {
    args: [
      ...(guard ? ["--pdeathsig", "KILL", "--", Deno.execPath()] : []),
      "run",
      "--quiet",
      "--no-prompt",
      "--cached-only",
      `--v8-flags=${v8Flags(baseline)}`,
      ...DENY_ALL,
      "--config",
      filePath(CONFIG),
      filePath(entry),
      ...args,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: passedEnv(),
  }).spawn();
}

/**
 * A worker process, the init it was given as arguments, if any, and with it the checker image
 * to send it once taken.
 */
export interface StartedProcess {
  child: Deno.ChildProcess;
  init?: InitMessage;
  prepared?: PreparedMessage;
}

let early: { key: string; started: StartedProcess } | undefined;

/**
 * Starts a worker process of `entry` for the first pool to take, given `init` as its
 * arguments when it fits in them (sandbox/init_args.ts), and then `prepared` (a checker
 * image) over its stdin as a pool takes it; replaces one started before. Returns its pid and
 * its end (for tests: the pool owns its pipes once it takes it).
 */
export function startEarlyProcess(
  entry: URL,
  baseline: boolean,
  init?: InitMessage,
  prepared?: PreparedMessage,
): { pid: number; status: Promise<Deno.CommandStatus> } {
  const args = init === undefined ? null : messageArgs([init]);
  const child = spawnWorkerProcess(entry, baseline, args ?? []);
  dropEarly();
  early = {
    key: `${entry.href} ${v8Flags(baseline)}`,
    started: args === null ? { child } : { child, init, ...(prepared ? { prepared } : {}) },
  };
  return { pid: child.pid, status: child.status };
}

/** Stops the early process not taken, if any. */
function dropEarly(): void {
  if (!early) return;
  try {
    early.started.child.kill("SIGKILL");
  } catch {
    // It has ended already.
  }
  early = undefined;
}

/**
 * A worker process of `entry`: the one started early when it has the same entry and flags
 * (the caller owns it now; with the init it was given, which it must not be sent again),
 * else a new one.
 */
export function workerProcess(entry: URL, baseline: boolean): StartedProcess {
  if (early?.key === `${entry.href} ${v8Flags(baseline)}`) {
    const { started } = early;
    early = undefined;
    return started;
  }
  // The first pool did not want it: nothing else will.
  dropEarly();
  return { child: spawnWorkerProcess(entry, baseline) };
}
