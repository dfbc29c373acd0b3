/**
 * The adapters a use case runs on besides the home's stores, wired once
 * (adapters/compose.ts) and handed to the engine (`BenchmarkRequest`, `RunOptions`) and to
 * the ops (`OpContext`): nothing in core/engine or core/ops reaches an adapter another way.
 */
import type { DurableJobRunner } from "../jobs.ts";
import type { BundleDirs } from "./bundle_dirs.ts";
import type { CandidateKinds } from "./candidate_kind.ts";
import type { JudgeFactory } from "./judge.ts";
import type { ProcessTable } from "./process_table.ts";
import type { StateStore } from "./state_store.ts";
import type { Timer } from "./timer.ts";
import type { WebClient } from "./web_client.ts";
import type { WorldFactory } from "./world_factory.ts";

export interface Services {
  /** Candidate specs read and resolved into candidates. */
  candidates: CandidateKinds;
  /** The worlds attempts run in. */
  worlds: WorldFactory;
  /** The web of a bundle's attempts. */
  web: WebClient;
  /** Judge models. */
  judges: JudgeFactory;
  /** The clock and waits of leases, polls and deadlines. */
  timer: Timer;
  /** This process and whether others of this host still run. */
  processes: ProcessTable;
  /** Bundles in directories of the file system. */
  bundleDirs: BundleDirs;
  /** A job runner over a home's records (the MCP server has its own). */
  jobs(state: StateStore, opts: { clock?: () => Date }): DurableJobRunner;
}
