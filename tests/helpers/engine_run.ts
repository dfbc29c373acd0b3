import type { Home } from "../../core/ports/home.ts";
import {
  runExperiment,
  type RunOptions,
  type RunResult,
} from "../../core/engine/run_experiment.ts";
import { composeServices } from "../../adapters/compose.ts";

/** What an engine test says of its run; the rest is the same in every one of them. */
export type EngineRun =
  & Pick<RunOptions, "bundle" | "plan" | "candidates" | "runner">
  & Partial<Omit<RunOptions, "bundle" | "plan" | "candidates" | "runner">>;

/**
 * runExperiment on a home's stores with the engine tests' defaults: the composed services, the
 * room "words", ad-hoc trust. Anything given in `opts` wins (a failing state store, a timer…).
 */
export function runInHome(home: Home, opts: EngineRun): Promise<RunResult> {
  return runExperiment({
    services: composeServices(),
    state: home.state,
    blobs: home.blobs,
    worldsDir: home.worldsDir,
    room: "words",
    trust: "ad-hoc",
    ...opts,
  });
}
