/**
 * The world gateway of one attempt: the world's MCP server (at /mcp) and the model gateway
 * (every other path), served by dvergr outside the sandbox, behind the attempt's secret
 * (gateway_secret.ts: every request's path starts with it, else a bare 404).
 *
 * Where it listens depends on the sandbox's network:
 * - "unix" (a bubblewrap sandbox with a network namespace of its own): a Unix socket in a 0700
 *   directory that every sandboxed attempt of the process shares, one server routing each
 *   request by the secret its path starts with (shared_socket.ts), bound read-only into
 *   bubblewrap at /run/dvergr, where a forwarder of
 *   ours exposes the socket on 127.0.0.1:17801 inside the sandbox's own network namespace,
 *   listening before the candidate starts: tcpserver (Debian's ucspi-tcp, ~1.4 MiB resident)
 *   starting one socat per connection where the system has both, socat listening itself
 *   (~4.6 MiB, most of it OpenSSL's and Kerberos' pages) where it has only socat, else
 *   forwarder.js run by deno with only the permissions it needs (~35 MiB, 50–150 ms to
 *   start). Nothing else of the network is reachable from inside.
 * - "tcp" (a sandbox on the host's network, `:network true`, and attempts without
 *   bubblewrap, marked not isolated): an ephemeral 127.0.0.1 port of the host that the kernel
 *   chooses, reached directly, no forwarder. Every process of the host can connect to it,
 *   other attempts' candidates among them: the secret, not the port, makes it the attempt's.
 *
 * The MCP server itself, and the module that makes it, are loaded on its first request: most
 * scripts never ask it.
 *
 * The candidate gets DVERGR_MCP_URL, DVERGR_MODEL_URL, ANTHROPIC_BASE_URL, OPENAI_BASE_URL
 * (each holding the secret) and dummy keys; the real keys stay in this process. In a sandbox
 * of its own network only the candidate reaches the forwarder's port, but the socket behind it
 * is every sandboxed attempt's (and the host's processes of its owner reach it; root reaches
 * any): the secret tells whose world a request may reach.
 *
 * Permissions: --allow-read/--allow-write of the temp directory, --allow-net (unix sockets,
 * loopback, the model endpoints), --allow-run is not needed here.
 */
import { basename, dirname, join } from "node:path";
import FORWARDER_JS from "./forwarder.js" with { type: "text" };
import type { AttemptContext, CandidateOutcome } from "../../core/bench/candidate.ts";
import { WORLD_TOOLS_VERSION } from "../../core/world_tools/registry.ts";
import {
  createModelGateway,
  GATEWAY_CLOSED,
  type GatewayFigures,
  type ModelGatewayOptions,
} from "./model_gateway.ts";
import type { McpCallLogEntry, WorldMcp, WorldToolset } from "./world_mcp.ts";
import type { GatewayLogEntry } from "./model_gateway.ts";
import { guardedBySecret, newGatewaySecret } from "./gateway_secret.ts";
import { routeOnSharedSocket, SOCKET, type SocketRoute } from "./shared_socket.ts";
import { importLater } from "../../core/import_later.ts";

/** Inside the sandbox: where the socket directory is bound and the port it is exposed on. */
export const SANDBOX_GATEWAY_DIR = "/run/dvergr";
export const SANDBOX_GATEWAY_PORT = 17801;
/**
 * Part of every gated candidate's identity: bump `version` when the gateway changes what a
 * candidate can reach or how it is metered; the tools' version follows the registry.
 * 4: every request carries the attempt's secret in its path (the base URLs hold it); a
 * `:network true` sandbox reaches its gateway on an ephemeral host port, not 17801.
 */
export const WORLD_GATEWAY_IDENTITY = { version: 4, tools: WORLD_TOOLS_VERSION };

/** The key a candidate holds instead of a real one. */
export const DUMMY_KEY = "dvergr-gateway-holds-the-key";

export interface AttemptGatewayOptions {
  /**
   * "unix": a socket for a bubblewrap sandbox with a network of its own; "tcp": an ephemeral
   * host loopback port (a sandbox on the host's network, or no isolation).
   */
  transport: "unix" | "tcp";
  toolset: WorldToolset;
  model: Omit<ModelGatewayOptions, "now">;
  /** Parent of the per-attempt directory (default the system temp dir; keep it short). */
  tmpDir?: string;
  /**
   * Which forwarder to use even where a lighter one is installed (`DVERGR_FORWARDER=socat` or
   * `deno`): socat listening itself, or deno.
   */
  forwarder?: "socat" | "deno";
  /** Wraps the MCP server's handler (tests: a slow or failing MCP start). */
  wrapMcp?: (handle: (req: Request) => Promise<Response>) => (req: Request) => Promise<Response>;
  /**
   * The candidate always asks the MCP server (agent CLIs): its module is loaded before the
   * gateway is ready, off the candidate's clock, instead of on its first request.
   */
  mcpExpected?: boolean;
}

