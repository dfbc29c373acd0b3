/**
 * Candidate specs as users write them, and their resolution into Candidates: the shipped
 * kinds behind the CandidateKinds port (core/ports/candidate_kind.ts).
 *
 * | spec                    | candidate                                                   |
 * |-------------------------|-------------------------------------------------------------|
 * | `builtin:noop`          | writes nothing                                              |
 * | `builtin:reference`     | writes the calibration reference                            |
 * | `NAME=cmd:COMMAND…`     | the shell command line COMMAND, shown as NAME               |
 * | `NAME=agent:CLI:MODEL`  | an agent CLI (claude-code, codex) working with MODEL        |
 * | `cmd:NAME` or `NAME`    | the command NAME of `<home>/candidates.edn`                 |
 * | anything else           | a model id or alias of the model registry                   |
 *
 * `--candidate` is repeatable and never split on commas (commands may hold commas);
 * `--models a,b` is split on commas and every item is a model.
 */
import { readInputFile } from "../files/input_file.ts";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { DvergrError, isDvergrError } from "../../core/errors.ts";
import type { Candidate } from "../../core/bench/candidate.ts";
import type { Bundle } from "../../core/bundle/types.ts";
import { BUILTIN_NAMES, builtinCandidate, type BuiltinName } from "./builtin/builtin.ts";
import {
  commandCandidate,
  type CommandSpec,
  detectBwrap,
  type Isolation,
} from "./command/command.ts";
import {
  AGENT_CLIS,
  type AgentCli,
  type AgentSpec,
  createAgentCandidate,
} from "./agent_cli/agent_cli.ts";
import { commandGateway } from "../gateway/command_gateway.ts";
import { declaredModelIds } from "../gateway/routes.ts";
import { loadRegistry } from "../providers/load_registry.ts";
import type { ResourceLimits } from "./command/limits.ts";
import type {
  CandidateKinds,
  CandidateRequest,
  CandidateSpec,
} from "../../core/ports/candidate_kind.ts";
import { readEdn } from "../../core/edn/read.ts";
import { toPlain } from "../../core/edn/plain.ts";

/** The specs the shipped kinds read. */
export type KnownSpec =
  | { kind: "builtin"; builtin: BuiltinName; name: string }
  | { kind: "command"; name: string; command: string }
  | { kind: "agent"; name: string; cli: AgentCli; model: string }
  | { kind: "named"; name: string; explicit: boolean }
  | { kind: "model"; model: string };

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

function specError(spec: string, why: string, hint: string): DvergrError {
  return new DvergrError("CANDIDATE_INVALID", `Cannot use candidate "${spec}": ${why}`, { hint });
}

/** Reads one `--candidate` value. */
export function parseCandidateSpec(spec: string): KnownSpec {
  const s = spec.trim();
  if (s === "") {
    throw specError(spec, "it is empty", "Write e.g. `builtin:reference` or `me=cmd:./agent.sh`");
  }
  const eq = s.indexOf("=");
  if (eq > 0 && s.slice(eq + 1).startsWith("agent:")) return parseAgentSpec(spec, s, eq);
  if (eq > 0 && s.slice(eq + 1).startsWith("cmd:")) {
    const name = s.slice(0, eq);
    const command = s.slice(eq + 1 + "cmd:".length).trim();
    if (!NAME.test(name)) {
      throw specError(
        spec,
        `"${name}" is not a candidate name (letters, digits, and _ . : -; at most 64)`,
        "Write NAME=cmd:COMMAND, e.g. `naive=cmd:sh agent.sh`",
      );
    }
    if (command === "") throw specError(spec, "the command is empty", "Write NAME=cmd:COMMAND");
    return { kind: "command", name, command };
  }
  if (s.startsWith("builtin:")) {
    const which = s.slice("builtin:".length);
    if (!(BUILTIN_NAMES as readonly string[]).includes(which)) {
      throw specError(
        spec,
        `there is no builtin "${which}"`,
        `The builtins are ${BUILTIN_NAMES.map((b) => `builtin:${b}`).join(", ")}`,
      );
    }
    return { kind: "builtin", builtin: which as BuiltinName, name: s };
  }
  if (s.startsWith("cmd:")) {
    const name = s.slice("cmd:".length);
    if (!NAME.test(name)) {
      throw specError(
        spec,
        `"${name}" is not the name of a configured command`,
        "Use cmd:NAME for a command of candidates.edn in the home, or NAME=cmd:COMMAND inline",
      );
    }
    return { kind: "named", name, explicit: true };
  }
  if (/\s/.test(s)) {
    throw specError(
      spec,
      "it holds spaces but is not NAME=cmd:COMMAND",
      `For a command, name it: --candidate 'agent=cmd:${s}'`,
    );
  }
  return { kind: "named", name: s, explicit: false };
}

