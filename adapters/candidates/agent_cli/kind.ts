/**
 * Agent CLIs as a kind: `NAME=agent:CLI:MODEL` or bare `agent:CLI:MODEL` (named by the spec
 * itself), Claude Code or Codex working with MODEL through the world's MCP tools. Named
 * agents of candidates.edn resolve to specs of this kind with their install directory,
 * turn limit and arguments.
 */
import type { CandidateKind } from "../../../core/ports/candidate_kind.ts";
import { NAME, specError } from "../spec_text.ts";
import type { AgentSpec } from "./agent_cli.ts";
import { AGENT_CLIS, type AgentCli } from "./agent_clis.ts";
import { importLater } from "../../../core/import_later.ts";

/** An agent CLI candidate's spec. */
export type AgentKindSpec = { kind: "agent" } & AgentSpec;

const HINT = `Write NAME=agent:CLI:MODEL with CLI one of ${
  AGENT_CLIS.join(", ")
}, e.g. \`claude=agent:claude-code:claude-sonnet-4-5\``;

/** Where `agent:` starts: after `NAME=`, or at the start of a bare spec; -1 when neither. */
function agentAt(text: string): number {
  if (text.startsWith("agent:")) return 0;
  const eq = text.indexOf("=");
  return eq > 0 && text.slice(eq + 1).startsWith("agent:") ? eq + 1 : -1;
}

export const agentKind: CandidateKind<AgentKindSpec> = {
  kind: "agent",
  sandboxed: true,
  parse(text) {
    const at = agentAt(text);
    if (at < 0) return null;
    // Bare, the spec names the candidate as builtin:… does.
    const name = at === 0 ? text : text.slice(0, at - 1);
    const [cli, ...model] = text.slice(at + "agent:".length).split(":");
    if (at > 0 && !NAME.test(name)) {
      throw specError(
        text,
        `"${name}" is not a candidate name (letters, digits, and _ . : -)`,
        HINT,
      );
    }
    if (!(AGENT_CLIS as readonly string[]).includes(cli)) {
      throw specError(text, `there is no agent CLI "${cli}"`, HINT);
    }
    const m = model.join(":").trim();
    if (m === "") throw specError(text, "the model is missing", HINT);
    return { kind: "agent", name, cli: cli as AgentCli, model: m };
  },
  describe: () => [
    {
      form: "NAME=agent:CLI:MODEL",
      what: "Claude Code (CLI claude-code) or Codex (codex) with MODEL, in the world's MCP tools",
      example: "claude=agent:claude-code:claude-sonnet-4-5",
    },
    {
      form: "agent:CLI:MODEL",
      what: "the same, named by the spec itself",
      example: "agent:codex:gpt-5",
    },
  ],
  async resolve(spec, ctx) {
    const { kind: _, ...agent } = spec;
    // Loaded by the runs that have agent candidates (the sandbox, the gateway).
    const { createAgentCandidate } = await importLater<typeof import("./agent_cli.ts")>(
      "./agent_cli.ts",
      import.meta.url,
    );
    return await createAgentCandidate(agent, {
      isolation: ctx.isolation,
      env: ctx.env,
      homeDir: ctx.homeDir,
      limits: ctx.limits,
    });
  },
};
