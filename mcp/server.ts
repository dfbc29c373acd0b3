/**
 * The MCP server of one handshake connection (protocol versions 2024-11-05 … 2025-11-25):
 * tools from the selection's ops, every read op as a resource (with templates and
 * subscriptions), and logging. Built on the SDK's low-level Server, since our input schemas
 * are JSON Schema derived from the ops' zod schemas (flat and closed), not zod shapes to
 * register; what the tools and resources say comes from the surface (surface.ts), which the
 * stateless era (stateless.ts) shares.
 *
 * Requests run concurrently (a job_status wait does not hold up other calls). A call with
 * `_meta.progressToken` gets notifications/progress while it runs. A subscription sends
 * notifications/resources/updated after each durable change of the resource's room, by any
 * process on the home, at most every 300 ms. A job a call started is followed: its progress
 * and how it ended go to the client as log messages (logger "dvergr.job"), as do failed calls.
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { OpContext, OpProgress } from "../core/ops/op.ts";
import type { JobRecord } from "../core/ports/state_store.ts";
import { VERSION } from "../core/version.ts";
import type { Selection } from "./selection.ts";
import { createSurface, ProtocolError, type Surface } from "./surface.ts";
import { createRoomWatcher, homeVersion, type RoomWatcher, throttle } from "./room_watch.ts";
import type { JsEvalRunner } from "./code_profile.ts";
import { narrowSelection, requestedSelection } from "./meta_selection.ts";

export interface McpServerOptions {
  /** What every call's ops get; signal and progress are added per call. */
  context: Omit<OpContext, "signal" | "progress">;
  selection: Selection;
  /** Where logs go (stderr: on stdio, stdout is the protocol). */
  log: (line: string) => void;
  /** Shared by the connections of a server; one of its own when absent. */
  watcher?: RoomWatcher;
  /** The code profile's sandbox, for a client selecting it in initialize's _meta. */
  jsEval?: JsEvalRunner;
}

export const INSTRUCTIONS = `dvergr builds, calibrates and benchmarks workflow bundles.
A bundle lives in a room at workflows/<name>/. From a table of historical cases:
room_create → room_write the table → catalog_cases → catalog_calibrate →
catalog_benchmark (returns a job and the experiment id) → job_status {job, wait_ms: 25000}
until it is not running → scorecard_list / scorecard_detail → experiment_report.
Every read is also a resource (resources/templates/list); subscribe to one to hear of changes.`;

/** The least time between two updates of one subscription. */
export const UPDATE_EVERY_MS = 300;

/** The capabilities of a server of `surface` (both eras). */
export function capabilitiesOf(surface: Surface): Record<string, unknown> {
  return {
    // A connection's tools and prompts are fixed once it is set up: they never change.
    tools: { listChanged: false },
    ...(surface.templates.length > 0 ? { resources: { subscribe: true, listChanged: true } } : {}),
    prompts: { listChanged: false },
    completions: {},
    logging: {},
  };
}

/** How often a connection looks whether the home's rooms changed (resources list_changed). */
export const ROOM_LIST_EVERY_MS = 1000;

/**
 * Waits until the call's progress notifications are sent, then a little more when there
 * were any: the SDK's client handles a notification a microtask later than a response read
 * in the same chunk, and drops progress that comes after its response.
 */
async function flushProgress(sending: Promise<void>[]): Promise<void> {
  if (sending.length === 0) return;
  await Promise.all(sending);
  await new Promise((r) => setTimeout(r, 50));
}

/** As an SDK handler error: the SDK answers with its code and message. */
function asRpcError(e: unknown): unknown {
  if (e instanceof ProtocolError) {
    return Object.assign(new Error(e.message), { code: e.code, data: e.data });
  }
  return e;
}

/** tools/call with any params: see where it is registered. */
const LOOSE_TOOLS_CALL = z.looseObject({ method: z.literal("tools/call"), params: z.unknown() });

type Level = "info" | "warning" | "error";

