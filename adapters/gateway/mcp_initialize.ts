/**
 * The first request of a Streamable HTTP MCP session: a JSON body holding an initialize
 * request. Shared by dvergr's MCP server (mcp/http.ts) and the world MCP server of an
 * attempt (adapters/gateway/world_mcp.ts).
 */
// @ts-types="@modelcontextprotocol/sdk/types"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

/** The (parsed) body when it starts a session, else the JSON-RPC error to answer. */
export function readInitialize(
  body: unknown,
): { body: unknown } | { status: number; code: number; message: string } {
  const initializing = Array.isArray(body)
    ? body.some((m) => isInitializeRequest(m))
    : isInitializeRequest(body);
  if (!initializing) {
    return {
      status: 400,
      code: -32000,
      message: "Bad Request: no Mcp-Session-Id; send initialize first",
    };
  }
  return { body };
}
