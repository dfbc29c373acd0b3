/**
 * The secret of one attempt's world gateway: 256 random bits (crypto.getRandomValues) that
 * every request must carry as the first segment of its path. The base URLs handed to the
 * candidate hold it (http://127.0.0.1:PORT/<secret>/mcp …), and every client we know builds
 * its request URLs by appending to them (the Anthropic and OpenAI SDKs, Claude Code, Codex,
 * MCP's Streamable HTTP), so a candidate never sees it as anything but its own base URL.
 *
 * Why: on the host's loopback (`:network true` attempts, and attempts without isolation) a
 * gateway's port is reachable by every process of the host, other attempts' candidates among
 * them; the port alone would hand any of them this attempt's world tools and its model
 * budget. A request without the secret, or with another, gets a bare 404 with nothing of the
 * world or the gateway in it, before any handler sees it and without an entry in the
 * attempt's evidence (it is not the attempt's). The comparison takes the same time whatever
 * the segment holds (its length is public: always SECRET_CHARS).
 *
 * Handlers behind the guard see the path without the secret (`/mcp`, `/v1/messages`), so
 * their logs, errors and evidence never hold it.
 */

/** Random bytes of a secret: 256 bits. */
const SECRET_BYTES = 32;
/** Its length in base64url without padding. */
export const SECRET_CHARS = Math.ceil(SECRET_BYTES * 4 / 3);

/** A fresh secret: SECRET_BYTES random bytes in base64url (no padding). */
export function newGatewaySecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(SECRET_BYTES));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Whether `a` is `b`, in time that depends only on their lengths. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** What a request without the attempt's secret gets: nothing of the world. */
function refused(): Response {
  return new Response(null, { status: 404 });
}

/** A handler of one attempt's requests, behind its secret. */
export type SecretHandler = (req: Request) => Response | Promise<Response>;

/**
 * A handler that passes on only requests whose path starts with `/<secret>` (then `/…` or the
 * end), as the same request at the path after it (`/` when none is left).
 */
export function guardedBySecret(secret: string, handle: SecretHandler): SecretHandler {
  return routedBySecret(new Map([[secret, handle]]));
}

/**
 * A handler for the attempts of `routes` (secret → handler; it may change as attempts come and
 * go) that passes a request whose path starts with `/<secret>` to that secret's handler, at the
 * path after it; any other gets a bare 404. Every secret is compared, in full, whichever
 * matches: the time depends on how many attempts there are, never on what the segment holds.
 */
export function routedBySecret(routes: ReadonlyMap<string, SecretHandler>): SecretHandler {
  return (req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    const end = path.indexOf("/", 1);
    const segment = end < 0 ? path.slice(1) : path.slice(1, end);
    let handle: SecretHandler | null = null;
    for (const [secret, h] of routes) if (sameSecret(segment, secret)) handle = h;
    if (handle === null) return refused();
    url.pathname = end < 0 ? "/" : path.slice(end);
    // Not `new Request(url, req)`: that follows req.signal, and Deno.serve then warns on
    // stderr that the signal aborts once a response succeeds. Nothing behind reads it.
    return handle(
      new Request(url, { method: req.method, headers: req.headers, body: req.body }),
    );
  };
}
