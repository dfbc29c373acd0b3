/**
 * The one place the adapters are wired into the use cases: the services the engine and the
 * ops run on (core/ports/services.ts), used by the CLI and, through it, the MCP server, and
 * the home a command opens (the embedded KV home, or a PostgreSQL store shared by workers).
 * Tests replace single members (a fake timer, a process table) with `composeServices({…})`.
 */
import type { Services } from "../core/ports/services.ts";
import type { Home } from "../core/ports/home.ts";
import { candidateKinds } from "./candidates/registry.ts";
import { fileBundleDirs } from "./files/bundle_dirs.ts";
import { createJobRunner } from "./jobs/job_runner.ts";
import { registryJudges } from "./providers/judge_model.ts";
import { hostProcesses } from "./system/process_alive.ts";
import { systemTimer } from "./system/timer.ts";
import { hostWebClient } from "./web/attempt_web.ts";
import { worldFactory } from "./world/world.ts";
import { openHome } from "./store/kv/home.ts";
import type { S3Target } from "./store/s3/target.ts";
import { importLater } from "../core/import_later.ts";

/** The services of this host: real worlds, web, models, clock and processes. */
export function composeServices(overrides: Partial<Services> = {}): Services {
  return {
    candidates: candidateKinds,
    worlds: worldFactory,
    web: hostWebClient,
    judges: registryJudges,
    timer: systemTimer,
    processes: hostProcesses,
    bundleDirs: fileBundleDirs,
    jobs: (state, opts) => createJobRunner(state, { clock: opts.clock }),
    ...overrides,
  };
}

/**
 * The home a command works on: the embedded home at `dir` (records in its Deno KV file), or,
 * given a store URL (`--store`, `DVERGR_STORE`), the PostgreSQL store's records, blobs and
 * queue with this machine's rooms and worlds in `dir`, its blobs in the S3 bucket `blobs`
 * when one is given (`--blobs`, `DVERGR_BLOBS`). The driver is loaded only then.
 */
export async function openHomeAt(
  dir: string,
  store: string | null,
  blobs: S3Target | null = null,
): Promise<Home> {
  if (store === null) return await openHome(dir);
  const { openPostgresHome } = await importLater<typeof import("./store/postgres/home.ts")>(
    "./store/postgres/home.ts",
    import.meta.url,
  );
  return await openPostgresHome(dir, store, { blobs });
}
