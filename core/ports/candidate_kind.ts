/**
 * The candidate ports: how a candidate the user names (`builtin:reference`,
 * `me=cmd:./agent.sh`, `claude=agent:claude-code:M`, a model id) becomes a Candidate the
 * engine runs.
 *
 * - `CandidateKind` is one kind of candidate: it reads the specs of its form, describes
 *   them (for `--help`, the MCP schema and the README's candidate table) and resolves a
 *   spec into a candidate. A new kind is one implementation of it in a folder of its own,
 *   adapters/candidates/<kind>/, listed once in adapters/candidates/registry.ts.
 * - `CandidateKinds` is what the engine and the ops use: every kind together, reading any
 *   spec and resolving an experiment's candidates at once (unique names, the isolation
 *   command candidates run under). Implemented by adapters/candidates/registry.ts.
 */
import type { Candidate } from "../bench/candidate.ts";
import type { Bundle } from "../bundle/types.ts";
import type { ResourceLimits } from "../bench/resource_limits.ts";

/**
 * A candidate as the user wrote it, read by the kind that knows its form: `kind` names
 * that kind, the other fields are the kind's own.
 */
export interface CandidateSpec {
  kind: string;
  [field: string]: unknown;
}

/** How command candidates run: sandboxed by bubblewrap, or in the world directory. */
export type Isolation = "bwrap" | "none";

/** A configured command candidate (as `candidates.edn` names one). */
export interface NamedCommand {
  name: string;
  /** The shell command line. */
  command: string;
  /** Host directories (absolute) mounted read-only at the same path inside the sandbox. */
  mounts?: string[];
  /** Fixed environment variables for the process. */
  env?: Record<string, string>;
  /** Names of dvergr's environment variables passed through (e.g. an API key). */
  passEnv?: string[];
  /** Keep the host's network inside the sandbox (default: no network). */
  network?: boolean;
  /** Model requests through the world gateway per attempt (default 100). */
  maxRequests?: number;
  /** The models (registry names) its model requests may name (default: the priced ones). */
  models?: string[];
}

/** What resolving an experiment's candidates needs besides their specs. */
export interface CandidateRequest {
  bundle: Bundle;
  env: (name: string) => string | undefined;
  /** The home's directory (a models.edn there overrides the shipped model registry). */
  homeDir?: string;
  /** The home's named candidates (`candidates.edn`); absent: none. */
  candidatesFile?: string;
  /** Named commands besides the home's (these win). */
  named?: ReadonlyMap<string, NamedCommand>;
  /** Read-only mounts added to every inline command (`--mount`). */
  mounts?: string[];
  /** Default: bubblewrap when it works here (refused without it unless asked for). */
  isolation?: Isolation;
  /** Resource limits of command candidates; default DEFAULT_LIMITS. */
  limits?: ResourceLimits;
  /** Makes a model candidate (tests); default: the model registry's. */
  createModel?: (model: string, index: number) => Promise<Candidate>;
}

/** An experiment's candidates, in the order given, and how command candidates run. */
export interface ResolvedCandidates {
  candidates: Candidate[];
  isolation: Isolation;
}

/** Every kind of candidate together: what the engine and the ops use. */
export interface CandidateKinds {
  /** Reads one `--candidate` value (never split on commas: commands may hold them). */
  parse(text: string): CandidateSpec;
  /** A model id or alias of the registry as a spec. */
  model(id: string): CandidateSpec;
  /** Whether a spec runs a command line written in the request itself (MCP refuses it). */
  isInlineCommand(spec: CandidateSpec): boolean;
  /** Whether any of the specs may run in the sandbox (CandidateKind.sandboxed). */
  sandboxed(specs: readonly CandidateSpec[]): boolean;
  /** Every kind's forms, in the order specs are read (help, schemas, the README). */
  describe(): CandidateKindForms[];
  /**
   * The candidates of an experiment, in the order given; names must be unique, and a
   * request with none is refused.
   */
  resolve(specs: CandidateSpec[], req: CandidateRequest): Promise<ResolvedCandidates>;
  /**
   * The other names the candidate of a recorded identity answers to (a model's id and the
   * registry's aliases, `homeDir`'s models.edn included); [] for a kind without any.
   */
  aliasesOf(identity: Record<string, unknown>, ctx: { homeDir?: string }): Promise<string[]>;
}

/** One form of spec a kind reads, as help and schemas show it. */
export interface CandidateForm {
  /** The form, e.g. `NAME=cmd:COMMAND…`. */
  form: string;
  /** What it stands for. */
  what: string;
  /** A spec of this form that works. */
  example: string;
}

/** A kind's forms, as `CandidateKinds.describe()` lists them. */
export interface CandidateKindForms {
  kind: string;
  forms: CandidateForm[];
  /** Its specs run a command line given in the request (refused over MCP). */
  inlineCommand: boolean;
}

/** What resolving one spec of a kind needs. */
export interface CandidateContext extends Omit<CandidateRequest, "isolation"> {
  isolation: Isolation;
  /** The spec's position in the experiment (a model candidate's name suffix). */
  index: number;
  /**
   * Resolves a spec of any kind at the same position: for a kind whose specs stand for
   * another kind's (a named candidate of candidates.edn is a command or an agent CLI; a
   * bare NAME it does not have is a model).
   */
  resolveAs(spec: CandidateSpec): Promise<Candidate>;
}

/** One kind of candidate (builtin, command, agent CLI, model…). */
export interface CandidateKind<S extends { kind: string } = CandidateSpec> {
  /** The kind's name: the `kind` of the specs it reads. */
  kind: string;
  /**
   * Reads one spec; null when it is not of this kind's form (another kind may read it);
   * CANDIDATE_INVALID when it is this form but malformed.
   */
  parse(text: string): S | null;
  /** The forms it reads, for help, schemas and the README. */
  describe(): CandidateForm[];
  /**
   * Its specs carry a command line to run on this host (`NAME=cmd:…`): MCP refuses them,
   * since a caller could otherwise run any command here.
   */
  inlineCommand?: boolean;
  /**
   * Its candidates run a command on this host, so without bubblewrap they run only when
   * DVERGR_ISOLATION=none asks for it (refused before any cell otherwise).
   */
  runsCommands?: boolean;
  /**
   * Its candidates may run in the sandbox (bubblewrap): whether bubblewrap works here is found
   * before they resolve. A request of kinds without it (built-ins, models) never asks.
   */
  sandboxed?: boolean;
  /** The candidate a spec stands for. */
  resolve(spec: S, ctx: CandidateContext): Promise<Candidate>;
  /**
   * The other names a candidate of this kind answers to, from its recorded identity (as
   * `Candidate.aliases`, less the name it was given as): for a recorded experiment, whose
   * candidates are identities only. Absent: none.
   */
  aliasesOf?(identity: Record<string, unknown>, ctx: { homeDir?: string }): Promise<string[]>;
}
