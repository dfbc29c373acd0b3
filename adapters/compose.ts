/**
 * The one place the adapters are wired into the use cases: the services the engine and the
 * ops run on (core/ports/services.ts), used by the CLI and, through it, the MCP server.
 * Tests replace single members (a fake timer, a process table) with `composeServices({…})`.
 */
import type { Services } from "../core/ports/services.ts";
import { candidateKinds } from "./candidates/registry.ts";
import { fileBundleDirs } from "./files/bundle_dirs.ts";
import { createJobRunner } from "./jobs/job_runner.ts";
import { registryJudges } from "./providers/judge_model.ts";
import { hostProcesses } from "./system/process_alive.ts";
import { systemTimer } from "./system/timer.ts";
import { hostWebClient } from "./web/attempt_web.ts";
import { worldFactory } from "./world/world.ts";

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
