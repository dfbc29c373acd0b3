import { parseCommandArgs, rangeFlag } from "./args.ts";
import type { CliContext } from "./context.ts";
import { onStopSignal } from "./signals.ts";
import { WORKER_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { composeServices, openHomeAt } from "../adapters/compose.ts";
import { resolveHomeDir } from "../adapters/store/kv/home.ts";
import { storeUrl } from "../adapters/store/postgres/url.ts";
import { blobsTarget } from "../adapters/store/s3/target.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import { runWorker } from "../core/engine/worker.ts";
import { newLeaseHolder } from "../core/engine/leases.ts";
import type { Home } from "../core/ports/home.ts";

export const HELP =
  `dvergr worker --store URL [--parallel N] [--experiment ID] [--idle-exit SECONDS] [--json]

Runs the cells of the experiments open in a PostgreSQL store (\`dvergr benchmark … --store
URL --enqueue\`), on this machine: any number of workers on any number of machines share
them. Each cell runs under a lease in the store (renewed while it runs) in this machine's
sandbox, and its record is accepted only from the lease's holder. The bundle comes from the
store; the candidates resolve here, with this process's environment: model keys, agent
CLIs and bubblewrap are the worker machine's, never the store's. An experiment that plans
differently here (another agent CLI version, a missing key) is left to other workers.

A worker killed (kill -9, a machine lost) loses only the cells it was running: their
leases run out and another worker takes them. SIGTERM or Ctrl-C stops the cells in flight,
which record nothing and are given back at once. A store that goes away is retried with
backoff; nothing recorded is lost.

Options:
  --store URL          postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (default:
                       $DVERGR_STORE)
  --blobs URL          keep the store's blobs (evidence, bundle files) in this S3 bucket,
                       s3://BUCKET/PREFIX (default: $DVERGR_BLOBS; credentials, region and
                       endpoint from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
                       AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3)
  --parallel N         cells at once (default 4)
  --experiment ID      only this experiment (its id, or a unique prefix of at least 4
                       characters); ends once it is complete
  --idle-exit SECONDS  end after this long without a cell to run (default: never)
  --home DIR           where this machine keeps attempt worlds (default: $DVERGR_HOME,
                       else .dvergr); nothing of the experiment is kept there
  --json               print what it did as JSON when it ends
  -h, --help           show this help

Example:
  dvergr worker --store postgres://dvergr@db.internal:5432/dvergr --parallel 4 --idle-exit 600

Exit status: 0 ended (idle for --idle-exit, or its --experiment complete); 2 bad input or
a store that cannot be reached at start; 130 stopped by Ctrl-C (SIGINT), 143 by SIGTERM.
`;

export const OPTIONS = {
  store: { type: "string" },
  blobs: { type: "string" },
  parallel: { type: "string" },
  experiment: { type: "string" },
  "idle-exit": { type: "string" },
  home: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("worker", args, OPTIONS);
  if (positionals.length > 0) {
    throw usageError(
      `"dvergr worker" takes no arguments, got ${positionals.join(" ")}`,
      "Run `dvergr worker --store postgres://USER@HOST:PORT/DATABASE`",
    );
  }
  const idle = rangeFlag("worker", "idle-exit", values["idle-exit"], "idleExitSeconds");
  return {
    values,
    parallel: rangeFlag("worker", "parallel", values.parallel, "parallel") ?? 4,
    idleExitMs: idle === undefined ? undefined : idle * 1000,
  };
}

/** The experiment a prefix names in the store (at least 4 characters, unique). */
async function fullId(home: Home, prefix: string): Promise<string> {
  const ids = (await home.state.listExperiments()).map((m) => m.id);
  const matches = ids.filter((id) => id.startsWith(prefix));
  if (prefix.length >= 4 && matches.length === 1) return matches[0];
  throw usageError(
    matches.length > 1
      ? `Cannot tell which experiment "${prefix}" means: ${matches.length} ids start with it`
      : `No experiment "${prefix}" in the store`,
    prefix.length < 4
      ? "Give at least 4 characters of the experiment id"
      : "`dvergr experiments --store URL` lists them",
  );
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values } = opts;
  const store = storeUrl(values.store, ctx.env);
  if (store === null) {
    throw usageError(
      '"dvergr worker" needs a store',
      "Give --store postgres://USER@HOST:PORT/DATABASE (or set DVERGR_STORE)",
    );
  }
  const blobs = blobsTarget(values.blobs, ctx.env, store);
  const dir = resolveHomeDir({ flag: values.home, env: ctx.env, cwd: ctx.cwd });
  const home = await openHomeAt(dir, store, blobs);
  const experiment = values.experiment === undefined
    ? undefined
    : await fullId(home, values.experiment).catch(async (e) => {
      await home.close();
      throw e;
    });
  const services = composeServices();
  const holder = newLeaseHolder(services.processes);
  const pool = createCheckerPool({ workers: 2 });
  const stop = onStopSignal();
  const log = (line: string) => ctx.stderr(`worker ${holder.owner.slice(0, 8)}: ${line}\n`);
  log(`started on ${holder.host} (pid ${holder.pid}), ${opts.parallel} at once, ${home.where}`);
  try {
    const r = await runWorker({
      services,
      home,
      runner: pool,
      env: ctx.env,
      holder,
      parallel: opts.parallel,
      experiment,
      idleExitMs: opts.idleExitMs,
      signal: stop.signal,
      log,
    });
    log(`ended (${r.reason}): ${r.attempts} attempts, ${r.closed.length} experiments completed`);
    if (values.json) {
      printJson(ctx, WORKER_FORMAT, { worker: holder.owner, host: holder.host, ...r });
    }
    return stop.exitStatus() ?? 0;
  } finally {
    stop.dispose();
    pool.close();
    await home.close();
  }
}
