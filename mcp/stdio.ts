/**
 * MCP over stdio: stdin carries the client's messages, stdout only the server's (every
 * log goes to stderr). Serves until the client closes stdin or `stop` is aborted.
 */
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { splitEras } from "./era_transport.ts";
import { uniqueRequestIds } from "./request_ids.ts";
import type { StatelessHandler } from "./stateless.ts";

/**
 * Connects the server to stdin/stdout and resolves once the connection has ended. With
 * `stateless`, requests of the stateless era on the same stream go to it.
 */
export async function serveStdio(
  server: Server,
  stop?: AbortSignal,
  stateless?: StatelessHandler,
): Promise<void> {
  // One request per id in flight, whichever era it belongs to.
  const stdio = uniqueRequestIds(new StdioServerTransport());
  const transport = stateless ? splitEras(stdio, stateless) : stdio;
  const ended = new Promise<void>((resolve) => {
    const before = server.onclose; // The server's own clean-up (subscriptions).
    server.onclose = () => {
      before?.();
      resolve();
    };
  });
  // The SDK's transport does not notice the end of stdin: close on it ourselves.
  const onEnd = () => server.close().catch(() => {});
  process.stdin.once("end", onEnd);
  process.stdin.once("close", onEnd);
  stop?.addEventListener("abort", onEnd, { once: true });
  await server.connect(transport);
  try {
    await ended;
  } finally {
    process.stdin.off("end", onEnd);
    process.stdin.off("close", onEnd);
    stop?.removeEventListener("abort", onEnd);
  }
}
