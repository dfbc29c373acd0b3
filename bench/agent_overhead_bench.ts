// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * What dvergr adds around an agent CLI's attempt: `agent:claude-code:fake-claude` answered by a
 * scripted provider of ours on 127.0.0.1 (tests/helpers/fake_agent_provider.ts: one model
 * turn that says "done"), as a benchmark attempt runs it (bubblewrap, the world gateway with
 * its MCP server and model route, seeding, capture), against the same CLI with the same
 * prompt, flags and environment run bare on the host, straight at the same provider (no
 * sandbox, no model gateway), twice: with the same MCP configuration, served by the world
 * gateway's MCP server on a host port (the peer: an agent CLI given the world's tools at all
 * connects to an MCP server before its first model request), and with no MCP server. The
 * three alternate, N rounds (default 5); prints each median, the overhead (the attempt's
 * median less the bare CLI's with MCP, and less the one without) and the load average:
 *
 *   deno run <dvergr permissions> bench/agent_overhead_bench.ts [rounds]
 *
 * Needs bubblewrap and Claude Code (DVERGR_AGENT_CLIS, or on PATH); says so and ends when
 * either is missing.
 */
import { createAgentCandidate, findAgentCli } from "../adapters/candidates/agent_cli/agent_cli.ts";
import { detectBwrap } from "../adapters/candidates/command/command.ts";
import { commandGateway } from "../adapters/gateway/command_gateway.ts";
import { routeFor } from "../adapters/gateway/routes.ts";
import { createWorld } from "../adapters/world/world.ts";
import type { AttemptContext } from "../core/bench/candidate.ts";
import {
  buildRegistry,
  parseModelsEdn,
  resolveModel,
  SHIPPED_MODELS_EDN,
  SHIPPED_MODELS_FILE,
} from "../core/models/registry.ts";
import { startFakeAgentProvider } from "../tests/helpers/fake_agent_provider.ts";
import { loadAverage, reportFigure } from "./figures.ts";

const ROUNDS = Number(Deno.args[0] ?? 5);
const env = (k: string) => Deno.env.get(k);
const KEY = "sk-dvergr-bench-key";
const TASK = "Say done.";

const cli = await findAgentCli("claude-code", undefined, env);
if (!(await detectBwrap(env)) || cli.path === null) {
  console.log(
    "skipped: needs bubblewrap and Claude Code (npm install @anthropic-ai/claude-code; " +
      "DVERGR_AGENT_CLIS=DIR names where it is installed)",
  );
  Deno.exit(0);
}
const claude = cli.path;

/** When the provider last heard a model request (performance.now()). */
let askedAt = 0;
const provider = startFakeAgentProvider(() => {
  askedAt = performance.now();
  return { text: "done" };
});
/** Per run: from its start to the model request, and from the request to its end. */
type Arm = "bare" | "bareMcp" | "attempt";
const split: Record<Arm, { toAsk: number; fromAsk: number }[]> = {
  bare: [],
  bareMcp: [],
  attempt: [],
};
const registry = buildRegistry([
  parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE),
  parseModelsEdn(
    `{:models {"fake-claude" {:provider :anthropic :base-url "${provider.url}" ` +
      ":prices {:input 3 :output 15 :cache-read 0.3 :cache-write 3.75}}}}",
    "models.edn (bench)",
  ),
]);
const benchEnv = (k: string) => (k === "ANTHROPIC_API_KEY" ? KEY : env(k));
const candidate = await createAgentCandidate(
  { name: "claude-code", cli: "claude-code", model: "fake-claude", maxTurns: 4 },
  {
    isolation: "bwrap",
    env: benchEnv,
    registry,
    killGraceMs: 500,
  },
);
await candidate.preflight?.();

/** Where an attempt's time went: before the CLI's go, the CLI's run, after the sandbox ended. */
const phases: { setup: number; ran: number; after: number }[] = [];

function attemptContext(world: { files: AttemptContext["world"]; dir: string }): AttemptContext {
  return {
    task: TASK,
    caseId: "c1",
    repetition: 0,
    world: world.files,
    worldDir: world.dir,
    reference: null,
    timeoutMs: 120_000,
    budgetMicros: 1_000_000,
    profile: "developer",
    writable: ["/out"],
    signal: new AbortController().signal,
  };
}

const newWorld = () => createWorld({ "/docs/case.txt": "quiet harbour" }, { mkdirs: ["/out"] });

/** One benchmark attempt of the candidate, from its start to its outcome. */
async function attemptMs(): Promise<number> {
  const world = await newWorld();
  try {
    const ctx = attemptContext(world);
    const t0 = performance.now();
    const outcome = await candidate.run(ctx);
    const ms = performance.now() - t0;
    split.attempt.push({ toAsk: askedAt - t0, fromAsk: t0 + ms - askedAt });
    if (outcome.status !== "completed") {
      throw new Error(`the attempt ended ${outcome.status}: ${outcome.message ?? ""}`);
    }
    const e = outcome.evidence as { elapsedMs?: number; ranMs?: number };
    if (e.elapsedMs !== undefined && e.ranMs !== undefined) {
      phases.push({ setup: e.elapsedMs - e.ranMs, ran: e.ranMs, after: ms - e.elapsedMs });
    }
    return ms;
  } finally {
    await world.remove();
  }
}

