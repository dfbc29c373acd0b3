/**
 * Agent CLIs as candidates: Claude Code (`agent:claude-code:MODEL`) and Codex
 * (`agent:codex:MODEL`), each a command candidate preconfigured as
 * shared/notes/agent-clis.md describes:
 *
 * - only the world's MCP tools (`mcp__world__*`): built-in file, shell and web tools off;
 * - no permission prompts, a turn limit (Claude's --max-turns; for Codex the gateway's
 *   request cap), task on stdin, its JSON result kept as evidence;
 * - a throwaway HOME (tmpfs; Claude's working directory too), a cleared environment, the CLI's
 *   install directory read-only;
 * - the model reached only through the attempt's model gateway, pinned to MODEL of the
 *   registry: the real key stays with dvergr, tokens and cost are metered there;
 * - the MCP start-up race guarded: Claude waits for MCP (MCP_CONNECTION_NONBLOCKING=0),
 *   Codex marks the server required, and the gateway refuses a first model request that
 *   does not offer the world's tools, making the attempt a fault rather than a verdict.
 *
 * The CLI's version is part of the candidate's identity: a new version is a new experiment.
 * Agent CLIs run only under bubblewrap (without it they would see the host's files and
 * network, and the user's own credentials).
 *
 * Permissions: --allow-run (the CLI's --version, bwrap), --allow-read of its install dir.
 */
import type { ResourceLimits } from "../command/limits.ts";
import { dirname, join } from "node:path";
import type { Candidate, CandidateOutcome } from "../../../core/bench/candidate.ts";
import { DvergrError } from "../../../core/errors.ts";
import {
  type ModelEntry,
  type ModelRegistry,
  resolveModel,
} from "../../../core/models/registry.ts";
import { loadRegistry } from "../../providers/load_registry.ts";
import { commandGateway, type CommandGatewayOptions } from "../../gateway/command_gateway.ts";
import { routeFor } from "../../gateway/routes.ts";
import { WORLD_TOOL_NAMES, WORLD_TOOLS_VERSION } from "../../../core/world_tools/registry.ts";
import { commandCandidate, type CommandRun, type Isolation } from "../command/command.ts";

import { AGENT_CLIS, type AgentCli } from "./agent_clis.ts";
export { AGENT_CLIS, type AgentCli };

/** The versions dvergr is tested with (`npm install` these). */
export const TESTED_VERSIONS: Record<AgentCli, { npm: string; version: string; bin: string }> = {
  "claude-code": { npm: "@anthropic-ai/claude-code", version: "2.1.197", bin: "claude" },
  "codex": { npm: "@openai/codex", version: "0.171.0", bin: "codex" },
};

/** Model requests (turns) per attempt unless configured. */
export const DEFAULT_AGENT_MAX_TURNS = 30;
/** The world's MCP server name in the CLIs' configuration; tools appear as mcp__world__*. */
export const WORLD_SERVER = "world";
const HOME = "/home/agent";

export interface AgentSpec {
  /** Display name, unique within an experiment. */
  name: string;
  cli: AgentCli;
  /** Registry model id or alias. */
  model: string;
  /** Where the CLI was installed (`npm install --prefix DIR`); else DVERGR_AGENT_CLIS, else PATH. */
  installDir?: string;
  /** Turn limit (default 30). */
  maxTurns?: number;
  /** More arguments for the CLI, after dvergr's. */
  args?: string[];
}

export interface AgentOptions {
  isolation: Isolation;
  env: (name: string) => string | undefined;
  homeDir?: string;
  registry?: ModelRegistry;
  fetchImpl?: typeof fetch;
  /** Between SIGTERM and SIGKILL at the time limit. */
  killGraceMs?: number;
  /** Wraps the world MCP server's handler (tests: a slow or failing MCP start). */
  wrapMcp?: CommandGatewayOptions["wrapMcp"];
  /** Resource limits of the CLI's process tree; default DEFAULT_LIMITS. */
  limits?: ResourceLimits;
}

/** Quotes a word for /bin/sh. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function agentError(name: string, why: string, hint: string): DvergrError {
  return new DvergrError("CANDIDATE_INVALID", `Cannot use candidate "${name}": ${why}`, { hint });
}

function installHint(cli: AgentCli): string {
  const t = TESTED_VERSIONS[cli];
  return `Install it with \`npm install --prefix ~/agent-clis ${t.npm}@${t.version}\` and set ` +
    `DVERGR_AGENT_CLIS=~/agent-clis (or :install-dir in candidates.edn), or put ${t.bin} on PATH`;
}

async function isExecutable(p: string): Promise<boolean> {
  try {
    const info = await Deno.stat(p);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The CLI's executable: in the install directory, else on PATH; null when absent. */
