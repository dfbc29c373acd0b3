/**
 * Command candidates as a kind: `NAME=cmd:COMMAND…`, a shell command line run in the
 * world (sandboxed by bubblewrap), with the attempt's world gateway. Named commands of
 * candidates.edn resolve to specs of this kind with their mounts, variables, network,
 * request cap and models.
 */
import type { Candidate } from "../../../core/bench/candidate.ts";
import { isDvergrError } from "../../../core/errors.ts";
import type { CandidateContext, CandidateKind } from "../../../core/ports/candidate_kind.ts";
import { declaredModelIds } from "../../gateway/routes.ts";
import { loadRegistry } from "../../providers/load_registry.ts";
import { NAME, specError } from "../spec_text.ts";
import type { CommandSpec } from "./command.ts";
import { importLater } from "../../../core/import_later.ts";

/** A command candidate's spec: its name, command line and (when named) what else it gets. */
export type CommandKindSpec = { kind: "command" } & CommandSpec;

/** Before its first cell, a command that declares models must name ones the registry knows. */
function checkingModels(c: Candidate, spec: CommandSpec, ctx: CandidateContext): Candidate {
  const models = spec.models;
  if (models === undefined) return c;
  return {
    ...c,
    async preflight() {
      await c.preflight?.();
      const registry = await loadRegistry({ homeDir: ctx.homeDir });
      try {
        declaredModelIds(registry, models);
      } catch (e) {
        if (!isDvergrError(e)) throw e;
        throw specError(
          spec.name,
          `its :models names a model the registry does not know: ${e.message}`,
          e.hint ?? "Name models of the registry in :models",
        );
      }
    },
  };
}

export const commandKind: CandidateKind<CommandKindSpec> = {
  kind: "command",
  inlineCommand: true,
  runsCommands: true,
  sandboxed: true,
  parse(text) {
    const eq = text.indexOf("=");
    if (eq <= 0 || !text.slice(eq + 1).startsWith("cmd:")) return null;
    const name = text.slice(0, eq);
    const command = text.slice(eq + 1 + "cmd:".length).trim();
    if (!NAME.test(name)) {
      throw specError(
        text,
        `"${name}" is not a candidate name (letters, digits, and _ . : -; at most 64)`,
        "Write NAME=cmd:COMMAND, e.g. `naive=cmd:sh agent.sh`",
      );
    }
    if (command === "") throw specError(text, "the command is empty", "Write NAME=cmd:COMMAND");
    return { kind: "command", name, command };
  },
  describe: () => [{
    form: "NAME=cmd:COMMAND",
    what: "a shell command line run in the world",
    example: "mine=cmd:python3 my_agent.py",
  }],
  async resolve(spec, ctx) {
    const { kind: _, ...command } = spec;
    // Loaded by the runs that have command candidates: the sandbox and the gateway are
    // ~40 modules that a run of built-ins or models never needs.
    const { commandCandidate } = await importLater<typeof import("./command.ts")>(
      "./command.ts",
      import.meta.url,
    );
    const { commandGateway } = await importLater<
      typeof import("../../gateway/command_gateway.ts")
    >("../../gateway/command_gateway.ts", import.meta.url);
    // Every command candidate gets the attempt's world gateway (MCP tools, metered models).
    const c = commandCandidate(
      { ...command, mounts: command.mounts ?? ctx.mounts },
      {
        isolation: ctx.isolation,
        env: ctx.env,
        gateway: commandGateway({
          env: ctx.env,
          homeDir: ctx.homeDir,
          maxRequests: command.maxRequests,
          models: command.models,
        }),
        limits: ctx.limits,
      },
    );
    return checkingModels(c, command, ctx);
  },
};