export interface GatewayEvidence {
  mcpCalls: McpCallLogEntry[];
  /** tools/list requests the MCP server answered. */
  mcpToolLists: number;
  modelRequests: GatewayLogEntry[];
  figures: GatewayFigures;
}

export interface AttemptGateway {
  /** The socket directory (unix transport: shared by the process's attempts), else null. */
  dir: string | null;
  /** The sockets in it the sandbox connects to (none for tcp). */
  sockets: string[];
  /** Environment the candidate gets. */
  env: Record<string, string>;
  /** bubblewrap arguments that bind the socket directory (unix transport). */
  bwrapArgs(): string[];
  /**
   * Shell lines the sandbox's supervisor runs at its start (they start the forwarders) and
   * before the candidate's command (they wait until both ports listen; exit 125 when they do
   * not). Null for tcp.
   */
  forwarders: { start: string; ready: string } | null;
  /** Stops serving the attempt (its own server, or its route on the shared one), gives the evidence. */
  finish(): Promise<GatewayEvidence>;
}

/**
 * bubblewrap arguments giving the sandbox the gateway's directory, read-only, and deno's
 * directory when deno runs the forwarder.
 */
export function gatewayBwrapArgs(dir: string, deno: string | null): string[] {
  return [
    "--ro-bind",
    dir,
    SANDBOX_GATEWAY_DIR,
    ...(deno === null ? [] : ["--ro-bind", dirname(deno), dirname(deno)]),
  ];
}

/** The environment a candidate reaches the gateway at `port` with, behind `secret`. */
export function gatewayEnv(port: number, secret: string): Record<string, string> {
  const model = `http://127.0.0.1:${port}/${secret}`;
  return {
    DVERGR_MCP_URL: `${model}/mcp`,
    DVERGR_MODEL_URL: model,
    ANTHROPIC_BASE_URL: model,
    OPENAI_BASE_URL: `${model}/v1`,
    ANTHROPIC_API_KEY: DUMMY_KEY,
    OPENAI_API_KEY: DUMMY_KEY,
  };
}

/** A string as one word of a shell command line. */
function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Shell lines that open a pipe in the shell itself, without a fork: its read end on fd 5 (an
 * empty here-document, a pipe in dash, bash and busybox), its write end on fd 6 by opening
 * the read end again through /proc (a pipe opens like a FIFO). Where that fails, fd 6 is
 * /dev/null and a read of fd 5 ends at once (as it does where a here-document is a file):
 * whatever a read of it gives, only the line tcpserver writes once it listens says ready.
 */
const TOLD_PIPE = `exec 5<<'E'
E
{ command exec 6>/proc/self/fd/5 || exec 6>/dev/null; } 2>/dev/null`;

/** Where socat is in the sandbox's system directories (null: not installed). */
let socatPath: string | null | undefined;
export function socatBinary(): string | null {
  if (socatPath !== undefined) return socatPath;
  for (const p of ["/usr/bin/socat", "/usr/local/bin/socat", "/bin/socat"]) {
    try {
      if (Deno.statSync(p).isFile) return socatPath = p;
    } catch {
      // not here
    }
  }
  return socatPath = null;
}

/** Where tcpserver (ucspi-tcp) is in the sandbox's system directories (null: not installed). */
let tcpserverPath: string | null | undefined;
export function tcpserverBinary(): string | null {
  if (tcpserverPath !== undefined) return tcpserverPath;
  for (const p of ["/usr/bin/tcpserver", "/usr/local/bin/tcpserver", "/bin/tcpserver"]) {
    try {
      if (Deno.statSync(p).isFile) return tcpserverPath = p;
    } catch {
      // not here
    }
  }
  return tcpserverPath = null;
}

/** What forwards the gateway's socket to the sandbox's loopback port. */
export type GatewayForwarder =
  | { tcpserver: string; socat: string }
  | { socat: string }
  | { deno: string };

