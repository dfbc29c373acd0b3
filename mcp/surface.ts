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
import { type ToolDefinition, toolDefinition } from "./tool_schema.ts";

/** A JSON-RPC error to answer with (unknown tool -32602, unknown resource -32002, …). */
export class ProtocolError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

/** JSON-RPC error codes the surface answers with. */
export const INVALID_PARAMS = -32602;
export const RESOURCE_NOT_FOUND = -32002;

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
}

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

/** The surface of one selection. */
export function createSurface(opts: SurfaceOptions): Surface {
  const { selection, context, log } = opts;
  const pinned = selection.room;
  const byName = new Map<string, Op>(selection.ops.map((o) => [o.name, o]));
  const tools = toolDefinitions(selection, context.services);
  const resourceTemplates: ResourceTemplate[] = selection.ops
    .filter((o) => o.kind === "read")
    .map((o) => templateOf(o));
  const unknownCode = opts.unknownResourceCode ?? RESOURCE_NOT_FOUND;

  function roomRefused(room: unknown): DvergrError {
    return new DvergrError("USAGE", `This connection works in room ${pinned} only`, {
      hint: `Leave out room (the connection supplies "${pinned}")`,
      details: { room },
    });
  }

  async function run(op: Op, args: Record<string, unknown>, o: CallOptions = {}) {
    const started = performance.now();
    try {
      const value = await callOp(op, { ...context, signal: o.signal, progress: o.progress }, args);
      log(`${op.name} ok ${Math.round(performance.now() - started)} ms`);
      return value;
    } catch (e) {
      if (isDvergrError(e)) log(`${op.name} error[${e.code}]: ${e.message}`);
      else log(`${op.name} failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      throw e;
    }
  }

  function match(uri: string): ResourceMatch {
    const m = matchResource(resourceTemplates, uri);
    if (!m) {
      throw new ProtocolError(unknownCode, `Resource not found: ${uri}`, { uri });
    }
    if (pinned !== null && m.template.op.roomScoped && m.room !== pinned) {
      throw new ProtocolError(
        unknownCode,
        `Resource not found: ${uri} (this connection works in room ${pinned} only)`,
        { uri },
      );
    }
    return m;
  }

  return {
    selection,
    tools,
    templates: resourceTemplates.map((t) => ({
      uriTemplate: t.uriTemplate,
      name: t.op.name,
      title: t.op.title,
      description: t.op.description,
      mimeType: "application/json",
    })),
    async callTool(name, raw, o = {}) {
      const op = byName.get(name);
      if (!op) {
        throw new ProtocolError(
          INVALID_PARAMS,
          `Unknown tool "${name}" (this connection has: ${[...byName.keys()].join(", ")})`,
        );
      }
      let args = { ...raw };
      if (pinned !== null) {
        if (args.room !== undefined && args.room !== pinned) {
          return errorResult(roomRefused(args.room));
        }
        args = { ...args, room: pinned };
      }
      try {
        return toolResult(await run(op, args, o));
      } catch (e) {
        return errorResult(e);
      }
    },
    async listResources() {
      const out: ResourceEntry[] = [];
      const entry = (t: ResourceTemplate, values: Record<string, string>, about: string) => ({
        uri: fillUri(t, values),
        name: `${t.op.name}${about}`,
        title: `${t.op.title}${about}`,
        description: t.op.description,
        mimeType: "application/json",
      });
      for (const t of resourceTemplates) {
        if (t.pathVars.length === 0 && (pinned === null || !t.op.roomScoped)) {
          out.push(entry(t, {}, ""));
        }
      }
      const rooms = pinned !== null ? [pinned] : await context.home.rooms.listRooms();
      for (const room of rooms.slice(0, MAX_LISTED_ROOMS)) {
        for (const name of PER_ROOM) {
          const t = resourceTemplates.find((x) => x.op.name === name);
          if (t && t.pathVars.length === 1 && t.pathVars[0] === "room") {
            out.push(entry(t, { room }, ` (${room})`));
          }
        }
      }
      return out;
    },
    async readResource(uri, o = {}) {
      const m = match(uri);
      let value: unknown;
      try {
        value = await run(m.template.op, m.args, o);
      } catch (e) {
        // A resource that names what is not there (a room, a file) is an unknown resource.
        if (isDvergrError(e) && (e.code === "NOT_FOUND" || e.code === "ROOM_INVALID")) {
          throw new ProtocolError(unknownCode, `Resource not found: ${uri} (${e.message})`, {
            uri,
          });
        }
        if (isDvergrError(e)) {
          throw new ProtocolError(INVALID_PARAMS, e.message, { code: e.code, hint: e.hint });
        }
        throw e;
      }
      return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value) }] };
    },
    async watchRoom(uri) {
      const m = match(uri);
      if (m.room !== null) return m.room;
      if (typeof m.args.job === "string") {
        return (await context.home.state.getJob(m.args.job))?.room ?? null;
      }
      return null;
    },
  };
}