/** `NAME=agent:CLI:MODEL`, e.g. `claude=agent:claude-code:claude-sonnet-4-5`. */
function parseAgentSpec(spec: string, s: string, eq: number): KnownSpec {
  const name = s.slice(0, eq);
  const [cli, ...model] = s.slice(eq + 1 + "agent:".length).split(":");
  const hint = `Write NAME=agent:CLI:MODEL with CLI one of ${
    AGENT_CLIS.join(", ")
  }, e.g. \`claude=agent:claude-code:claude-sonnet-4-5\``;
  if (!NAME.test(name)) {
    throw specError(spec, `"${name}" is not a candidate name (letters, digits, and _ . : -)`, hint);
  }
  if (!(AGENT_CLIS as readonly string[]).includes(cli)) {
    throw specError(spec, `there is no agent CLI "${cli}"`, hint);
  }
  const m = model.join(":").trim();
  if (m === "") throw specError(spec, "the model is missing", hint);
  return { kind: "agent", name, cli: cli as AgentCli, model: m };
}

/** Reads `--models a,b`: every comma-separated item is a model id or alias. */
export function parseModelsFlag(value: string): KnownSpec[] {
  const items = value.split(",").map((m) => m.trim());
  if (items.some((m) => m === "")) {
    throw specError(
      value,
      "the model list has an empty item",
      "Write --models a,b without empty items",
    );
  }
  return items.map((model) => ({ kind: "model", model }));
}

const namedCommandSchema = z.strictObject({
  command: z.string().min(1),
  mounts: z.array(z.string().min(1)).optional(),
  env: z.record(z.string(), z.string()).optional(),
  "pass-env": z.array(z.string().min(1)).optional(),
  network: z.boolean().optional(),
  "max-requests": z.number().int().min(1).max(10_000).optional(),
  models: z.array(z.string().min(1)).min(1).optional(),
  doc: z.string().optional(),
});
const namedAgentSchema = z.strictObject({
  agent: z.enum(AGENT_CLIS),
  model: z.string().min(1),
  "install-dir": z.string().min(1).optional(),
  "max-turns": z.number().int().min(1).max(1000).optional(),
  args: z.array(z.string()).optional(),
  doc: z.string().optional(),
});
const namedFileSchema = z.record(
  z.string().regex(NAME),
  z.union([namedCommandSchema, namedAgentSchema]),
);

/** A candidate of candidates.edn: a command, or an agent CLI (it has `cli`). */
export type NamedCandidate = CommandSpec | AgentSpec;

/**
 * Named candidates of a `candidates.edn` file: commands
 * `{"naive" {:command "sh agents/naive.sh" :mounts ["agents"] :env {"K" "v"}
 *   :pass-env ["ANTHROPIC_API_KEY"] :network false :models ["local"]}}` and agent CLIs
 * `{"claude" {:agent "claude-code" :model "claude-sonnet-4-5" :install-dir "/opt/agent-clis"
 *   :max-turns 30 :args ["--effort" "low"]}}`. Relative mounts and install directories are
 * resolved against the file's directory. An absent file has no candidates.
 */