/** The world gateway's MCP server on a host port, for the bare CLI (its model route unused). */
const bareGateway = commandGateway({
  env: benchEnv,
  registry,
  maxRequests: 4,
  pinned: (reg) => routeFor(reg, resolveModel(reg, "fake-claude"), benchEnv),
});

/**
 * The same CLI, prompt, flags and environment on the host, straight at the provider; with
 * `mcp`, connected to a world gateway's MCP server as the attempt's CLI is (started before
 * the clock, as a peer's own MCP server would be running).
 */
async function bareMs(mcp: boolean): Promise<number> {
  const home = await Deno.makeTempDir();
  const world = mcp ? await newWorld() : null;
  const gateway = world ? await bareGateway(attemptContext(world), "tcp") : null;
  const mcpArgs = gateway
    ? [
      "--mcp-config",
      JSON.stringify({
        mcpServers: { world: { type: "http", url: gateway.env.DVERGR_MCP_URL } },
      }),
      "--strict-mcp-config",
      "--allowedTools",
      "mcp__world__*",
    ]
    : [];
  try {
    const t0 = performance.now();
    const out = await new Deno.Command(claude, {
      args: [
        "-p",
        "--model",
        "fake-claude",
        "--tools",
        "",
        ...mcpArgs,
        "--max-turns",
        "4",
        "--output-format",
        "json",
        "--no-session-persistence",
      ],
      cwd: home,
      clearEnv: true,
      env: {
        PATH: env("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        LANG: "C.UTF-8",
        ANTHROPIC_BASE_URL: provider.url,
        ANTHROPIC_API_KEY: KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        MCP_CONNECTION_NONBLOCKING: "0",
        CLAUDE_CODE_MAX_RETRIES: "2",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CODE_ENABLE_TELEMETRY: "0",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = out.stdin.getWriter();
    await w.write(new TextEncoder().encode(TASK));
    await w.close();
    const done = await out.output();
    const ms = performance.now() - t0;
    split[mcp ? "bareMcp" : "bare"].push({ toAsk: askedAt - t0, fromAsk: t0 + ms - askedAt });
    if (!done.success) {
      throw new Error(`bare claude failed: ${new TextDecoder().decode(done.stderr).slice(-400)}`);
    }
    if (gateway && (await gateway.finish()).mcpToolLists === 0) {
      throw new Error("the bare CLI never listed the world's MCP tools");
    }
    return ms;
  } finally {
    await Deno.remove(home, { recursive: true });
    await world?.remove();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

const loads = [await loadAverage()];
const attempts: number[] = [];
const bare: number[] = [];
const bareMcp: number[] = [];
try {
  // One of each first: caches warm (the CLI's own files, the gateway's modules).
  await bareMs(false);
  await bareMs(true);
  await attemptMs();
  for (let i = 0; i < ROUNDS; i++) {
    bare.push(await bareMs(false));
    bareMcp.push(await bareMs(true));
    attempts.push(await attemptMs());
  }
} finally {
  await provider.close();
}
loads.push(await loadAverage());
const a = median(attempts);
const b = median(bare);
const bm = median(bareMcp);
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(", ");
console.log(`claude-code bare, no MCP server:     median ${b.toFixed(0)} ms (${fmt(bare)})`);
console.log(`claude-code bare, world MCP server:  median ${bm.toFixed(0)} ms (${fmt(bareMcp)})`);
console.log(`claude-code as a dvergr attempt:     median ${a.toFixed(0)} ms (${fmt(attempts)})`);
console.log(
  `dvergr's overhead per agent attempt: ${(a - bm).toFixed(0)} ms over the bare CLI with the ` +
    `same MCP server, ${(a - b).toFixed(0)} ms over it without one (${ROUNDS} alternating ` +
    `rounds, load average ${loads.join(" → ")}; ${claude})`,
);
if (phases.length > 0) {
  const m = (k: "setup" | "ran" | "after") => median(phases.map((p) => p[k])).toFixed(0);
  console.log(
    `  the attempt's medians: ${m("setup")} ms before the CLI's go (sandbox, seeds, forwarder), ` +
      `${m("ran")} ms from go to the sandbox's end (the CLI, its MCP connection, the pack), ` +
      `${m("after")} ms after it (read back, the gateway's close)`,
  );
}
for (const k of ["bare", "bareMcp", "attempt"] as const) {
  const xs = split[k].slice(1); // the warm-up's left out
  const m = (f: "toAsk" | "fromAsk") => median(xs.map((x) => x[f])).toFixed(0);
  console.log(
    `  ${k}: ${m("toAsk")} ms to its model request, ${m("fromAsk")} ms from it to the end`,
  );
}
reportFigure({
  target: "2b",
  figure: `${(a - bm).toFixed(0)} ms`,
  peer: `bare CLI with the world MCP server ${bm.toFixed(0)} ms`,
  load: loads.join(" → "),
  note: `attempt ${a.toFixed(0)} ms; ${(a - b).toFixed(0)} ms over the bare CLI without MCP ` +
    `(${b.toFixed(0)} ms); median of ${ROUNDS}`,
});
