/**
 * The world's MCP server of one attempt (Streamable HTTP): the same world tools the model
 * agent loop gives an API model (core/world_tools/registry.ts), so every candidate works
 * with the same tools. Every call is logged as evidence: tool, arguments (long strings cut),
 * result size, error flag, time.
 *
 * Permissions: none beyond the world's files (the attempt's WorldFiles).
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { readInitialize } from "./mcp_initialize.ts";
import { VERSION } from "../../core/version.ts";
import type { OfferedTool, ToolOutput } from "../../core/world_tools/registry.ts";
import { BodyBytes } from "./request_body.ts";

/** The tools of one attempt and how to run them. */
export interface WorldToolset {
  tools: OfferedTool[];
  run(name: string, args: Record<string, unknown>): Promise<ToolOutput>;
}

export interface McpCallLogEntry {
  /** Milliseconds since the server started. */
  at: number;
  tool: string;
  args: Record<string, unknown>;
  resultChars: number;
  isError: boolean;
  ms: number;
}

export interface WorldMcp {
  handle(req: Request): Promise<Response>;
  /** Every tools/call, in order (bounded). */
  calls: McpCallLogEntry[];
  /** tools/list requests answered. */
  listed(): number;
  close(): Promise<void>;
}

const MAX_LOG = 1000;
const ARG_CHARS = 200;
const MAX_SESSIONS = 8;
/**
 * Largest request body, bytes: a write_file of the largest content the world tools take
 * (WRITE_LIMIT characters), JSON-escaped, fits.
 */
export const MAX_MCP_BODY = 8 * 1024 * 1024;
/** Bytes of request bodies the server holds at once (read, or their call running). */
export const MAX_MCP_BODIES_HELD = 2 * MAX_MCP_BODY;

/** Arguments for the log: strings over 200 characters cut, with their length. */
function loggedArgs(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (typeof v === "string" && v.length > ARG_CHARS) {
      out[k] = `${v.slice(0, ARG_CHARS)}… (${v.length} chars)`;
    } else if (typeof v === "object" && v !== null) {
      const s = JSON.stringify(v);
      out[k] = s.length > ARG_CHARS ? `${s.slice(0, ARG_CHARS)}… (${s.length} chars)` : v;
    } else out[k] = v;
  }
  return out;
}

function jsonError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** What one attempt's MCP server knows, shared by its steps. */
interface McpState {
  toolset: WorldToolset;
  byName: Map<string, OfferedTool>;
  calls: McpCallLogEntry[];
  listed: number;
  now: () => number;
  t0: number;
  bodies: BodyBytes;
  sessions: Map<string, { transport: WebStandardStreamableHTTPServerTransport; server: Server }>;
}

/** An MCP server for one attempt's world tools. */
export function createWorldMcp(
  toolset: WorldToolset,
  opts: { now?: () => number } = {},
): WorldMcp {
  const now = opts.now ?? (() => performance.now());
  const s: McpState = {
    toolset,
    byName: new Map(toolset.tools.map((t) => [t.name, t])),
    calls: [],
    listed: 0,
    now,
    t0: now(),
    bodies: new BodyBytes(MAX_MCP_BODY, MAX_MCP_BODIES_HELD),
    sessions: new Map(),
  };
  return {
    handle: (req) => handleMcp(s, req),
    calls: s.calls,
    listed: () => s.listed,
    async close() {
      for (const { transport, server } of s.sessions.values()) {
        await transport.close().catch(() => {});
        await server.close().catch(() => {});
      }
      s.sessions.clear();
    },
  };
}

/** The MCP server of one session: tools/list and tools/call over the attempt's tools. */
function makeServer(s: McpState): Server {
  const server = new Server(
    { name: "dvergr-world", title: "dvergr world", version: VERSION },
    {
      capabilities: { tools: {} },
      instructions: "The files of your task's world. Paths are absolute: /docs/…, /out/….",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => {
    s.listed++;
    return {
      tools: s.toolset.tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
        annotations: { readOnlyHint: t.readOnly, openWorldHint: t.openWorld },
      })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, (req) => callTool(s, req.params));
  return server;
}

/** Runs one tools/call and logs it. */
async function callTool(
  s: McpState,
  params: { name: string; arguments?: Record<string, unknown> },
) {
  const name = params.name;
  if (!s.byName.has(name)) {
    throw Object.assign(
      new Error(`Unknown tool "${name}" (tools: ${[...s.byName.keys()].join(", ")})`),
      { code: ErrorCode.InvalidParams },
    );
  }
  const args = (params.arguments ?? {}) as Record<string, unknown>;
  const started = s.now();
  const result = await s.toolset.run(name, args);
  if (s.calls.length < MAX_LOG) {
    s.calls.push({
      at: Math.round(started - s.t0),
      tool: name,
      args: loggedArgs(args),
      resultChars: result.content.length,
      isError: result.isError,
      ms: Math.round(s.now() - started),
    });
  }
  return {
    content: [{ type: "text" as const, text: result.content }],
    ...(result.isError ? { isError: true } : {}),
  };
}

/** A POST's body read within its bounds and parsed (held until `run` ends), or an error. */
async function withBody(
  s: McpState,
  req: Request,
  run: (body: unknown) => Promise<Response>,
): Promise<Response> {
  const read = await s.bodies.read(req);
  if (!read.ok) return jsonError(413, -32000, read.message);
  try {
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(read.bytes));
    } catch {
      return jsonError(400, -32700, "Parse error: the body is not JSON");
    }
    return await run(body);
  } finally {
    s.bodies.release(read.bytes.length);
  }
}

/** Routes a request to its session, or opens one with an initialize. */
async function handleMcp(s: McpState, req: Request): Promise<Response> {
  const url = new URL(req.url);
  if (url.pathname !== "/mcp") return jsonError(404, -32000, `Not found: ${url.pathname}`);
  const sid = req.headers.get("mcp-session-id");
  if (sid !== null) {
    const session = s.sessions.get(sid);
    if (!session) return jsonError(404, -32001, "Session not found: initialize again");
    if (req.method !== "POST") return await session.transport.handleRequest(req);
    return await withBody(
      s,
      req,
      (body) => session.transport.handleRequest(req, { parsedBody: body }),
    );
  }
  if (req.method !== "POST") {
    return jsonError(405, -32000, "Method not allowed: send initialize first");
  }
  return await withBody(s, req, (body) => openSession(s, req, body));
}

/** A new session for an initialize request (at most MAX_SESSIONS per attempt). */
async function openSession(s: McpState, req: Request, parsed: unknown): Promise<Response> {
  const init = readInitialize(parsed);
  if (!("body" in init)) return jsonError(init.status, init.code, init.message);
  if (s.sessions.size >= MAX_SESSIONS) {
    return jsonError(429, -32000, `Too many sessions (${MAX_SESSIONS}) in this attempt`);
  }
  const server = makeServer(s);
  const transport: WebStandardStreamableHTTPServerTransport =
    new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      // JSON answers: tool calls are short, and a client needs no SSE parsing for them.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        s.sessions.set(id, { transport, server });
      },
      onsessionclosed: (id) => {
        s.sessions.delete(id);
      },
    });
  await server.connect(transport);
  return await transport.handleRequest(req, { parsedBody: init.body });
}