export async function readNamedCommands(file: string): Promise<Map<string, NamedCandidate>> {
  let text: string;
  try {
    text = new TextDecoder().decode(
      await readInputFile(file, { shown: file, what: "candidates file", maxBytes: 1 << 20 }),
    );
  } catch (e) {
    if (e instanceof DvergrError && e.code === "NOT_FOUND" && !/directory/.test(e.message)) {
      return new Map();
    }
    throw e;
  }
  const plain = toPlain(readEdn(text, { file }));
  const parsed = namedFileSchema.safeParse(plain);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot read ${file}: ${issue.path.map(String).join(" ")}: ${issue.message}`,
      {
        hint:
          'Write {"name" {:command "…" :mounts ["dir"] :env {"K" "v"} :pass-env ["VAR"] :network false :models ["claude-haiku-4-5"]}} ' +
          'or {"name" {:agent "claude-code" :model "…" :install-dir "dir" :max-turns 30 :args […]}}',
      },
    );
  }
  const base = resolve(file, "..");
  const out = new Map<string, NamedCandidate>();
  for (const [name, c] of Object.entries(parsed.data)) {
    if ("agent" in c) {
      const dir = c["install-dir"];
      out.set(name, {
        name,
        cli: c.agent,
        model: c.model,
        installDir: dir === undefined ? undefined : isAbsolute(dir) ? dir : resolve(base, dir),
        maxTurns: c["max-turns"],
        args: c.args,
      });
      continue;
    }
    out.set(name, {
      name,
      command: c.command,
      mounts: (c.mounts ?? []).map((m) => (isAbsolute(m) ? m : resolve(base, m))),
      env: c.env,
      passEnv: c["pass-env"],
      network: c.network,
      ...(c["max-requests"] !== undefined ? { maxRequests: c["max-requests"] } : {}),
      ...(c.models !== undefined ? { models: c.models } : {}),
    });
  }
  return out;
}

/** A command of candidates.edn: its own request cap and models, checked before any cell. */
function namedCommand(
  named: CommandSpec,
  cmdOpts: Parameters<typeof commandCandidate>[1],
  opts: ResolveOptions,
): Candidate {
  if (named.maxRequests === undefined && named.models === undefined) {
    return commandCandidate(named, cmdOpts);
  }
  const c = commandCandidate(named, {
    ...cmdOpts,
    gateway: commandGateway({
      env: opts.env,
      homeDir: opts.homeDir,
      maxRequests: named.maxRequests,
      models: named.models,
    }),
  });
  if (named.models === undefined) return c;
  return {
    ...c,
    async preflight() {
      await c.preflight?.();
      const registry = await loadRegistry({ homeDir: opts.homeDir });
      try {
        declaredModelIds(registry, named.models!);
      } catch (e) {
        if (!isDvergrError(e)) throw e;
        throw specError(
          named.name,
          `its :models names a model the registry does not know: ${e.message}`,
          e.hint ?? "Name models of the registry in :models",
        );
      }
    },
  };
}

export interface ResolveOptions {
  bundle: Bundle;
  env: (name: string) => string | undefined;
  isolation: Isolation;
  /** Named commands and agents (from the home's candidates.edn). */
  named: Map<string, NamedCandidate>;
  /** Read-only mounts added to every inline command (`--mount`). */
  mounts?: string[];
  /** The home, where a models.edn may override the shipped registry. */
  homeDir?: string;
  /** Resource limits of command candidates; default DEFAULT_LIMITS. */
  limits?: ResourceLimits;
  /** Makes a model candidate; default: adapters/candidates/model/model_candidate.ts. */
  createModel?: (model: string, index: number) => Promise<Candidate>;
}

async function defaultModel(
  model: string,
  index: number,
  opts: ResolveOptions,
): Promise<Candidate> {
  let mod: typeof import("./model/model_candidate.ts");
  try {
    mod = await import("./model/model_candidate.ts");
  } catch (e) {
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot use model "${model}": model candidates are not available in this build (${
        e instanceof Error ? e.message : String(e)
      })`,
      { hint: "Use builtin:… or NAME=cmd:COMMAND candidates" },
    );
  }
  return await mod.createModelCandidate(model, { index, env: opts.env, homeDir: opts.homeDir });
}

/**
 * The candidates of an experiment, in the order given. Names must be unique. A bare NAME
 * is a named command when candidates.edn has it, else a model.
 */