/**
 * The forwarder's shell lines inside the sandbox: tcpserver listening and starting a socat
 * for each connection (nothing but tcpserver while the candidate has no connection open: a
 * third of socat's memory), socat listening and forking per connection, or deno running
 * forward.js. tcpserver looks up no names (-R -H, -l), and bounds the connections it serves
 * at once (-c; more wait in the listen queue). It starts in the background without the marks
 * descriptor or the candidate's stdin, while the sandbox seeds the world; `ready` returns once
 * the port listens, and exits 125 when the forwarder died. However long the forwarder takes
 * to listen, only the host's setup limit ends the wait.
 *
 * tcpserver says its port on its stdout once it listens (-1), into a pipe the shell reads
 * (TOLD_PIPE): the wait blocks, no look and no `sleep` (a program) while it starts. Without
 * that line (it died, or the shell had no pipe), and for the other forwarders, the wait
 * looks at the count of TCP sockets in use in /proc/net/sockstat (shell builtins, a short
 * sleep between looks after the first 20, ~1 ms of looking: most forwarders listen by then, and
 * a sleep is a process of its own and at least 10 ms): the sandbox's network namespace is its own, and
 * before the candidate starts the forwarder is the only process that could make a TCP
 * socket, which the kernel counts as in use once it listens (hashed; a socket only bound or
 * only made is not). /proc/net/tcp would name the port, but the kernel walks every bucket of
 * the host's connection table to list one namespace's sockets: ~10 ms a look, against ~1.5.
 */
export function forwarderScripts(
  forwarder: GatewayForwarder,
): { start: string; ready: string } {
  const socket = `${SANDBOX_GATEWAY_DIR}/${SOCKET}`;
  const port = SANDBOX_GATEWAY_PORT;
  const detached = "</dev/null >/dev/null 2>&1 4<&- 8>&- &";
  const start = "tcpserver" in forwarder
    ? `${TOLD_PIPE}\n${shellQuote(forwarder.tcpserver)} -1 -R -H -l 127.0.0.1 -c 256 ` +
      `127.0.0.1 ${port} ${shellQuote(forwarder.socat)} -lf /dev/null - ` +
      `UNIX-CONNECT:${socket} </dev/null >&6 2>/dev/null 4<&- 5<&- 6>&- 8>&- &` +
      "\nforwarder=$!\nexec 6>&-"
    : "socat" in forwarder
    ? `${shellQuote(forwarder.socat)} -lf /dev/null TCP4-LISTEN:${port},bind=127.0.0.1,` +
      `reuseaddr,fork UNIX-CONNECT:${socket} ${detached}\nforwarder=$!`
    : [
      shellQuote(forwarder.deno),
      "run",
      "--no-config",
      "--no-lock",
      "--quiet",
      `--allow-net=127.0.0.1:${port},unix:${socket}`,
      // Deno asks for read and write of a Unix socket it connects to.
      `--allow-read=${SANDBOX_GATEWAY_DIR}`,
      `--allow-write=${SANDBOX_GATEWAY_DIR}`,
      `${SANDBOX_GATEWAY_DIR}/forward.js`,
      String(port),
      socket,
      detached,
    ].join(" ") + "\nforwarder=$!";
  // No count of looks decides it: the loop ends when the port listens or the forwarder died.
  // The deadline is the host's setup limit (the sandbox's start to the candidate's, 120 s),
  // which only a host too loaded to start a forwarder exceeds (a fault: the candidate had
  // not started); the candidate's time limit starts after it (its go mark).
  const looks = `w=0
while :; do
  l=0
  while read -r p k n _; do
    if [ "$p $k" = "TCP: inuse" ]; then l=$n; break; fi
  done < /proc/net/sockstat
  [ "$l" -gt 0 ] 2>/dev/null && break
  kill -0 "$forwarder" 2>/dev/null || exit 125
  w=$((w + 1))
  if [ "$w" -gt 100 ]; then sleep 0.05; elif [ "$w" -gt 20 ]; then sleep 0.01; fi
done`;
  // tcpserver -1 says its port once it listens, then closes its stdout: one blocking read.
  // Anything else (it died, no pipe) falls back to the looks, which tell those apart.
  const ready = "tcpserver" in forwarder
    ? `told=
read -r told <&5
exec 5<&-
if [ "$told" != ${port} ]; then
${looks}
fi`
    : looks;
  return { start, ready };
}

let denoPath: string | null | undefined;

/**
 * The deno binary that runs the forwarder: this process's own, or (in a `deno compile`d
 * dvergr) the first deno on PATH; null when there is none.
 */
export function denoBinary(): string | null {
  if (denoPath !== undefined) return denoPath;
  const self = Deno.realPathSync(Deno.execPath());
  if (/^deno(\.exe)?$/.test(basename(self))) return denoPath = self;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").filter((d) => d !== "")) {
    try {
      return denoPath = Deno.realPathSync(join(dir, "deno"));
    } catch {
      // not in this directory
    }
  }
  return denoPath = null;
}