/** The log message of a followed job's record, or null when nothing changed worth saying. */
export function jobLogMessage(
  job: JobRecord,
  before: JobRecord | null,
): { level: Level; data: Record<string, unknown> } | null {
  const p = job.progress;
  const data = {
    job: job.id,
    kind: job.kind,
    room: job.room,
    status: job.status,
    progress: p,
    ...(job.error ? { error: job.error } : {}),
    ...(job.reason ? { reason: job.reason } : {}),
  };
  if (job.status !== "running") {
    const level = job.status === "succeeded"
      ? "info"
      : job.status === "failed"
      ? "error"
      : "warning";
    return { level, data };
  }
  if (before && JSON.stringify(before.progress) === JSON.stringify(p)) return null;
  const moreFaults = before !== null && p.faults > before.progress.faults;
  return { level: moreFaults ? "warning" : "info", data };
}

/** What the parts of one connection's server share. */
interface Connection {
  opts: McpServerOptions;
  server: Server;
  /** The surface of the connection's selection (initialize's _meta may narrow it). */
  surface: Surface;
  watcher: RoomWatcher;
  /** Stops what runs for the connection (followed jobs, subscriptions, the room list watch). */
  stops: Set<() => void>;
  sendLog(level: Level, logger: string, data: unknown): Promise<void>;
}

/** Sends a followed job's progress and end as log messages until it ends. */
async function followJob(c: Connection, id: string): Promise<void> {
  const state = c.opts.context.home.state;
  let before = await state.getJob(id);
  if (!before || before.status !== "running") return;
  let busy = false;
  const look = async () => {
    if (busy) return;
    busy = true;
    try {
      const job = await state.getJob(id);
      if (!job) return;
      const msg = jobLogMessage(job, before);
      before = job;
      if (msg) await c.sendLog(msg.level, "dvergr.job", msg.data);
      if (job.status !== "running") stop();
    } finally {
      busy = false;
    }
  };
  const t = throttle(() => void look(), UPDATE_EVERY_MS);
  const unwatch = c.watcher.watch(before.room, () => t.call());
  const stop = () => {
    unwatch();
    t.stop();
    c.stops.delete(stop);
  };
  c.stops.add(stop);
}

/** initialize: the SDK's own, after taking the selection the client asks for in _meta. */
function registerInitialize(c: Connection): void {
  const { opts, server } = c;
  const sdkInitialize = (server as unknown as {
    _oninitialize(r: unknown): Promise<Record<string, unknown>>;
  })._oninitialize.bind(server);
  server.setRequestHandler(InitializeRequestSchema, async (req) => {
    try {
      const asked = requestedSelection((req.params._meta ?? {}) as Record<string, unknown>);
      if (asked !== null) {
        const selection = narrowSelection(opts.selection, asked, { jsEval: opts.jsEval });
        c.surface = createSurface({ context: opts.context, selection, log: opts.log });
        opts.log(`initialize selects ${selection.label} (${selection.ops.length} tools)`);
      }
    } catch (e) {
      throw asRpcError(e);
    }
    return await sdkInitialize(req);
  });
}

/** tools/list and tools/call (with progress, failed calls logged, started jobs followed). */
function registerTools(c: Connection): void {
  const { server } = c;
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: c.surface.tools }));
  // Registered under a loose schema: the SDK's tools/call wrapper then validates the request
  // and answers a malformed one with -32602. Under CallToolRequestSchema itself, the
  // registration's own parse fails first and the client gets -32603 and a zod dump.
  server.setRequestHandler(LOOSE_TOOLS_CALL, async (loose, extra) => {
    const req = CallToolRequestSchema.parse(loose);
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
    try {
      const result = await c.surface.callTool(req.params.name, req.params.arguments ?? {}, {
        signal: extra.signal,
        progress,
      });
      await flushProgress(sending);
      const value = result.structuredContent;
      if (result.isError) {
        void c.sendLog("warning", "dvergr.tools", { tool: req.params.name, ...value });
      } else if (value && typeof value.job === "string") {
        void followJob(c, value.job).catch(() => {});
      }
      return result;
    } catch (e) {
      await flushProgress(sending);
      throw asRpcError(e);
    }
  });
}

