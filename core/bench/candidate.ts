/**
 * The candidate contract: something that works on a task inside an attempt's world.
 * Built-ins, command candidates (external agent processes) and model candidates
 * (dvergr's own agent loop over an LLM API) all implement it.
 */
import type { Usage } from "../models/usage.ts";
export { NO_USAGE, type Usage } from "../models/usage.ts";
import type { WorldWeb } from "../web/types.ts";

/** An attempt's world as seen through world paths ("/docs/a.md", "/out/answer.edn"). */
export interface WorldFiles {
  /** World paths of every file under `dir` (recursive), sorted. */
  list(dir: string): Promise<string[]>;
  /** Text of a file; a DvergrError NOT_FOUND when absent. */
  read(path: string): Promise<string>;
  /** Writes a file, creating parents; refuses paths outside the world. */
  write(path: string, text: string): Promise<void>;
}

export interface AttemptContext {
  /** The filled task text. */
  task: string;
  caseId: string | null;
  /** Repetition index, 0-based. */
  repetition: number;
  world: WorldFiles;
  /** The world's directory on the host (for command candidates). */
  worldDir: string;
  /** The calibration reference files (for builtin:reference), by world path. */
  reference: Record<string, string> | null;
  timeoutMs: number;
  /** Per-attempt budget in microdollars (1e-6 $). */
  budgetMicros: number;
  /** The bundle's :profile: "developer" writes files; anything else is read-only. */
  profile: string;
  /** World directories the candidate may write (the bundle's :capture). */
  writable: string[];
  /**
   * The attempt's web under the bundle's policy (live or frozen); absent or null when the
   * bundle lets nothing be read. Served to candidates as the web_search/web_fetch tools.
   */
  web?: WorldWeb | null;
  /**
   * Aborted when the run is cancelled, and when the attempt's time is up for a candidate that
   * does not time itself (see Candidate.timesItself).
   */
  signal: AbortSignal;
  /**
   * Called by a candidate that waited for its turn before it started (sandboxed commands
   * without a cgroup run one at a time): the engine's backstop counts from then.
   */
  admitted?: () => void;
}

/**
 * How the candidate's work ended.
 * - completed: it finished on its own (the checker grades the world).
 * - timeout / budget / crashed: it did not complete; still graded, reward forced to 0
 *   for timeout and crashed (budget: scored as it stands, marked as stopped by budget).
 * - fault: no verdict should be given (could not start, provider failure); the cell
 *   runs again on resume.
 */
export type CandidateStatus = "completed" | "timeout" | "budget" | "crashed" | "fault";

/** What kind of fault a "fault" outcome is; without it, the candidate could not run. */
export interface CandidateFault {
  /** "provider": the candidate ran, its model provider failed (HTTP error, bad answer). */
  source: "candidate" | "provider";
  /** e.g. "could-not-run", "auth", "malformed-response", "http", "network". */
  kind: string;
  /** Trying again in the same run cannot help (a rejected API key): no retry within the run. */
  permanent?: boolean;
}

export interface CandidateOutcome {
  status: CandidateStatus;
  message?: string;
  /** For status "fault": who failed and how (default: the candidate could not run). */
  fault?: CandidateFault;
  usage: Usage;
  /** What the run was charged, in microdollars. */
  billedMicros: number;
  /** The same tokens at list price (subscriptions); null = equals the bill. */
  listMicros: number | null;
  /** The model's prices are unknown (not in the registry): the money figures are not costs. */
  unpriced?: boolean;
  /** False when a command candidate ran without bubblewrap. */
  isolated: boolean;
  /** Bounded evidence: transcript, exit status, output tail… (plain JSON). */
  evidence: Record<string, unknown>;
}

export interface Candidate {
  /** Display name, unique within an experiment. */
  name: string;
  /** Everything that decides its behaviour (part of the experiment id). Plain JSON. */
  identity: Record<string, unknown>;
  /**
   * Other names it answers to where a candidate is named (`--baseline`): a model's id, the
   * name it was given as and the registry's aliases. Not part of its identity.
   */
  aliases?: readonly string[];
  /**
   * The candidate enforces `timeoutMs` itself, from when its own process starts (a command
   * candidate: dvergr's setup, the world gateway's start and the capture are not charged to
   * it), and returns on its own. The engine then starts no timer of its own at the attempt's
   * start, which would charge that setup to the candidate and make outcomes depend on the
   * machine's load; it keeps only a backstop far beyond the candidate's own.
   */
  timesItself?: boolean;
  /** Checks before any cell starts (API keys present…); throws a DvergrError. */
  preflight?(): Promise<void>;
  run(ctx: AttemptContext): Promise<CandidateOutcome>;
}
