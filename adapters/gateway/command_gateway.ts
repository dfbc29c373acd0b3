/**
 * The world gateway every command candidate gets: the attempt's world tools over MCP and
 * the model gateway routing by the model a request names, among the attempt's models
 * (routes.ts), within the attempt's budget and a request cap.
 */
import type { AttemptContext } from "../../core/bench/candidate.ts";
import type { ModelRegistry } from "../../core/models/registry.ts";
import { loadRegistry } from "../providers/load_registry.ts";
import type { GatewayFactory } from "./attempt_gateway.ts";
import { callWorldTool, offeredTools, type ToolWorld } from "../../core/world_tools/registry.ts";
import { type AttemptGatewayOptions, startAttemptGateway } from "./attempt_gateway.ts";
import type { ModelRoute } from "./model_gateway.ts";
import { registryRouter } from "./routes.ts";
import type { ProviderApi } from "./usage_meter.ts";
import type { WorldToolset } from "./world_mcp.ts";

/** Model requests a plain command candidate may make per attempt, unless configured. */
export const DEFAULT_COMMAND_MAX_REQUESTS = 100;

/**
 * The attempt's world tools for its MCP server: the registry the model agent loop uses, so
 * web_search/web_fetch appear exactly when the bundle's web policy gives the attempt a web.
 */
export function worldToolset(ctx: AttemptContext): WorldToolset {
  const world: ToolWorld = {
    files: ctx.world,
    profile: ctx.profile,
    writable: ctx.writable,
    web: ctx.web ?? null,
  };
  return {
    tools: offeredTools(world),
    run: (name, args) => callWorldTool(name, args, world, { signal: ctx.signal }),
  };
}

export interface CommandGatewayOptions {
  env: (name: string) => string | undefined;
  /** The home, whose models.edn merges over the shipped registry. */
  homeDir?: string;
  /** A registry already loaded (tests). */
  registry?: ModelRegistry;
  maxRequests?: number;
  /**
   * The models the candidate declares (names of the registry); without them the default
   * scope (routes.ts). Requests for other models are refused and fail the attempt.
   */
  models?: string[];
  /** Routes requests to one model whatever they name (agent CLIs). */
  pinned?: (registry: ModelRegistry) => ModelRoute | { problem: string };
  /**
   * Tool-name prefix the first model request must offer (agent CLIs: "mcp__world"): such a
   * candidate always asks the MCP server, whose module is then loaded before it starts.
   */
  requireToolPrefix?: string;
  fetchImpl?: typeof fetch;
  /** Wraps the MCP server's handler (tests: a slow or failing MCP start). */
  wrapMcp?: AttemptGatewayOptions["wrapMcp"];
}

/** The forwarder `DVERGR_FORWARDER` asks for ("socat" or "deno"; else the lightest there). */
function forwarderChoice(text: string | undefined): "socat" | "deno" | undefined {
  return text === "socat" || text === "deno" ? text : undefined;
}

/** A gateway factory for command candidates. */
export function commandGateway(opts: CommandGatewayOptions): GatewayFactory {
  let registry: Promise<ModelRegistry> | null = opts.registry
    ? Promise.resolve(opts.registry)
    : null;
  return async (ctx, transport) => {
    registry ??= loadRegistry({ homeDir: opts.homeDir });
    const reg = await registry;
    const pinned = opts.pinned ? opts.pinned(reg) : null;
    const byModel = pinned ? null : registryRouter(reg, opts.env, opts.models);
    return await startAttemptGateway(ctx, {
      transport,
      forwarder: forwarderChoice(opts.env("DVERGR_FORWARDER")),
      toolset: worldToolset(ctx),
      wrapMcp: opts.wrapMcp,
      mcpExpected: opts.requireToolPrefix !== undefined,
      model: {
        route: (model: string | undefined, _api: ProviderApi) => pinned ?? byModel!(model),
        budgetMicros: ctx.budgetMicros,
        maxRequests: opts.maxRequests ?? DEFAULT_COMMAND_MAX_REQUESTS,
        requireToolPrefix: opts.requireToolPrefix,
        unrestrictedWeb: ctx.web?.unrestricted === true,
        fetchImpl: opts.fetchImpl,
      },
    });
  };
}
