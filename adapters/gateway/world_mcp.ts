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

/** An MCP server for one attempt's world tools. */
export function createWorldMcp(
  toolset: WorldToolset,
  opts: { now?: () => number } = {},
): WorldMcp {
  const now = opts.now ?? (() => performance.now());
  const t0 = now();
  const calls: McpCallLogEntry[] = [];
  let listed = 0;
  const byName = new Map(toolset.tools.map((t) => [t.name, t]));
  const bodies = new BodyBytes(MAX_MCP_BODY, MAX_MCP_BODIES_HELD);
  const sessions = new Map<
    string,
    { transport: WebStandardStreamableHTTPServerTransport; server: Server }
  >();

  function makeServer(): Server {
    const server = new Server(
      { name: "dvergr-world", title: "dvergr world", version: VERSION },
      {
        capabilities: { tools: {} },
        instructions: "The files of your task's world. Paths are absolute: /docs/…, /out/….",
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => {
      listed++;
      return {
        tools: toolset.tools.map((t) => ({
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          annotations: { readOnlyHint: t.readOnly, openWorldHint: t.openWorld },
        })),
      };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      const name = req.params.name;
      if (!byName.has(name)) {
        throw Object.assign(
          new Error(`Unknown tool "${name}" (tools: ${[...byName.keys()].join(", ")})`),
          { code: ErrorCode.InvalidParams },
        );
      }
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      const started = now();
      const result = await toolset.run(name, args);
      if (calls.length < MAX_LOG) {
        calls.push({
          at: Math.round(started - t0),
          tool: name,
          args: loggedArgs(args),
          resultChars: result.content.length,
          isError: result.isError,
          ms: Math.round(now() - started),
        });
      }
      return {
        content: [{ type: "text" as const, text: result.content }],
        ...(result.isError ? { isError: true } : {}),
      };
    });
    return server;
  }

  /** A POST's body read within its bounds and parsed (held until `run` ends), or an error. */
  async function withBody(
    req: Request,
    run: (body: unknown) => Promise<Response>,
  ): Promise<Response> {
    const read = await bodies.read(req);
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
      bodies.release(read.bytes.length);
    }
  }

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname !== "/mcp") return jsonError(404, -32000, `Not found: ${url.pathname}`);
    const sid = req.headers.get("mcp-session-id");
    if (sid !== null) {
      const s = sessions.get(sid);
      if (!s) return jsonError(404, -32001, "Session not found: initialize again");
      if (req.method !== "POST") return await s.transport.handleRequest(req);
      return await withBody(req, (body) => s.transport.handleRequest(req, { parsedBody: body }));
    }
    if (req.method !== "POST") {
      return jsonError(405, -32000, "Method not allowed: send initialize first");
    }
    return await withBody(req, (body) => open(req, body));
  }

  async function open(req: Request, parsed: unknown): Promise<Response> {
    const init = readInitialize(parsed);
    if (!("body" in init)) return jsonError(init.status, init.code, init.message);
    const body = init.body;
    if (sessions.size >= MAX_SESSIONS) {
      return jsonError(429, -32000, `Too many sessions (${MAX_SESSIONS}) in this attempt`);
    }
    const server = makeServer();
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        // JSON answers: tool calls are short, and a client needs no SSE parsing for them.
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, server });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
    await server.connect(transport);
    return await transport.handleRequest(req, { parsedBody: body });
  }

  return {
    handle,
    calls,
    listed: () => listed,
    async close() {
      for (const { transport, server } of sessions.values()) {
        await transport.close().catch(() => {});
        await server.close().catch(() => {});
      }
      sessions.clear();
    },
  };
}
