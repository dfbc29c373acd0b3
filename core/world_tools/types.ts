/** The shapes of world tools and the world they work on (see registry.ts). */
import type { WorldFiles } from "../bench/candidate.ts";
import type { WorldWeb } from "../web/types.ts";

/** The attempt's world as its tools reach it. */
export interface ToolWorld {
  files: WorldFiles;
  /** The bundle's :profile: "developer" may write files; anything else only reads. */
  profile: string;
  /** World directories that may be written (the bundle's :capture). */
  writable: string[];
  /** The attempt's web under the bundle's policy; null when it may read nothing. */
  web: WorldWeb | null;
}

/** A tool's answer: text for the model or client; `isError` when the call did not do its work. */
export interface ToolOutput {
  content: string;
  isError: boolean;
}

/** A closed JSON Schema object of string/integer properties (flat, as MCP clients want). */
export interface ToolInputSchema {
  type: "object";
  properties: Record<string, { type: "string" | "integer"; description: string }>;
  required: string[];
  additionalProperties: false;
}

export interface WorldTool {
  name: string;
  /** True when the tool changes nothing in the world (MCP readOnlyHint). */
  readOnly: boolean;
  /** True when the tool reaches outside the world (the web; MCP openWorldHint). */
  openWorld: boolean;
  inputSchema: ToolInputSchema;
  /** Whether this world offers the tool. */
  offered(world: ToolWorld): boolean;
  /** The description given to the model or client (may name the world's writable dirs). */
  description(world: ToolWorld): string;
  /** Does the work; failures come back as `isError` outputs, never as throws. */
  run(args: Record<string, unknown>, world: ToolWorld, signal?: AbortSignal): Promise<ToolOutput>;
}
