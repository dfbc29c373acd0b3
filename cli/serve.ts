import { appendFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCommandArgs, rangeFlag } from "./args.ts";
import type { CliContext } from "./context.ts";
import { onStopSignal } from "./signals.ts";
import { usageError } from "../core/errors.ts";
import { resolveHomeDir } from "../adapters/store/kv/home.ts";
import { storeUrl } from "../adapters/store/postgres/url.ts";
import { blobsUrl, s3TargetWithProfile } from "../adapters/store/s3/target.ts";
import { allOps, callOp, findOp } from "../core/ops/registry.ts";
import { createJobRunner } from "../adapters/jobs/job_runner.ts";
import { composeServices, openHomeAt } from "../adapters/compose.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import { VERSION } from "../core/version.ts";
import { selectTools } from "../mcp/selection.ts";
import { DEFAULT_HTTP_PORT } from "../mcp/port.ts";
import type { JsEvalRunner } from "../mcp/code_profile.ts";
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";
import type { OpContext } from "../core/ops/op.ts";
import { serveSchedules, type TickResult, tickText } from "../core/ops/deploy_schedules.ts";

export const HELP = `dvergr serve [--mcp [--http [--port N | --socket PATH]]] [--home DIR]
             [--profile P | --toolsets a,b | --tools a,b [--room R]]

Starts the due runs of the home's schedules (dvergr deploy) as they come, until stopped:
alone without --mcp, beside the MCP server with it. Two serve processes on one home start
each due run once; a schedule missed while none ran runs once.

With --mcp, serves dvergr's operations as MCP tools to a coding client (Claude Code, Codex, Cursor):
over stdio by default (stdout is the protocol; logs go to stderr), or over Streamable
HTTP at http://127.0.0.1:PORT/mcp with --http. HTTP requests need
"Authorization: Bearer <token>", the token being in <home>/mcp/http-token (mode 0600,
created on the first start); requests from a non-loopback Origin are refused.

Selection (the tools a connection sees):
  --profile P        bench (default): rooms, files, catalog, bench, jobs, scorecards;
                     readonly: every read op; admin: everything (catalog_promote too);
                     code: js_eval and describe (a program calls the bench ops)
  --toolsets a,b     exactly these toolsets
  --tools a,b        exactly these tools
  --room R           with --tools: pin the connection to room R (the tools lose their
                     room parameter; a call naming another room is refused)

Options:
  --mcp              serve MCP (without it: only start the schedules' due runs)
  --http             serve Streamable HTTP on 127.0.0.1 instead of stdio
  --port N           the HTTP port (default ${DEFAULT_HTTP_PORT}; 0 picks a free one)
  --socket PATH      serve HTTP on this Unix socket (mode 0600) instead of a port
  --home DIR         the home (default: $DVERGR_HOME, else .dvergr in the working directory)
  --store URL        keep experiments, jobs, blobs, runs, reviews and schedules in a
                     PostgreSQL store shared by workers and other servers
                     (postgres://USER@HOST:PORT/DATABASE; default: $DVERGR_STORE); rooms stay
                     in the home, which the room tools need
  --blobs URL        with --store: keep its blobs in this S3 bucket, s3://BUCKET/PREFIX
                     (default: $DVERGR_BLOBS; credentials, region and endpoint from the
                     AWS_* variables)
  --job ID           (internal) run the work of job ID in this process; the server starts
                     one such process per job, so jobs outlive it and its client
  -h, --help         show this help

Environment: DVERGR_HOME, DVERGR_STORE, DVERGR_BLOBS, DVERGR_MCP_PROFILE, DVERGR_MCP_TOOLSETS, DVERGR_MCP_PORT.

Long work is a job: catalog_benchmark returns one at once; job_status {job, wait_ms}
answers when it ends or after at most 25 s. Each job runs in a process of its own and
its record is durable: it goes on when the server or the client stops, and a job whose
process died reads as failed with reason "orphaned". Job logs: <home>/mcp/jobs.log.

Examples:
  dvergr serve --mcp
  dvergr serve --home /srv/dvergr
  dvergr serve --mcp --http --port 17889 --profile readonly

Exit status: 0 stopped (the client closed stdin, or SIGINT/SIGTERM); 2 bad input (a bad
flag, a port in use); with --job, 0 when the job succeeded and 1 when it did not.
`;

export const OPTIONS = {
  mcp: { type: "boolean" },
  http: { type: "boolean" },
  port: { type: "string" },
  socket: { type: "string" },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  profile: { type: "string" },
  toolsets: { type: "string", multiple: true },
  tools: { type: "string", multiple: true },
  room: { type: "string" },
  job: { type: "string" },
} as const;

/** dvergr's permissions (deno.json's dvergr task), for the job worker processes. */
const WORKER_PERMS = [
  ...DVERGR_RUN_FLAGS,
  "--unstable-kv",
  "--unstable-worker-options",
  "--no-prompt",
];

