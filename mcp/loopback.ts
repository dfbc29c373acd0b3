/**
 * The checks of a server on a loopback port against pages of other sites: a request whose
 * Origin header is not loopback (a page of another site) or whose Host header names
 * another host (DNS rebinding) is refused. The MCP HTTP transport (http.ts) and the viewer
 * (view/server.ts) both apply them. Pure.
 */

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** Whether an Origin header names a loopback origin (http(s) on 127.0.0.1, localhost, ::1). */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === "http:" || u.protocol === "https:") && LOOPBACK_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

/**
 * Whether a Host header names this loopback server, exactly: a loopback name and an
 * optional port, nothing after it (`[::1]evil.com` is not loopback).
 */
export function isLoopbackHost(header: string): boolean {
  return /^(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$/i.test(header.trim());
}

/**
 * Why a request to a loopback server is refused (403): its Origin is not loopback, or (when
 * `checkHost`) its Host names another host; null when neither. Read before the URL, whose
 * parsing a malformed Host would break.
 */
export function foreignRequest(req: Request, checkHost = true): string | null {
  const origin = req.headers.get("origin");
  if (origin !== null && !isLoopbackOrigin(origin)) {
    return `Forbidden: requests from origin ${origin} are refused`;
  }
  const host = req.headers.get("host");
  if (checkHost && host !== null && !isLoopbackHost(host)) {
    return `Forbidden: host ${host} is not this loopback server`;
  }
  return null;
}
