/** A JSON-RPC error the MCP layer answers with, and its codes. */

/** A JSON-RPC error to answer with (unknown tool -32602, unknown resource -32002, …). */
export class ProtocolError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

/** JSON-RPC error codes the surface answers with. */
export const INVALID_PARAMS = -32602;
export const RESOURCE_NOT_FOUND = -32002;