/**
 * What forwards the sockets inside the sandbox: tcpserver with socat where the system has
 * both, else socat, else deno (or what `prefer` says); null when there is none.
 */
export function gatewayForwarder(prefer?: "socat" | "deno"): GatewayForwarder | null {
  const socat = prefer === "deno" ? null : socatBinary();
  const tcpserver = prefer === undefined ? tcpserverBinary() : null;
  if (socat !== null && tcpserver !== null) return { tcpserver, socat };
  if (socat !== null) return { socat };
  const deno = denoBinary();
  return deno === null ? null : { deno };
}

/** The world MCP server's module, loaded once per process, on the first MCP request. */
let mcpModule: Promise<typeof import("./world_mcp.ts")> | null = null;
function loadWorldMcp(): Promise<typeof import("./world_mcp.ts")> {
  mcpModule ??= importLater<typeof import("./world_mcp.ts")>("./world_mcp.ts", import.meta.url);
  return mcpModule;
}

/** Whether this process has begun loading the world MCP server's module (it loads lazily). */
export function worldMcpLoaded(): boolean {
  return mcpModule !== null;
}

/** What serves one attempt's requests (after its secret): its MCP server and model gateway. */
interface AttemptHandler {
  handle: (req: Request) => Response | Promise<Response>;
  model: ReturnType<typeof createModelGateway>;
  /** Closes the MCP server (made on its first request); its evidence, none when never made. */
  closeMcp(): Promise<WorldMcp | null>;
}

function attemptHandler(opts: AttemptGatewayOptions): AttemptHandler {
  let mcp: Promise<WorldMcp> | null = null;
  let closing = false;
  const mcpHandle = async (req: Request) => {
    if (closing) return new Response("gateway closed", { status: 503 });
    mcp ??= loadWorldMcp().then((m) => m.createWorldMcp(opts.toolset));
    return (await mcp).handle(req);
  };
  const mcpOrNot = opts.wrapMcp ? opts.wrapMcp(mcpHandle) : mcpHandle;
  const model = createModelGateway(opts.model);
  return {
    handle: (req: Request) => {
      const path = new URL(req.url).pathname;
      return path === "/mcp" || path.startsWith("/mcp/") ? mcpOrNot(req) : model.handle(req);
    },
    model,
    async closeMcp() {
      closing = true;
      const served = mcp === null ? null : await (mcp as Promise<WorldMcp>).catch(() => null);
      await served?.close();
      return served;
    },
  };
}

/** Where an attempt's gateway listens, and how it stops listening for the attempt. */
interface Listening {
  route: SocketRoute | null;
  env: Record<string, string>;
  /** Stops serving the attempt; resolves once its own server closed (3 s at most). */
  stop(): Promise<void>;
}

/**
 * The attempt's route on the process's shared socket (unix), or a server of its own on an
 * ephemeral host loopback port (tcp), behind `secret`.
 */
function listen(
  opts: AttemptGatewayOptions,
  forwarder: GatewayForwarder | null,
  secret: string,
  handle: (req: Request) => Response | Promise<Response>,
): Listening {
  if (opts.transport === "unix") {
    if (forwarder === null) {
      throw new Error(
        "its forwarder is socat or deno, and neither was found (socat is not installed, " +
          "this binary is not deno, and there is none on PATH): install socat " +
          "(apt-get install socat) or Deno (npm install -g deno) and retry",
      );
    }
    const tmp = opts.tmpDir ?? (Deno.env.get("TMPDIR") || "/tmp");
    const js = "deno" in forwarder ? FORWARDER_JS : null;
    const route = routeOnSharedSocket(tmp, secret, handle, js);
    return {
      route,
      env: gatewayEnv(SANDBOX_GATEWAY_PORT, secret),
      stop: () => Promise.resolve(route.close()),
    };
  }
  const aborter = new AbortController();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: aborter.signal,
    onListen: () => {},
    onError: () => new Response("gateway error", { status: 500 }),
  }, guardedBySecret(secret, handle));
  return {
    route: null,
    env: gatewayEnv((server.addr as Deno.NetAddr).port, secret),
    async stop() {
      aborter.abort(GATEWAY_CLOSED);
      // Graceful shutdown waits for open connections; a stuck one does not hold the attempt.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        server.finished.catch(() => {}),
        new Promise((r) => timer = setTimeout(r, 3000)),
      ]);
      clearTimeout(timer);
    },
  };
}