/** The command line that runs `dvergr serve --job ID --home DIR` with this program. */
export function workerCommand(homeDir: string, id: string): { cmd: string; args: string[] } {
  const exe = Deno.execPath();
  const tail = ["serve", "--job", id, "--home", homeDir];
  // A compiled dvergr is its own executable; under Deno, run this main module again.
  if (!/(^|[\\/])deno(\.exe)?$/.test(exe)) return { cmd: exe, args: tail };
  const main = Deno.mainModule;
  const args = ["run", ...WORKER_PERMS];
  if (main.startsWith("file:")) {
    const config = join(dirname(fileURLToPath(main)), "deno.json");
    try {
      Deno.statSync(config);
      args.push("--config", config);
    } catch {
      // No deno.json beside main: the flags above are all it needs.
    }
  }
  return { cmd: exe, args: [...args, main, ...tail] };
}

/** Starts a detached worker process for a job and returns its pid. */
function spawnWorker(homeDir: string, cwd: string, store: string | null, blobs: string | null) {
  return (job: { id: string }): Promise<number> => {
    const { cmd, args } = workerCommand(homeDir, job.id);
    const child = new Deno.Command(cmd, {
      args,
      cwd,
      // The store's URL (its password too) goes by the environment, not the command line.
      // The AWS credentials the blobs need are in this process's environment: it inherits them.
      ...(store ? { env: { DVERGR_STORE: store, ...(blobs ? { DVERGR_BLOBS: blobs } : {}) } } : {}),
      stdin: "null",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
    child.unref();
    child.status.catch(() => {});
    return Promise.resolve(child.pid);
  };
}

/** `--job ID`: runs one job's op call here, recording its progress and end; logs to a file. */
async function runJobWorker(
  id: string,
  homeDir: string,
  store: { url: string | null; blobs: string | null },
  ctx: CliContext,
): Promise<number> {
  const blobs = store.blobs === null ? null : s3TargetWithProfile(store.blobs, ctx.env);
  const home = await openHomeAt(homeDir, store.url, blobs);
  const logFile = join(home.dir, "mcp", "jobs.log");
  await Deno.mkdir(dirname(logFile), { recursive: true });
  const log = (line: string) =>
    appendFile(logFile, `${new Date().toISOString()} job ${id} pid ${Deno.pid}: ${line}\n`)
      .catch(() => {});
  const pool = createCheckerPool({ workers: 2 });
  // Nothing reads this process's stderr: what the runner reports goes to the log.
  const jobs = createJobRunner(home.state, { log: (line) => void log(line) });
  const stop = onStopSignal();
  stop.done.then(() => home.state.requestJobCancel(id)).catch(() => {});
  try {
    log("started");
    const r = await jobs.adopt(id, async (signal, progress) => {
      const spec = (await home.state.getJob(id))?.spec;
      if (!spec) throw usageError(`Job ${id} has no op to run`, "Jobs are started by the server");
      return await callOp(findOp(spec.op), {
        home,
        services: composeServices(),
        runner: pool,
        env: ctx.env,
        cwd: ctx.cwd,
        clock: () => new Date(),
        signal,
        progress,
      }, spec.input);
    });
    await log(`ended ${r.status}${r.error ? `: ${r.error.code} ${r.error.message}` : ""}`);
    return r.status === "succeeded" ? 0 : 1;
  } finally {
    stop.dispose();
    pool.close();
    await home.close();
  }
}

/** Starts the schedules' due runs beside other work; stop() ends them (a run in flight too). */
function startSchedules(
  context: OpContext,
  stopped: Promise<unknown>,
  log: (line: string) => void,
): { done: Promise<void>; stop(): Promise<void> } {
  const ctl = new AbortController();
  stopped.then(() => ctl.abort());
  const loop = serveSchedules(context, ctl.signal, (r) => log(tickLine(r))).catch((e) =>
    log(`schedules stopped: ${e instanceof Error ? e.message : String(e)}`)
  );
  return {
    done: loop,
    async stop() {
      ctl.abort();
      await loop;
    },
  };
}

/** A tick's result as a log line. */
function tickLine(r: TickResult): string {
  return `schedule ${tickText(r)}`;
}

/** `dvergr serve` without --mcp: only the schedules' due runs, until SIGINT/SIGTERM. */
async function serveSchedulesOnly(
  ctx: CliContext,
  homeDir: string,
  store: string | null,
  blobs: string | null,
): Promise<number> {
  // The schedules are the store's: on a PostgreSQL store, each slot starts on one machine.
  const home = await openHomeAt(
    homeDir,
    store,
    blobs === null ? null : s3TargetWithProfile(blobs, ctx.env),
  );
  const pool = createCheckerPool({ workers: 2 });
  const stop = onStopSignal();
  const log = (line: string) => ctx.stderr(`dvergr serve: ${line}\n`);
  try {
    log(`starting the due runs of the schedules in ${home.dir} (stop with Ctrl-C)`);
    const context: OpContext = {
      home,
      services: composeServices(),
      runner: pool,
      env: ctx.env,
      cwd: ctx.cwd,
      clock: () => new Date(),
    };
    await startSchedules(context, stop.done, log).done;
    log("stopping");
    return 0;
  } finally {
    stop.dispose();
    pool.close();
    await home.close();
  }
}

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("serve", args, OPTIONS);
  if (positionals.length > 0) {
    throw usageError(
      `"dvergr serve" takes no arguments, got ${positionals.join(" ")}`,
      "Run `dvergr serve --help`",
    );
  }
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values } = opts;
  const homeDir = resolveHomeDir({ flag: values.home, env: ctx.env, cwd: ctx.cwd });
  const store = storeUrl(values.store, ctx.env);
  const blobs = blobsUrl(values.blobs, ctx.env, store);
  if (values.job !== undefined) {
    return await runJobWorker(values.job, homeDir, { url: store, blobs }, ctx);
  }
  if (!values.mcp) {
    const mcpOnly = ["http", "port", "socket", "profile", "toolsets", "tools", "room"] as const;
    const given = mcpOnly.find((k) => values[k] !== undefined);
    if (given) {
      throw usageError(`--${given} applies to --mcp only`, "Add --mcp, or leave it out");
    }
    return await serveSchedulesOnly(ctx, homeDir, store, blobs);
  }
  if (values.port !== undefined && !values.http) {
    throw usageError("--port applies to --http only", "Add --http, or leave out --port");
  }
  if (values.socket !== undefined && !values.http) {
    throw usageError("--socket applies to --http only", "Add --http, or leave out --socket");
  }
  if (values.socket !== undefined && values.port !== undefined) {
    throw usageError("Cannot use --socket and --port together", "Choose one of them");
  }
  const envList = (name: string) => {
    const v = ctx.env(name);
    return v ? [v] : undefined;
  };
  // The code profile's programs run in the sandbox (loaded when a program runs).
  const jsEval: JsEvalRunner = async (code, o) =>
    (await import("../sandbox/js_eval.ts")).runJsEval(code, o);
  const selection = selectTools(allOps(), {
    profile: values.profile ??
      (values.toolsets || values.tools ? undefined : ctx.env("DVERGR_MCP_PROFILE") || undefined),
    toolsets: values.toolsets ??
      (values.profile || values.tools ? undefined : envList("DVERGR_MCP_TOOLSETS")),
    tools: values.tools,
    room: values.room,
  }, { jsEval });
  const port = values.http
    ? rangeFlag("serve", "port", values.port ?? ctx.env("DVERGR_MCP_PORT"), "port") ??
      DEFAULT_HTTP_PORT
    : 0;
  const log = (line: string) => ctx.stderr(`dvergr-mcp: ${line}\n`);

  const home = await openHomeAt(
    homeDir,
    store,
    blobs === null ? null : s3TargetWithProfile(blobs, ctx.env),
  );
  const pool = createCheckerPool({ workers: 2 });
  const jobs = createJobRunner(home.state, {
    spawnWorker: spawnWorker(home.dir, ctx.cwd, store, blobs),
  });
  const stop = onStopSignal();
  try {
    const orphans = await jobs.recover();
    const context = {
      home,
      services: composeServices(),
      runner: pool,
      env: ctx.env,
      cwd: ctx.cwd,
      clock: () => new Date(),
      jobs,
    };
    const schedules = startSchedules(context, stop.done, log);
    // The SDK costs ~250 ms to load: only serve pays for it.
    const { createMcpServer } = await import("../mcp/server.ts");
    const { createStatelessHandler } = await import("../mcp/stateless.ts");
    const { createRoomWatcher, homeVersion } = await import("../mcp/room_watch.ts");
    const watcher = createRoomWatcher(homeVersion(home));
    const makeServer = () => createMcpServer({ context, selection, log, watcher, jsEval });
    const stateless = createStatelessHandler({ context, selection, log, watcher, jsEval });
    log(
      `dvergr ${VERSION}, home ${home.dir}, ${selection.label} (${selection.ops.length} tools)` +
        (orphans ? `; ${orphans} job${orphans === 1 ? "" : "s"} of a stopped server orphaned` : ""),
    );
    if (values.http) {
      const { ensureHttpToken } = await import("../mcp/token.ts");
      const { clearStaleSocket, serveHttp } = await import("../mcp/http.ts");
      const token = await ensureHttpToken(home.dir);
      const socket = values.socket === undefined ? undefined : resolve(ctx.cwd, values.socket);
      if (socket !== undefined) await clearStaleSocket(socket);
      const http = serveHttp({ port, socket, token: token.token, makeServer, stateless, log });
      log(
        `listening on ${http.url} (bearer token in ${token.path}${token.created ? ", new" : ""})`,
      );
      await Promise.race([stop.done, http.finished]);
      await http.close();
    } else {
      const { serveStdio } = await import("../mcp/stdio.ts");
      const ended = new AbortController();
      stop.done.then(() => ended.abort());
      await serveStdio(makeServer(), ended.signal, stateless);
    }
    stateless.close();
    watcher.close();
    log("stopping");
    await schedules.stop();
    return 0;
  } finally {
    stop.dispose();
    await jobs.close();
    pool.close();
    await home.close();
  }
}
