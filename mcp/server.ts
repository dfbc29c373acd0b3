/**
 * The MCP server of one connection: tools/list gives the selection's ops as tools,
 * tools/call validates and runs an op (callOp) and shapes its result. Built on the SDK's
 * low-level Server, since our input schemas are JSON Schema derived from the ops' zod
 * schemas (flat and closed), not zod shapes to register.
 *
 * Requests run concurrently (a job_status wait does not hold up other calls). A call with
 * `_meta.progressToken` gets notifications/progress while it runs.
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { DvergrError, isDvergrError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import type { Op, OpContext, OpProgress } from "../core/ops/op.ts";
import { VERSION } from "../core/version.ts";
import { errorResult, toolResult } from "./result.ts";
import type { Selection } from "./selection.ts";
import { toolDefinition } from "./tool_schema.ts";

export interface McpServerOptions {
  /** What every call's ops get; signal and progress are added per call. */
  context: Omit<OpContext, "signal" | "progress">;
  selection: Selection;
  /** Where logs go (stderr: on stdio, stdout is the protocol). */
  log: (line: string) => void;
}

const INSTRUCTIONS = `dvergr builds, calibrates and benchmarks workflow bundles.
A bundle lives in a room at workflows/<name>/. From a table of historical cases:
room_create → room_write the table → catalog_cases → catalog_calibrate →
catalog_benchmark (returns a job and the experiment id) → job_status {job, wait_ms: 25000}
until it is not running → scorecard_list / scorecard_detail → experiment_report.`;

/**
 * Waits until the call's progress notifications are sent, then a little more when there
 * were any: the SDK's client handles a notification a microtask later than a response read
 * in the same chunk, and drops progress that comes after its response.
 */
async function flushProgress(sending: Promise<void>[]): Promise<void> {
  if (sending.length === 0) return;
  await Promise.all(sending);
  await new Promise((r) => setTimeout(r, 15));
}

/** tools/call with any params: see where it is registered. */
const LOOSE_TOOLS_CALL = z.looseObject({ method: z.literal("tools/call"), params: z.unknown() });

/** Creates the server of one connection (not yet connected to a transport). */
export function createMcpServer(opts: McpServerOptions): Server {
  const { selection, context, log } = opts;
  const pinned = selection.room !== null;
  const byName = new Map<string, Op>(selection.ops.map((o) => [o.name, o]));
  const tools = selection.ops.map((op) => toolDefinition(op, { pinnedRoom: pinned }));

  const server = new Server(
    { name: "dvergr", title: "dvergr", version: VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  // Registered under a loose schema: the SDK's tools/call wrapper then validates the request
  // and answers a malformed one with -32602. Under CallToolRequestSchema itself, the
  // registration's own parse fails first and the client gets -32603 and a zod dump.
  server.setRequestHandler(LOOSE_TOOLS_CALL, async (loose, extra) => {
    const req = CallToolRequestSchema.parse(loose);
    const op = byName.get(req.params.name);
    if (!op) {
      // -32602, as the spec says for an unknown tool (McpError would prefix its own text).
      throw Object.assign(
        new Error(
          `Unknown tool "${req.params.name}" (this connection has: ${
            [...byName.keys()].join(", ")
          })`,
        ),
        { code: ErrorCode.InvalidParams },
      );
    }
    let args: Record<string, unknown> = { ...(req.params.arguments ?? {}) };
    if (pinned) {
      if (args.room !== undefined && args.room !== selection.room) {
        return errorResult(
          new DvergrError("USAGE", `This connection works in room ${selection.room} only`, {
            hint: `Leave out room (the connection supplies "${selection.room}")`,
            details: { room: args.room },
          }),
        );
      }
      args = { ...args, room: selection.room };
    }
    const token = req.params._meta?.progressToken;
    let last = -Infinity;
    const sending: Promise<void>[] = [];
    const progress = token === undefined ? undefined : (p: OpProgress) => {
      // Progress must increase; a report that does not move is dropped.
      if (!(p.progress > last)) return;
      last = p.progress;
      const sent = extra.sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: p.progress,
          ...(p.total !== undefined ? { total: p.total } : {}),
          ...(p.message !== undefined ? { message: p.message } : {}),
        },
      }).catch(() => {}); // The request may have been cancelled meanwhile.
      sending.push(sent);
    };
    const started = performance.now();
    try {
      const value = await callOp(op, { ...context, signal: extra.signal, progress }, args);
      await flushProgress(sending);
      log(`${op.name} ok ${Math.round(performance.now() - started)} ms`);
      return toolResult(value);
    } catch (e) {
      await flushProgress(sending);
      if (isDvergrError(e)) log(`${op.name} error[${e.code}]: ${e.message}`);
      else log(`${op.name} failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      return errorResult(e);
    }
  });
  return server;
}
