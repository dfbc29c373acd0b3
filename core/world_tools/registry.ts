/**
 * The world tools registry: every tool an attempt works with, defined once — name, JSON
 * Schema of its arguments, whether it only reads, and a handler over the attempt's world.
 *
 * Two surfaces serve the same registry:
 * - dvergr's agent loop for API models (adapters/candidates/model/agent_loop.ts) turns
 *   `offeredTools(world)` into the provider's tool definitions and answers each call with
 *   `callWorldTool(name, args, world)`;
 * - a per-attempt MCP server (for agent CLIs) lists `offeredTools(world)` as MCP tools
 *   (`readOnly` → `readOnlyHint`, `web` tools → `openWorldHint`) and answers `tools/call`
 *   with `callWorldTool`, turning a `ToolOutput` into a text result (`isError` as given).
 *
 * Which tools an attempt gets depends on its world: `write_file` only for the "developer"
 * profile (and only under the bundle's `:capture`), `web_search`/`web_fetch` only when the
 * attempt has a web (`ToolWorld.web`, given by the host when the bundle's web policy lets
 * anything be read). A tool that fails tells the caller why in its output; it never throws
 * and never ends the attempt. Change a tool's name, description, arguments or behaviour →
 * bump WORLD_TOOLS_VERSION (it is part of candidate identities, hence of experiment ids).
 */
import type { ToolInputSchema, ToolOutput, ToolWorld, WorldTool } from "./types.ts";
export type { ToolInputSchema, ToolOutput, ToolWorld, WorldTool } from "./types.ts";
import { FILE_TOOLS } from "./file_tools.ts";
import { WEB_TOOLS } from "./web_tools.ts";

/** Bump when a tool's name, description, arguments or behaviour changes (it is in identities). */
export const WORLD_TOOLS_VERSION = 3;

/** Every world tool, in the order they are offered. */
export const WORLD_TOOLS: readonly WorldTool[] = [...FILE_TOOLS, ...WEB_TOOLS];

/** Names of every world tool (part of candidate identities). */
export const WORLD_TOOL_NAMES: readonly string[] = WORLD_TOOLS.map((t) => t.name);

/** A tool as a surface lists it. */
export interface OfferedTool {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  readOnly: boolean;
  openWorld: boolean;
}

/** The tools this world offers, with their descriptions for it. */
export function offeredTools(world: ToolWorld): OfferedTool[] {
  return WORLD_TOOLS.filter((t) => t.offered(world)).map((t) => ({
    name: t.name,
    description: t.description(world),
    inputSchema: t.inputSchema,
    readOnly: t.readOnly,
    openWorld: t.openWorld,
  }));
}

function str(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Runs one call of a tool by name. `args` null means the caller's arguments were not a JSON
 * object (`argsProblem` says why). A tool this world does not offer, bad arguments and any
 * failure of the handler come back as error outputs.
 */
export async function callWorldTool(
  name: string,
  args: Record<string, unknown> | null,
  world: ToolWorld,
  opts: { argsProblem?: string | null; signal?: AbortSignal } = {},
): Promise<ToolOutput> {
  const offered = WORLD_TOOLS.filter((t) => t.offered(world));
  const tool = offered.find((t) => t.name === name);
  if (!tool) {
    const known = WORLD_TOOLS.find((t) => t.name === name);
    const why = known === undefined
      ? `there is no tool ${JSON.stringify(name)}`
      : known.name === "write_file"
      ? `the profile ${JSON.stringify(world.profile)} is read-only`
      : `this task may not use ${known.name}`;
    return {
      content: `Error: ${why}. Tools: ${offered.map((t) => t.name).join(", ")}`,
      isError: true,
    };
  }
  if (args === null) {
    return { content: `Error: ${opts.argsProblem ?? "no arguments"}`, isError: true };
  }
  try {
    return await tool.run(args, world, opts.signal);
  } catch (e) {
    return { content: `Error: ${str(e)}`, isError: true };
  }
}
