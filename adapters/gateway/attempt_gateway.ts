/**
 * The world gateway of one attempt: the world's MCP server and the model gateway, served
 * by dvergr outside the sandbox on two Unix sockets in a fresh 0700 directory. The
 * directory is bound read-only into bubblewrap at /run/dvergr, where a forwarder of ours
 * (forwarder.js, run by deno with only the permissions it needs) exposes the sockets on
 * 127.0.0.1 ports inside the sandbox's own network namespace before the candidate starts.
 * Nothing else of the network is reachable from inside. Without bubblewrap (attempts marked
 * not isolated) the two servers listen on ephemeral 127.0.0.1 ports of the host instead.
 *
 * The candidate gets DVERGR_MCP_URL, DVERGR_MODEL_URL, ANTHROPIC_BASE_URL, OPENAI_BASE_URL
 * and dummy keys; the real keys stay in this process.
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
  type GatewayFigures,
  type ModelGatewayOptions,
} from "./model_gateway.ts";
import type { McpCallLogEntry, WorldToolset } from "./world_mcp.ts";
import type { GatewayLogEntry } from "./model_gateway.ts";

/** Inside the sandbox: where the socket directory is bound and the ports it is exposed on. */
export const SANDBOX_GATEWAY_DIR = "/run/dvergr";
export const SANDBOX_MODEL_PORT = 17801;
export const SANDBOX_MCP_PORT = 17802;
/**
 * Part of every gated candidate's identity: bump `version` when the gateway changes what a
 * candidate can reach or how it is metered; the tools' version follows the registry.
 */
export const WORLD_GATEWAY_IDENTITY = { version: 2, tools: WORLD_TOOLS_VERSION };

/** The key a candidate holds instead of a real one. */
export const DUMMY_KEY = "dvergr-gateway-holds-the-key";

export interface AttemptGatewayOptions {
  /** "unix": sockets for a bubblewrap sandbox; "tcp": host loopback ports (no isolation). */
  transport: "unix" | "tcp";
  toolset: WorldToolset;
  model: Omit<ModelGatewayOptions, "now">;
  /** Parent of the per-attempt directory (default the system temp dir; keep it short). */
  tmpDir?: string;
  /** Wraps the MCP server's handler (tests: a slow or failing MCP start). */
  wrapMcp?: (handle: (req: Request) => Promise<Response>) => (req: Request) => Promise<Response>;
}

export interface GatewayEvidence {
  mcpCalls: McpCallLogEntry[];
  /** tools/list requests the MCP server answered. */
  mcpToolLists: number;
  modelRequests: GatewayLogEntry[];
  figures: GatewayFigures;
}

export interface AttemptGateway {
  /** The socket directory (unix transport), else null. */
  dir: string | null;
  /** Environment the candidate gets. */
  env: Record<string, string>;
  /** bubblewrap arguments that bind the socket directory (unix transport). */
  bwrapArgs(): string[];
  /** The argv that runs `argv` behind the forwarder inside the sandbox (unix transport). */
  wrap(argv: string[]): string[];
  /** Stops both servers, removes the directory, gives the evidence. */
  finish(): Promise<GatewayEvidence>;
}

/** bubblewrap arguments giving the sandbox the gateway's directory and deno, read-only. */
export function gatewayBwrapArgs(dir: string, deno: string): string[] {
  return ["--ro-bind", dir, SANDBOX_GATEWAY_DIR, "--ro-bind", dirname(deno), dirname(deno)];
}

/** The environment a candidate reaches the gateway with. */
export function gatewayEnv(modelPort: number, mcpPort: number): Record<string, string> {
  const model = `http://127.0.0.1:${modelPort}`;
  return {
    DVERGR_MCP_URL: `http://127.0.0.1:${mcpPort}/mcp`,
    DVERGR_MODEL_URL: model,
    ANTHROPIC_BASE_URL: model,
    OPENAI_BASE_URL: `${model}/v1`,
    ANTHROPIC_API_KEY: DUMMY_KEY,
    OPENAI_API_KEY: DUMMY_KEY,
  };
}