/** Starts the gateway of one attempt. */
export async function startAttemptGateway(
  ctx: Pick<AttemptContext, "signal">,
  opts: AttemptGatewayOptions,
): Promise<AttemptGateway> {
  // The MCP server (and its module: the MCP SDK, zod, ajv) is made on the first request to
  // /mcp: most scripts never ask, and loading it cost each run ~0.1–0.6 s of CPU before its
  // first attempt could start. A candidate that always asks gets the module loaded now.
  if (opts.mcpExpected) await loadWorldMcp();
  const handler = attemptHandler(opts);
  const forwarder = gatewayForwarder(opts.forwarder);
  const on = listen(opts, forwarder, newGatewaySecret(), handler.handle);
  // An aborted attempt's gateway stops taking requests at once.
  const onAbort = () => void on.stop();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  const dir = on.route?.dir ?? null;
  let finished: Promise<GatewayEvidence> | null = null;
  return {
    dir,
    sockets: on.route === null ? [] : [on.route.socket],
    env: on.env,
    bwrapArgs: () =>
      dir === null || forwarder === null
        ? []
        : gatewayBwrapArgs(dir, "deno" in forwarder ? forwarder.deno : null),
    forwarders: dir === null || forwarder === null ? null : forwarderScripts(forwarder),
    finish() {
      finished ??= (async () => {
        const figures = await handler.model.settle(3000);
        handler.model.abort();
        // MCP sessions first: an open SSE stream of a session would hold the shutdown.
        const served = await handler.closeMcp();
        ctx.signal.removeEventListener("abort", onAbort);
        await on.stop();
        return {
          mcpCalls: served?.calls ?? [],
          mcpToolLists: served?.listed() ?? 0,
          modelRequests: handler.model.log,
          figures,
        };
      })();
      return finished;
    },
  };
}

/**
 * A command's outcome with what its gateway saw: tokens and cost from the model gateway,
 * the MCP and model logs as evidence, and the gateway's verdict on how it ended: a world
 * that never offered its tools, or a provider that kept failing the attempt within its fair
 * share, is a fault (no verdict); a request for a model that is not the attempt's, or a
 * provider refusing an attempt over its share (provider_share.ts), fails the attempt; a spent
 * budget is "budget"; the request cap ends the attempt as completed (scored as it stands, as
 * the model loop's turn limit does).
 */
export function gatewayOutcome(
  outcome: CandidateOutcome,
  ev: GatewayEvidence,
): CandidateOutcome {
  const f = ev.figures;
  const out: CandidateOutcome = {
    ...outcome,
    usage: f.usage,
    billedMicros: f.billedMicros,
    listMicros: f.listMicros === f.billedMicros ? null : f.listMicros,
    ...(f.unpriced ? { unpriced: true } : {}),
    evidence: {
      ...outcome.evidence,
      gateway: {
        modelRequests: f.requests,
        byModel: f.byModel,
        toolUses: f.toolUses,
        stopped: f.stopped,
        unmetered: f.unmetered,
        upstreamProblem: f.upstreamProblem,
        overShare: f.overShare,
        fault: f.fault,
        notTheAttempts: f.notTheAttempts,
        mcpToolLists: ev.mcpToolLists,
        mcpCalls: ev.mcpCalls,
        modelLog: ev.modelRequests,
      },
    },
  };
  if (f.fault !== null) return { ...out, status: "fault", message: `World gateway: ${f.fault}` };
  // The candidate's own doing, whatever came of it: a failure, never a fault to retry.
  if (f.notTheAttempts !== null) {
    return { ...out, status: "crashed", message: `Refused a model request: ${f.notTheAttempts}` };
  }
  if (outcome.status === "timeout") return out;
  // The candidate's own load made the provider refuse (provider_share.ts): a failure.
  if (f.overShare !== null) {
    return {
      ...out,
      status: "crashed",
      message: `Over its share of the model provider: ${f.overShare}`,
    };
  }
  if (f.upstreamProblem !== null) {
    return {
      ...out,
      status: "fault",
      message: `The model provider kept failing: ${f.upstreamProblem}`,
    };
  }
  if (f.stopped === "budget") {
    return { ...out, status: "budget", message: "Stopped by the attempt's budget" };
  }
  if (f.stopped === "request-cap" && outcome.status === "crashed") {
    return { ...out, status: "completed", message: "Stopped at the model request cap" };
  }
  return out;
}

/** Starts an attempt's world gateway on Unix sockets ("unix", bwrap) or host loopback ports. */
export type GatewayFactory = (
  ctx: AttemptContext,
  transport: "unix" | "tcp",
) => Promise<AttemptGateway>;
