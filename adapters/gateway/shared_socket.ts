/**
 * The one Unix socket that the world gateways of this process's sandboxed attempts share (the
 * "unix" transport of attempt_gateway.ts): `gateway.sock` in a 0700 directory
 * `dvg-<pid>-<random>` of the temp dir, served by one Deno.serve that passes each request to
 * the attempt whose secret starts its path (gateway_secret.ts routedBySecret), a bare 404 to
 * any other, and forward.js beside it once an attempt's forwarder is deno.
 *
 * Why one: a server of its own per attempt (a directory made and chmod'ed, a socket bound and
 * served, the server shut down, the socket and the directory removed: two inodes on ext4) cost
 * ~0.6 ms of dvergr's CPU an attempt, most of it for candidates that never ask their gateway.
 * Every sandbox reaches the same socket, so the secret, not the socket, makes a gateway the
 * attempt's, as on the host's loopback ("tcp"): a candidate holds its own secret only (256
 * random bits in its own environment), and a request with any other gets the 404 of a request
 * with none. An attempt's secret is routed from its gateway's start until it finishes (or its
 * attempt is aborted), never again.
 *
 * The server does not keep the process alive (unref). Its directory goes at the process's exit
 * (`unload`), a killed process's with the next process's sweep (gateway_dirs.ts). A socket that
 * is gone (a temp cleaner took it) is made again, in a new directory, for the next attempt.
 *
 * Permissions: --allow-read/--allow-write of the temp directory, --allow-net (unix sockets).
 */
import { gatewayDirPrefix, sweepGatewayDirsOnce } from "./gateway_dirs.ts";
import { routedBySecret, type SecretHandler } from "./gateway_secret.ts";
import { removeTreeQuietly } from "../files/fs.ts";

/** The gateway's socket in its directory. */
export const SOCKET = "gateway.sock";

interface Shared {
  dir: string;
  socket: string;
  routes: Map<string, SecretHandler>;
  server: Deno.HttpServer;
  /** Whether forward.js is in the directory. */
  forwardJs: boolean;
}

/** The shared socket of each temp dir asked (one, but for tests). */
const byTmp = new Map<string, Shared>();

/** One attempt's route on the shared socket. */
export interface SocketRoute {
  dir: string;
  socket: string;
  /** Stops routing the attempt's secret (its requests then get a bare 404). */
  close(): void;
}

function present(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

let exitHook = false;

/** Removes every shared directory when the process ends. */
function removeAtExit(): void {
  if (exitHook) return;
  exitHook = true;
  globalThis.addEventListener("unload", () => {
    for (const s of byTmp.values()) removeTreeQuietly(s.dir);
  });
}

function open(tmp: string): Shared {
  // Not awaited: the dead processes' directories it removes are never this one's
  // (dvg-<pid>-…), and listing a temp dir of thousands of entries took 35-60 ms here.
  void sweepGatewayDirsOnce(tmp);
  // Socket paths must stay under 108 bytes: a short directory in the temp dir.
  const dir = Deno.makeTempDirSync({ dir: tmp, prefix: gatewayDirPrefix() });
  const routes = new Map<string, SecretHandler>();
  try {
    Deno.chmodSync(dir, 0o700);
    const socket = `${dir}/${SOCKET}`;
    const server = Deno.serve({
      path: socket,
      transport: "unix",
      onListen: () => {},
      onError: () => new Response("gateway error", { status: 500 }),
    }, routedBySecret(routes));
    server.unref();
    removeAtExit();
    return { dir, socket, routes, server, forwardJs: false };
  } catch (e) {
    removeTreeQuietly(dir);
    throw e;
  }
}

/** Stops serving `s` (its socket is gone): its attempts could not reach it any more anyway. */
function retire(tmp: string, s: Shared): void {
  byTmp.delete(tmp);
  s.server.shutdown().catch(() => {});
  removeTreeQuietly(s.dir);
}

/**
 * Routes requests that start with `secret` on the shared socket of `tmp` to `handle`, made (or
 * made again) as needed; `forwardJs`: deno's forwarder script, written beside the socket once.
 */
export function routeOnSharedSocket(
  tmp: string,
  secret: string,
  handle: SecretHandler,
  forwardJs: string | null,
): SocketRoute {
  let s = byTmp.get(tmp);
  if (s !== undefined && !present(s.socket)) {
    retire(tmp, s);
    s = undefined;
  }
  if (s === undefined) byTmp.set(tmp, s = open(tmp));
  if (forwardJs !== null && !s.forwardJs) {
    Deno.writeTextFileSync(`${s.dir}/forward.js`, forwardJs);
    s.forwardJs = true;
  }
  const routes = s.routes;
  routes.set(secret, handle);
  return { dir: s.dir, socket: s.socket, close: () => void routes.delete(secret) };
}