export async function resolveCandidates(
  specs: KnownSpec[],
  opts: ResolveOptions,
): Promise<Candidate[]> {
  const out: Candidate[] = [];
  // Every command candidate gets the attempt's world gateway (MCP tools, metered models).
  const cmdOpts = {
    isolation: opts.isolation,
    env: opts.env,
    gateway: commandGateway({ env: opts.env, homeDir: opts.homeDir }),
    limits: opts.limits,
  };
  const agentOpts = {
    isolation: opts.isolation,
    env: opts.env,
    homeDir: opts.homeDir,
    limits: opts.limits,
  };
  for (const [index, spec] of specs.entries()) {
    let c: Candidate;
    if (spec.kind === "builtin") c = builtinCandidate(spec.builtin, opts.bundle, spec.name);
    else if (spec.kind === "command") {
      c = commandCandidate(
        { name: spec.name, command: spec.command, mounts: opts.mounts },
        cmdOpts,
      );
    } else if (spec.kind === "agent") {
      c = await createAgentCandidate(spec, agentOpts);
    } else if (spec.kind === "named" && opts.named.has(spec.name)) {
      const named = opts.named.get(spec.name)!;
      c = "cli" in named
        ? await createAgentCandidate(named, agentOpts)
        : namedCommand(named, cmdOpts, opts);
    } else if (spec.kind === "named" && spec.explicit) {
      const known = [...opts.named.keys()];
      throw specError(
        `cmd:${spec.name}`,
        "the home's candidates.edn has no such command",
        known.length
          ? `Known commands: ${known.join(", ")}`
          : 'Add it to candidates.edn in the home: {"NAME" {:command "…"}}',
      );
    } else {
      const model = spec.kind === "model" ? spec.model : spec.name;
      c = await (opts.createModel
        ? opts.createModel(model, index)
        : defaultModel(model, index, opts));
    }
    if (out.some((o) => o.name === c.name)) {
      throw specError(
        c.name,
        "two candidates have this name",
        "Give each candidate its own name (NAME=cmd:…)",
      );
    }
    out.push(c);
  }
  if (out.length === 0) {
    throw new DvergrError("USAGE", "Cannot benchmark without candidates", {
      hint: "Add --candidate builtin:reference, --candidate NAME=cmd:COMMAND or --models m1,m2",
    });
  }
  return out;
}

/**
 * Command candidates run unisolated only when asked for: without bubblewrap dvergr cannot
 * promise what it does with it.
 */
function unisolatedRefused(): DvergrError {
  return new DvergrError(
    "CANDIDATE_INVALID",
    "Cannot run command candidates isolated: bubblewrap is not installed or cannot build its " +
      "sandbox here",
    {
      hint: "Install bubblewrap (Debian: apt-get install bubblewrap), or set " +
        "DVERGR_ISOLATION=none to run them in their world directories knowingly. Unisolated, " +
        "they can read and write anything the user can and reach the network; bytes written " +
        "are bounded per file only; memory and processes per process only, unless dvergr " +
        "can make a cgroup here (which also ends every process at the attempt's end); " +
        "otherwise processes that leave their session can outlive the attempt",
    },
  );
}

/**
 * The shipped candidate kinds (builtin, inline and named commands, agent CLIs, models) as
 * the CandidateKinds port. Specs it is given are ones it read (or built: `model()`).
 */
export const candidateKinds: CandidateKinds = {
  parse: parseCandidateSpec,
  parseModels: parseModelsFlag,
  model: (id) => ({ kind: "model", model: id }),
  isInlineCommand: (spec) => spec.kind === "command",
  async resolve(given: CandidateSpec[], req: CandidateRequest) {
    const specs = given as KnownSpec[];
    const isolation = req.isolation ?? ((await detectBwrap(req.env)) ? "bwrap" : "none");
    if (
      isolation === "none" && req.isolation === undefined &&
      req.env("DVERGR_ISOLATION") !== "none" &&
      specs.some((s) => s.kind === "command" || s.kind === "named")
    ) {
      throw unisolatedRefused();
    }
    const named = req.candidatesFile
      ? await readNamedCommands(req.candidatesFile)
      : new Map<string, NamedCandidate>();
    for (const [k, v] of req.named ?? []) named.set(k, v);
    const candidates = await resolveCandidates(specs, {
      bundle: req.bundle,
      env: req.env,
      isolation,
      named,
      mounts: req.mounts,
      limits: req.limits,
      homeDir: req.homeDir,
      createModel: req.createModel,
    });
    return { candidates, isolation };
  },
};
