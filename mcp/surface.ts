/**
 * What one selection of ops offers a client, whatever the protocol era or transport: the
 * tools (and calling one), and the resources (every read op, by URI template: listing,
 * reading, and which room a subscription to one watches). The handshake server (server.ts)
 * and the stateless layer (stateless.ts) are both built on it, so both eras say the same.
 */
import { DvergrError, isDvergrError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import { explainedOp, type Op, type OpContext, type OpProgress } from "../core/ops/op.ts";
import { errorResult, type ToolResult, toolResult } from "./result.ts";
import {
  fillUri,
  matchResource,
  type ResourceMatch,
  type ResourceTemplate,
  templateOf,
} from "./resources.ts";
import type { Selection } from "./selection.ts";
import type { Services } from "../core/ports/services.ts";
import type { FormatValue, JsonFormat } from "../core/json_format.ts";
import { formatted } from "../core/json_document.ts";
import { getPrompt, type PromptDefinition, promptsFor } from "./prompts.ts";
import { complete, type Completion } from "./completions.ts";
import { type ToolDefinition, toolDefinition } from "./tool_schema.ts";

import { INVALID_PARAMS, ProtocolError, RESOURCE_NOT_FOUND } from "./protocol_error.ts";
export { INVALID_PARAMS, ProtocolError, RESOURCE_NOT_FOUND };

export interface ResourceEntry {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

export interface TemplateEntry {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  progress?: (p: OpProgress) => void;
}

export interface Surface {
  selection: Selection;
  tools: ToolDefinition[];
  templates: TemplateEntry[];
  /** Runs a tool; a user's mistake is an isError result, an unknown tool a ProtocolError. */
  callTool(name: string, args: Record<string, unknown>, opts?: CallOptions): Promise<ToolResult>;
  /** The direct resources: the home's room list and, per room, its main reads. */
  listResources(): Promise<ResourceEntry[]>;
  /** Reads a resource (its op's result as JSON), or throws a ProtocolError when unknown. */
  readResource(
    uri: string,
    opts?: CallOptions,
  ): Promise<{ contents: { uri: string; mimeType: string; text: string }[] }>;
  /**
   * The room a subscription to `uri` watches (null: the whole home), or a ProtocolError
   * when the selection has no such resource.
   */
  watchRoom(uri: string): Promise<string | null>;
  /** The prompts of this selection (those whose tools it has). */
  prompts: PromptDefinition[];
  /** prompts/get; a ProtocolError for an unknown prompt or a missing argument. */
  getPrompt(name: string, args: Record<string, unknown>): ReturnType<typeof getPrompt>;
  /** completion/complete of a prompt's argument or a resource template's variable. */
  complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    context: Record<string, string>,
  ): Promise<Completion>;
}

/** What completion/complete completes: a prompt's argument or a resource template's variable. */
export type CompletionRef = { type: "ref/prompt"; name: string } | {
  type: "ref/resource";
  uri: string;
};

export interface SurfaceOptions {
  context: Omit<OpContext, "signal" | "progress">;
  selection: Selection;
  log: (line: string) => void;
  /** Code of the unknown-resource error: -32002 (handshake) or -32602 (stateless). */
  unknownResourceCode?: number;
}

/** Direct resources listed per room (when their op is in the selection). */
const PER_ROOM = [
  "room_files",
  "room_log",
  "catalog_list",
  "scorecard_list",
  "experiment_progress",
];
/** Rooms listed in resources/list at most (the templates reach every room). */
const MAX_LISTED_ROOMS = 100;

/** The selection's tools as clients see them with these adapters (explained ops). */
function toolDefinitions(selection: Selection, services: Services): ToolDefinition[] {
  const pinnedRoom = selection.room !== null;
  return selection.ops.map((op) => toolDefinition(explainedOp(op, services), { pinnedRoom }));
}

/** What the surface's parts share: the selection, its ops and templates, how it logs. */
interface Parts {
  context: SurfaceOptions["context"];
  log: (line: string) => void;
  pinned: string | null;
  byName: Map<string, Op>;
  templates: ResourceTemplate[];
  unknownCode: number;
}

/** Runs an op with the connection's context, logging how it went. */
async function run(parts: Parts, op: Op, args: Record<string, unknown>, o: CallOptions = {}) {
  const started = performance.now();
  try {
    const value = await callOp(
      op,
      { ...parts.context, signal: o.signal, progress: o.progress },
      args,
    );
    parts.log(`${op.name} ok ${Math.round(performance.now() - started)} ms`);
    return value;
  } catch (e) {
    if (isDvergrError(e)) parts.log(`${op.name} error[${e.code}]: ${e.message}`);
    else parts.log(`${op.name} failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    throw e;
  }
}

/** The template and arguments of a URI, or a ProtocolError naming it as unknown. */
function match(parts: Parts, uri: string): ResourceMatch {
  const m = matchResource(parts.templates, uri);
  if (!m) throw new ProtocolError(parts.unknownCode, `Resource not found: ${uri}`, { uri });
  if (parts.pinned !== null && m.template.op.roomScoped && m.room !== parts.pinned) {
    throw new ProtocolError(
      parts.unknownCode,
      `Resource not found: ${uri} (this connection works in room ${parts.pinned} only)`,
      { uri },
    );
  }
  return m;
}

async function callTool(
  parts: Parts,
  name: string,
  raw: Record<string, unknown>,
  o: CallOptions,
): Promise<ToolResult> {
  const op = parts.byName.get(name);
  if (!op) {
    throw new ProtocolError(
      INVALID_PARAMS,
      `Unknown tool "${name}" (this connection has: ${[...parts.byName.keys()].join(", ")})`,
    );
  }
  let args = { ...raw };
  const pinned = parts.pinned;
  if (pinned !== null) {
    if (args.room !== undefined && args.room !== pinned) {
      return errorResult(
        new DvergrError("USAGE", `This connection works in room ${pinned} only`, {
          hint: `Leave out room (the connection supplies "${pinned}")`,
          details: { room: args.room },
        }),
      );
    }
    args = { ...args, room: pinned };
  }
  try {
    return toolResult(await run(parts, op, args, o), op.output);
  } catch (e) {
    return errorResult(e);
  }
}

/** The parameters of a template's op a reading must give (other than its path variables). */
function requiredQuery(t: ResourceTemplate): string[] {
  return t.queryVars.filter((k) =>
    !(t.op.input.shape[k] as { isOptional(): boolean }).isOptional()
  );
}

/**
 * The resources listed: every template that names no variable a reading must give, and per
 * room (at most MAX_LISTED_ROOMS) the main reads of PER_ROOM. Each one can be read as listed.
 */
async function listResources(parts: Parts): Promise<ResourceEntry[]> {
  const out: ResourceEntry[] = [];
  const entry = (t: ResourceTemplate, values: Record<string, string>, about: string) => ({
    uri: fillUri(t, values),
    name: `${t.op.name}${about}`,
    title: `${t.op.title}${about}`,
    description: t.op.description,
    mimeType: "application/json",
  });
  const pinned = parts.pinned;
  const readable = (t: ResourceTemplate) => requiredQuery(t).length === 0;
  for (const t of parts.templates) {
    if (t.pathVars.length === 0 && readable(t) && (pinned === null || !t.op.roomScoped)) {
      out.push(entry(t, {}, ""));
    }
  }
  const rooms = pinned !== null ? [pinned] : await parts.context.home.rooms.listRooms();
  for (const room of rooms.slice(0, MAX_LISTED_ROOMS)) {
    for (const name of PER_ROOM) {
      const t = parts.templates.find((x) => x.op.name === name);
      if (t && t.pathVars.length === 1 && t.pathVars[0] === "room" && readable(t)) {
        out.push(entry(t, { room }, ` (${room})`));
      }
    }
  }
  return out;
}

async function readResource(parts: Parts, uri: string, o: CallOptions) {
  const m = match(parts, uri);
  let value: unknown;
  try {
    value = await run(parts, m.template.op, m.args, o);
  } catch (e) {
    // A resource that names what is not there (a room, a file) is an unknown resource.
    if (isDvergrError(e) && (e.code === "NOT_FOUND" || e.code === "ROOM_INVALID")) {
      throw new ProtocolError(parts.unknownCode, `Resource not found: ${uri} (${e.message})`, {
        uri,
      });
    }
    if (isDvergrError(e)) {
      throw new ProtocolError(INVALID_PARAMS, e.message, { code: e.code, hint: e.hint });
    }
    throw e;
  }
  const doc = formatted(m.template.op.output, value as FormatValue<JsonFormat>);
  return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(doc) }] };
}

/** The variables a completion reference offers: a prompt's arguments or a template's. */
function completable(parts: Parts, prompts: PromptDefinition[], ref: CompletionRef): string[] {
  if (ref.type === "ref/prompt") {
    return prompts.find((p) => p.name === ref.name)?.arguments.map((a) => a.name) ?? [];
  }
  const t = parts.templates.find((x) => x.uriTemplate === ref.uri);
  return t ? [...t.pathVars, ...t.queryVars] : [];
}

/** The surface of one selection. */
export function createSurface(opts: SurfaceOptions): Surface {
  const { selection, context } = opts;
  const pinned = selection.room;
  const parts: Parts = {
    context,
    log: opts.log,
    pinned,
    byName: new Map<string, Op>(selection.ops.map((o) => [o.name, o])),
    templates: selection.ops.filter((o) => o.kind === "read").map((o) => templateOf(o)),
    unknownCode: opts.unknownResourceCode ?? RESOURCE_NOT_FOUND,
  };
  const toolNames = selection.ops.map((o) => o.name);
  const prompts = promptsFor(toolNames);
  return {
    selection,
    tools: toolDefinitions(selection, context.services),
    templates: parts.templates.map((t) => ({
      uriTemplate: t.uriTemplate,
      name: t.op.name,
      title: t.op.title,
      description: t.op.description,
      mimeType: "application/json",
    })),
    prompts,
    callTool: (name, raw, o = {}) => callTool(parts, name, raw, o),
    listResources: () => listResources(parts),
    readResource: (uri, o = {}) => readResource(parts, uri, o),
    async watchRoom(uri) {
      const m = match(parts, uri);
      if (m.room !== null) return m.room;
      if (typeof m.args.job === "string") {
        return (await context.home.state.getJob(m.args.job))?.room ?? null;
      }
      return null;
    },
    getPrompt: (name, args) => getPrompt(toolNames, name, args),
    async complete(ref, argument, given) {
      if (!completable(parts, prompts, ref).includes(argument.name)) {
        return { values: [], total: 0, hasMore: false };
      }
      const withRoom = pinned !== null ? { ...given, room: pinned } : given;
      return await complete(context.home, argument, withRoom);
    },
  };
}