export async function findAgentCli(
  cli: AgentCli,
  installDir: string | undefined,
  env: (name: string) => string | undefined,
): Promise<{ path: string | null; looked: string[] }> {
  const bin = TESTED_VERSIONS[cli].bin;
  const dir = installDir ?? env("DVERGR_AGENT_CLIS");
  const candidates = dir
    ? [join(dir, "node_modules", ".bin", bin), join(dir, "bin", bin), join(dir, bin)]
    : (env("PATH") ?? "").split(":").filter((d) => d !== "").map((d) => join(d, bin));
  for (const c of candidates) if (await isExecutable(c)) return { path: c, looked: candidates };
  return { path: null, looked: candidates };
}

/** The directory to mount for an executable: its enclosing node_modules, else its own. */
export function installMount(realExecutable: string): string {
  const parts = realExecutable.split("/");
  const i = parts.lastIndexOf("node_modules");
  return i > 0 ? parts.slice(0, i + 1).join("/") : dirname(realExecutable);
}

/** The CLI's version, from `--version` (e.g. "2.1.197"). */
export async function agentCliVersion(executable: string): Promise<string | null> {
  const home = await Deno.makeTempDir({ prefix: "dvergr-agent-version-" });
  try {
    const out = await new Deno.Command(executable, {
      args: ["--version"],
      clearEnv: true,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, DISABLE_AUTOUPDATER: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    const m = new TextDecoder().decode(out.stdout).match(/(\d+\.\d+\.\d+[\w.-]*)/);
    return out.success && m ? m[1] : null;
  } catch {
    return null;
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

/** Claude Code's command line: print mode, world MCP tools only, JSON result. */
export function claudeCommand(
  executable: string,
  apiModel: string,
  maxTurns: number,
  extra: string[],
): string {
  const mcp =
    `"{\\"mcpServers\\":{\\"${WORLD_SERVER}\\":{\\"type\\":\\"http\\",\\"url\\":\\"$DVERGR_MCP_URL\\"}}}"`;
  return [
    // In its home, not the world's root: Claude Code counts the files under its working
    // directory at start (ripgrep over the whole of /, ~0.3 s of CPU), except in its home.
    'cd "$HOME" &&',
    "exec",
    shellQuote(executable),
    "-p",
    "--model",
    shellQuote(apiModel),
    "--tools",
    "''",
    "--mcp-config",
    mcp,
    "--strict-mcp-config",
    "--allowedTools",
    shellQuote(`mcp__${WORLD_SERVER}__*`),
    "--max-turns",
    String(maxTurns),
    "--output-format",
    "json",
    "--no-session-persistence",
    ...extra.map(shellQuote),
  ].join(" ");
}

/** Built-in Codex features turned off: only the world's MCP tools remain. */
const CODEX_OFF = [
  "shell_tool",
  "unified_exec",
  "view_image",
  "goals",
  "image_generation",
  "browser_use",
  "computer_use",
  "apps",
  "plugins",
  "tool_suggest",
  "sleep_tool",
  "skill_search",
  "memories",
];
const CODEX_CONFIG = [
  "web_search=disabled",
  // Without it Codex waits ~5 s at exit trying to send analytics out of the sandbox.
  "analytics.enabled=false",
  "agents.enabled=false",
  "tools.experimental_request_user_input.enabled=false",
  "tools.update_plan.enabled=false",
  "skills.include_instructions=false",
  "skills.bundled.enabled=false",
];

/** Codex's command line: `exec`, a Responses provider at the gateway, world MCP tools only. */
export function codexCommand(executable: string, apiModel: string, extra: string[]): string {
  const provider =
    `"model_providers.dvergr={name=\\"dvergr\\",base_url=\\"$DVERGR_MODEL_URL/v1\\",` +
    `env_key=\\"DVERGR_MODEL_KEY\\",wire_api=\\"responses\\",request_max_retries=2,stream_max_retries=2}"`;
  const mcp = `"mcp_servers.${WORLD_SERVER}={url=\\"$DVERGR_MCP_URL\\",` +
    `default_tools_approval_mode=\\"approve\\",required=true,startup_timeout_sec=30,tool_timeout_sec=60}"`;
  return [
    shellQuote(executable),
    "exec",
    "-m",
    shellQuote(apiModel),
    "-c",
    "model_provider=dvergr",
    "-c",
    provider,
    "-c",
    mcp,
    ...CODEX_OFF.flatMap((f) => ["--disable", f]),
    ...CODEX_CONFIG.flatMap((c) => ["-c", shellQuote(c)]),
    "--json",
    "--ephemeral",
    "--skip-git-repo-check",
    ...extra.map(shellQuote),
    "-",
  ].join(" ");
}

function parseJson(line: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(line);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

function cut(v: unknown, n = 2000): unknown {
  return typeof v === "string" && v.length > n ? `${v.slice(0, n)}… (${v.length} chars)` : v;
}

/** Claude's `--output-format json` result (the last JSON line of stdout), trimmed. */
export function claudeResult(stdout: string): Record<string, unknown> | null {
  const lines = stdout.trim().split("\n").reverse();
  for (const l of lines) {
    const j = parseJson(l.trim());
    if (j && j.type === "result") {
      return {
        subtype: j.subtype,
        is_error: j.is_error,
        num_turns: j.num_turns,
        result: cut(j.result),
        stop_reason: j.stop_reason,
        total_cost_usd: j.total_cost_usd,
        usage: j.usage,
        permission_denials: j.permission_denials,
        api_error_status: j.api_error_status,
      };
    }
  }
  return null;
}

/** Codex's `--json` events: the last turn's end and the final agent message. */
export function codexResult(stdout: string): Record<string, unknown> | null {
  let end: Record<string, unknown> | null = null;
  let message: unknown = null;
  const errors: unknown[] = [];
  for (const l of stdout.split("\n")) {
    const j = parseJson(l.trim());
    if (!j) continue;
    if (j.type === "turn.completed" || j.type === "turn.failed") end = j;
    const item = j.item as Record<string, unknown> | undefined;
    if (j.type === "item.completed" && item?.type === "agent_message") message = cut(item.text);
    if (j.type === "error" && errors.length < 5) errors.push(cut(j.message, 500));
  }
  return end || message !== null || errors.length > 0 ? { end, message, errors } : null;
}

/** The outcome of an agent CLI attempt, with its own result as evidence. */
export function agentOutcome(
  cli: AgentCli,
  outcome: CandidateOutcome,
  run: CommandRun,
  maxTurns: number,
): CandidateOutcome {
  const result = cli === "claude-code" ? claudeResult(run.stdout) : codexResult(run.stdout);
  const out = { ...outcome, evidence: { ...outcome.evidence, agent: { cli, result } } };
  const gw = run.gateway;
  if (
    gw && gw.mcpToolLists === 0 && gw.figures.requests === 0 &&
    (outcome.status === "crashed" || outcome.status === "completed")
  ) {
    // It gave up before asking the model anything: its MCP connection never came up.
    return {
      ...out,
      status: "fault",
      message: `${cli} never listed the world's MCP tools and asked no model: ` +
        `its MCP connection did not start`,
    };
  }
  if (
    cli === "claude-code" && result?.subtype === "error_max_turns" && outcome.status === "crashed"
  ) {
    return { ...out, status: "completed", message: `Stopped at the turn limit (${maxTurns})` };
  }
  return out;
}

function modelFits(cli: AgentCli, entry: ModelEntry): boolean {
  return cli === "claude-code" ? entry.provider === "anthropic" : entry.provider !== "anthropic";
}

/** The CLI's environment in the sandbox: a throwaway home, no telemetry or updates. */
function agentEnv(cli: AgentCli): Record<string, string> {
  return cli === "claude-code"
    ? {
      HOME,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      MCP_CONNECTION_NONBLOCKING: "0",
      CLAUDE_CODE_MAX_RETRIES: "2",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_ENABLE_TELEMETRY: "0",
    }
    : { HOME, CODEX_HOME: `${HOME}/.codex`, DVERGR_MODEL_KEY: "dvergr-gateway-holds-the-key" };
}

/**
 * Before an agent's first cell: it runs only sandboxed, and the gateway must hold its
 * model's key; then the command's own preflight.
 */
async function agentPreflight(
  name: string,
  opts: AgentOptions,
  inner: Candidate,
  route: () => ReturnType<typeof routeFor>,
): Promise<void> {
  if (opts.isolation !== "bwrap") {
    throw agentError(
      name,
      "agent CLIs run only sandboxed, and bubblewrap is not available here",
      "Install bubblewrap (Debian: apt-get install bubblewrap); without it the CLI would see the host's files, network and credentials",
    );
  }
  const r = route();
  if ("problem" in r) {
    throw new DvergrError(
      "API_KEY_MISSING",
      `Cannot run candidate "${name}": ${r.problem}`,
      {
        hint:
          "Export the model's API key for dvergr; the agent never sees it (the gateway adds it)",
      },
    );
  }
  await inner.preflight?.();
}

/**
 * An agent CLI candidate. A missing CLI, an unknown model or a model the CLI cannot speak
 * to is a DvergrError here, before any cell starts.
 */
export async function createAgentCandidate(
  spec: AgentSpec,
  opts: AgentOptions,
): Promise<Candidate> {
  const maxTurns = spec.maxTurns ?? DEFAULT_AGENT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1 || maxTurns > 1000) {
    throw agentError(
      spec.name,
      `max turns ${maxTurns} is not a whole number from 1 to 1000`,
      "Give :max-turns 1 to 1000 (default 30)",
    );
  }
  const registry = opts.registry ?? await loadRegistry({ homeDir: opts.homeDir });
  const entry = resolveModel(registry, spec.model);
  if (!modelFits(spec.cli, entry)) {
    throw agentError(
      spec.name,
      `${spec.cli} cannot use model "${entry.id}" (provider ${entry.provider})`,
      spec.cli === "claude-code"
        ? "Claude Code speaks the Anthropic Messages API: choose an :anthropic model"
        : "Codex speaks the OpenAI Responses API: choose an :openai (or compatible) model",
    );
  }
  const found = await findAgentCli(spec.cli, spec.installDir, opts.env);
  if (found.path === null) {
    throw new DvergrError(
      "AGENT_CLI_MISSING",
      `Cannot use candidate "${spec.name}": the ${spec.cli} CLI (${
        TESTED_VERSIONS[spec.cli].bin
      }) is not installed (looked in ${found.looked.slice(0, 6).join(", ")})`,
      { hint: installHint(spec.cli), details: { cli: spec.cli, looked: found.looked } },
    );
  }
  const executable = found.path;
  const real = await Deno.realPath(executable);
  const version = await agentCliVersion(executable);
  if (version === null) {
    throw new DvergrError(
      "AGENT_CLI_MISSING",
      `Cannot use candidate "${spec.name}": ${executable} --version did not answer with a version`,
      { hint: installHint(spec.cli) },
    );
  }
  const extra = spec.args ?? [];
  const command = spec.cli === "claude-code"
    ? claudeCommand(executable, entry.apiModel, maxTurns, extra)
    : codexCommand(executable, entry.apiModel, extra);
  const mounts = [...new Set([installMount(real), installMount(executable)])];
  const env = agentEnv(spec.cli);
  const identity = {
    kind: "agent",
    cli: spec.cli,
    cliVersion: version,
    model: entry.id,
    apiModel: entry.apiModel,
    maxTurns,
    args: extra,
    tools: { version: WORLD_TOOLS_VERSION, names: [...WORLD_TOOL_NAMES] },
    ...(entry.priced ? {} : { priced: false }),
  };
  const inner = commandCandidate(
    {
      name: spec.name,
      command,
      mounts,
      env,
      bwrapExtra: ["--tmpfs", HOME, "--dir", `${HOME}/.codex`],
    },
    {
      isolation: opts.isolation,
      env: opts.env,
      // The JSON result may be long; its last line is what is read.
      tailBytes: 64 * 1024,
      killGraceMs: opts.killGraceMs,
      limits: opts.limits,
      identity,
      gateway: commandGateway({
        env: opts.env,
        registry,
        maxRequests: maxTurns,
        pinned: (reg) => routeFor(reg, entry, opts.env),
        requireToolPrefix: `mcp__${WORLD_SERVER}__`,
        fetchImpl: opts.fetchImpl,
        wrapMcp: opts.wrapMcp,
      }),
      finish: (outcome, run) => agentOutcome(spec.cli, outcome, run, maxTurns),
    },
  );
  return {
    ...inner,
    preflight: () =>
      agentPreflight(spec.name, opts, inner, () => routeFor(registry, entry, opts.env)),
  };
}
