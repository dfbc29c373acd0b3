/**
 * Stateless requests (protocol 2026-07-28) over Streamable HTTP: the routing headers are
 * checked against the body (`Mcp-Method`, `MCP-Protocol-Version`, and `Mcp-Name` for
 * tools/call and resources/read: 400 with -32020 when missing or different), an unsupported
 * version is 400 with -32022 `{supported, requested}`, an unknown method 404. The answer is
 * JSON, or an SSE stream for subscriptions/listen (kept open, with keep-alive comments) and
 * for a request with a progressToken; closing a stream cancels its request.
 */
import {
  HEADER_MISMATCH,
  isStatelessRequest,
  type JsonRpcNotification,
  type JsonRpcRequest,
  META_VERSION,
  metaOf,
  STATELESS_METHODS,
  STATELESS_VERSION,
  type StatelessHandler,
  SUPPORTED_VERSIONS,
  UNSUPPORTED_VERSION,
} from "./stateless.ts";

/** Keep-alive comments on an open listen stream, so proxies do not close it. */
const KEEP_ALIVE_MS = 15_000;

function rpcError(
  status: number,
  id: unknown,
  code: number,
  message: string,
  data?: unknown,
): Response {
  return new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      id: id ?? null,
      error: { code, message, ...(data !== undefined ? { data } : {}) },
    }),
    { status, headers: { "content-type": "application/json" } },
  );
}

/** The error response for headers that do not match the body, or null when they do. */
export function headerProblem(req: Request, body: JsonRpcRequest): Response | null {
  /** A 400 naming the header, its value and what the body says, or null when they agree. */
  const mismatch = (header: string, shown: string, bodySays: string, expected: unknown) => {
    const value = req.headers.get(header);
    // No header where the body names nothing either agrees (the version check follows).
    if (value === (expected ?? null)) return null;
    return rpcError(
      400,
      body.id,
      HEADER_MISMATCH,
      `Header mismatch: ${shown} is ${JSON.stringify(value)}, ${bodySays} ${
        JSON.stringify(expected)
      }`,
    );
  };
  const method = mismatch("mcp-method", "Mcp-Method", "the body's method", body.method);
  if (method) return method;
  const version = metaOf(body)[META_VERSION];
  const versionProblem = mismatch(
    "mcp-protocol-version",
    "MCP-Protocol-Version",
    "the body's",
    version,
  );
  if (versionProblem) return versionProblem;
  if (version !== STATELESS_VERSION) {
    return rpcError(
      400,
      body.id,
      UNSUPPORTED_VERSION,
      `Unsupported protocol version ${JSON.stringify(version)} for a request without initialize`,
      { supported: SUPPORTED_VERSIONS, requested: version },
    );
  }
  if (!STATELESS_METHODS.has(body.method)) {
    return rpcError(404, body.id, -32601, `Method not found: ${body.method}`);
  }
  const named = body.method === "tools/call"
    ? body.params?.name
    : body.method === "resources/read"
    ? body.params?.uri
    : undefined;
  if (named !== undefined || body.method === "tools/call" || body.method === "resources/read") {
    return mismatch("mcp-name", "Mcp-Name", "the body names", named);
  }
  return null;
}

/** Whether a parsed body is a stateless request (or a notification of that era). */
export function isStatelessBody(body: unknown): boolean {
  if (isStatelessRequest(body)) return true;
  return typeof body === "object" && body !== null && !Array.isArray(body) &&
    (body as { id?: unknown }).id === undefined && metaOf(body)[META_VERSION] !== undefined;
}

/** Answers one stateless HTTP request. */
export async function statelessResponse(
  req: Request,
  body: unknown,
  handler: StatelessHandler,
  log: (line: string) => void,
  /** Told of each stream's end, so a server closing can wait until its last words are out. */
  track: (ended: Promise<void>) => void = () => {},
): Promise<Response> {
  if (!isStatelessRequest(body)) {
    // A notification of this era: cancellation is by closing the stream, nothing else is
    // expected from a client.
    return new Response(null, { status: 202 });
  }
  const problem = headerProblem(req, body);
  if (problem) return problem;
  const cancel = new AbortController();
  req.signal.addEventListener("abort", () => cancel.abort(), { once: true });
  const streaming = body.method === "subscriptions/listen" ||
    metaOf(body).progressToken !== undefined;
  if (!streaming) {
    const answer = await handler.handle(body, { notify: () => {}, signal: cancel.signal });
    if (answer === null) return new Response(null, { status: 204 });
    return new Response(JSON.stringify(answer), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }
  const encoder = new TextEncoder();
  let open = true;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const ended = Promise.withResolvers<void>();
  track(ended.promise);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (msg: unknown) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(msg)}\n\n`));
        } catch {
          open = false;
        }
      };
      const finish = () => {
        ended.resolve();
        if (!open) return;
        open = false;
        if (keepAlive !== undefined) clearInterval(keepAlive);
        try {
          controller.close();
        } catch {
          // Closed by the client already.
        }
      };
      if (body.method === "subscriptions/listen") {
        keepAlive = setInterval(() => {
          if (!open) return;
          try {
            controller.enqueue(encoder.encode(": keep-alive\n\n"));
          } catch {
            open = false;
          }
        }, KEEP_ALIVE_MS);
      }
      handler.handle(body, {
        notify: (n: JsonRpcNotification) => send(n),
        signal: cancel.signal,
      }).then((answer) => {
        if (answer !== null) send(answer);
      }, (e) => log(`stateless ${body.method} failed: ${e}`)).finally(finish);
    },
    cancel() {
      // The client closed the stream: that cancels its request.
      open = false;
      if (keepAlive !== undefined) clearInterval(keepAlive);
      cancel.abort();
      ended.resolve();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}