/** The forwarder's command line inside the sandbox, ahead of the candidate's `argv`. */
export function forwarderArgv(denoPath: string, argv: string[]): string[] {
  const d = SANDBOX_GATEWAY_DIR;
  const model = `${d}/model.sock`;
  const mcp = `${d}/mcp.sock`;
  return [
    denoPath,
    "run",
    "--no-config",
    "--no-lock",
    "--quiet",
    `--allow-net=127.0.0.1:${SANDBOX_MODEL_PORT},127.0.0.1:${SANDBOX_MCP_PORT},unix:${model},unix:${mcp}`,
    // Deno asks for read and write of a Unix socket it connects to.
    `--allow-read=${d}`,
    `--allow-write=${d}`,
    `--allow-run=${argv[0]}`,
    `${d}/forward.js`,
    String(SANDBOX_MODEL_PORT),
    model,
    String(SANDBOX_MCP_PORT),
    mcp,
    "--",
    ...argv,
  ];
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

/** Starts the gateway of one attempt. */
export async function startAttemptGateway(
  ctx: Pick<AttemptContext, "signal">,
  opts: AttemptGatewayOptions,
): Promise<AttemptGateway> {
  // Loaded on the first gateway only: the MCP SDK (and zod) cost a run of built-in or model
  // candidates ~20 MiB of resident memory for nothing.
  const { createWorldMcp } = await import("./world_mcp.ts");
  const mcp = createWorldMcp(opts.toolset);
  const mcpHandle = opts.wrapMcp ? opts.wrapMcp(mcp.handle) : mcp.handle;
  const model = createModelGateway(opts.model);
  const aborter = new AbortController();
  const onAbort = () => aborter.abort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  const quiet = {
    onListen: () => {},
    onError: () => new Response("gateway error", { status: 500 }),
  };
  const servers: Deno.HttpServer[] = [];
  let dir: string | null = null;
  let env: Record<string, string>;
  try {
    if (opts.transport === "unix") {
      if (denoBinary() === null) {
        throw new Error(
          "its forwarder runs on deno, and no deno was found (this binary is not deno, and " +
            "there is none on PATH): install Deno (npm install -g deno) and retry",
        );
      }
      // Socket paths must stay under 108 bytes: a short directory in the temp dir.
      dir = await Deno.makeTempDir({ dir: opts.tmpDir, prefix: "dvg-" });
      await Deno.chmod(dir, 0o700);
      await Deno.writeTextFile(`${dir}/forward.js`, FORWARDER_JS);
      for (const [name, handler] of [["model", model.handle], ["mcp", mcpHandle]] as const) {
        servers.push(Deno.serve({
          ...quiet,
          path: `${dir}/${name}.sock`,
          transport: "unix",
          signal: aborter.signal,
        }, handler));
      }
      env = gatewayEnv(SANDBOX_MODEL_PORT, SANDBOX_MCP_PORT);
    } else {
      const ports: number[] = [];
      for (const handler of [model.handle, mcpHandle]) {
        const s = Deno.serve(
          { ...quiet, hostname: "127.0.0.1", port: 0, signal: aborter.signal },
          handler,
        );
        servers.push(s);
        ports.push((s.addr as Deno.NetAddr).port);
      }
      env = gatewayEnv(ports[0], ports[1]);
    }
  } catch (e) {
    aborter.abort();
    ctx.signal.removeEventListener("abort", onAbort);
    if (dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }

  let finished: Promise<GatewayEvidence> | null = null;
  return {
    dir,
    env,
    bwrapArgs: () => (dir === null ? [] : gatewayBwrapArgs(dir, denoBinary()!)),
    wrap: (argv) => (dir === null ? argv : forwarderArgv(denoBinary()!, argv)),
    finish() {
      finished ??= (async () => {
        const figures = await model.settle(3000);
        model.abort();
        // MCP sessions first: an open SSE stream of a session would hold the shutdown.
        await mcp.close();
        aborter.abort();
        ctx.signal.removeEventListener("abort", onAbort);
        // Graceful shutdown waits for open connections; a stuck one does not hold the attempt.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          Promise.all(servers.map((s) => s.finished.catch(() => {}))),
          new Promise((r) => timer = setTimeout(r, 3000)),
        ]);
        clearTimeout(timer);
        if (dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
        return {
          mcpCalls: mcp.calls,
          mcpToolLists: mcp.listed(),
          modelRequests: model.log,
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
 * that never offered its tools or a provider that kept failing is a fault (no verdict), a
 * request for a model that is not the attempt's fails the attempt, a spent budget is "budget", the request cap ends the attempt as completed (scored as it
 * stands, as the model loop's turn limit does).
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
        stopped: f.stopped,
        unmetered: f.unmetered,
        upstreamProblem: f.upstreamProblem,
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