/**
 * Sends notifications/resources/list_changed when the home's rooms change (resources/list
 * lists reads per room), looking at most every ROOM_LIST_EVERY_MS while connected.
 */
function watchRoomList(c: Connection): void {
  const rooms = c.opts.context.home.rooms;
  let last: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const look = async () => {
    timer = undefined;
    try {
      const now = (await rooms.listRooms()).join("\n");
      if (last !== null && now !== last) {
        await c.server.sendResourceListChanged().catch(() => {});
      }
      last = now;
    } catch {
      // A room being made or removed: look again next time.
    }
    if (!stopped) {
      const t = setTimeout(() => void look(), ROOM_LIST_EVERY_MS);
      timer = t;
      Deno.unrefTimer(t as unknown as number);
    }
  };
  void look();
  c.stops.add(() => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  });
}

/** Resources: list, templates, read, subscribe (updates after each change of the room). */
function registerResources(c: Connection): void {
  const { server } = c;
  const subscriptions = new Map<string, () => void>();
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: await c.surface.listResources(),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: c.surface.templates,
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    try {
      return await c.surface.readResource(req.params.uri, { signal: extra.signal });
    } catch (e) {
      throw asRpcError(e);
    }
  });
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    const uri = req.params.uri;
    let room: string | null;
    try {
      room = await c.surface.watchRoom(uri);
    } catch (e) {
      throw asRpcError(e);
    }
    if (!subscriptions.has(uri)) {
      const t = throttle(
        () => void server.sendResourceUpdated({ uri }).catch(() => {}),
        UPDATE_EVERY_MS,
      );
      const unwatch = c.watcher.watch(room, () => t.call());
      subscriptions.set(uri, () => {
        unwatch();
        t.stop();
      });
    }
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    subscriptions.get(req.params.uri)?.();
    subscriptions.delete(req.params.uri);
    return {};
  });
  c.stops.add(() => {
    for (const stop of subscriptions.values()) stop();
    subscriptions.clear();
  });
  watchRoomList(c);
}

/** prompts/list, prompts/get and completion/complete. */
function registerPrompts(c: Connection): void {
  const { server } = c;
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: c.surface.prompts }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => {
    try {
      return c.surface.getPrompt(req.params.name, req.params.arguments ?? {});
    } catch (e) {
      throw asRpcError(e);
    }
  });
  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const ref = req.params.ref.type === "ref/prompt"
      ? { type: "ref/prompt" as const, name: req.params.ref.name }
      : { type: "ref/resource" as const, uri: req.params.ref.uri };
    const completion = await c.surface.complete(
      ref,
      req.params.argument,
      req.params.context?.arguments ?? {},
    );
    return { completion };
  });
}

/** Creates the server of one connection (not yet connected to a transport). */
export function createMcpServer(opts: McpServerOptions): Server {
  const surface = createSurface({
    context: opts.context,
    selection: opts.selection,
    log: opts.log,
  });
  const ownWatcher = opts.watcher ? null : createRoomWatcher(homeVersion(opts.context.home));
  const server = new Server(
    { name: "dvergr", title: "dvergr", version: VERSION },
    { capabilities: capabilitiesOf(surface), instructions: INSTRUCTIONS },
  );
  const c: Connection = {
    opts,
    server,
    surface,
    watcher: opts.watcher ?? ownWatcher!,
    stops: new Set(),
    sendLog: (level, logger, data) =>
      server.sendLoggingMessage({ level, logger, data }, server.transport?.sessionId)
        .catch(() => {}),
  };
  registerInitialize(c);
  registerTools(c);
  if (surface.templates.length > 0) registerResources(c);
  registerPrompts(c);
  const onclose = server.onclose;
  server.onclose = () => {
    for (const stop of [...c.stops]) stop();
    c.stops.clear();
    ownWatcher?.close();
    onclose?.();
  };
  return server;
}
