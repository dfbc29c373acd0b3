/**
 * The real agent CLIs (Claude Code, Codex; installed with npm, see README) in sandboxed
 * attempts, driven by a scripted provider of ours on 127.0.0.1 through the world gateway.
 * Skipped, with the reason printed, only when a CLI or bubblewrap is absent; CI installs
 * both (.ci/run) and sets DVERGR_REQUIRE_AGENT_CLIS=1, which turns a missing CLI into a
 * failure.
 */
import assert from "node:assert/strict";
import {
  AGENT_CLIS,
  type AgentCli,
  createAgentCandidate,
  findAgentCli,
  TESTED_VERSIONS,
} from "../../../../adapters/candidates/agent_cli/agent_cli.ts";
import { detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import { DUMMY_KEY } from "../../../../adapters/gateway/attempt_gateway.ts";
import { createWorld } from "../../../../adapters/world/world.ts";
import type { AttemptContext, CandidateOutcome } from "../../../../core/bench/candidate.ts";
import {
  buildRegistry,
  parseModelsEdn,
  SHIPPED_MODELS_EDN,
  SHIPPED_MODELS_FILE,
} from "../../../../core/models/registry.ts";
import { costMicros } from "../../../../core/models/cost.ts";
import {
  type AgentScript,
  caseReader,
  type FakeAgentProvider,
  startFakeAgentProvider,
} from "../../../helpers/fake_agent_provider.ts";

const SECRET = "sk-dvergr-test-real-key-0c1d2e3f";
const hostEnv = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(hostEnv);
const required = hostEnv("DVERGR_REQUIRE_AGENT_CLIS") === "1";

const CLIS: { cli: AgentCli; model: string }[] = [
  { cli: "claude-code", model: "fake-claude" },
  { cli: "codex", model: "fake-gpt" },
];
const PRICES = "{:input 3 :output 15 :cache-read 0.3 :cache-write 3.75}";
const LIST = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

function registryFor(url: string) {
  const home = `{:models {"fake-claude" {:provider :anthropic :base-url "${url}" :prices ${PRICES}}
    "fake-gpt" {:provider :openai :base-url "${url}" :prices ${PRICES}}
    "fake-gpt-sub" {:provider :openai :base-url "${url}" :list-price-of "fake-gpt"}
    "fake-claude-sub" {:provider :anthropic :base-url "${url}" :list-price-of "fake-claude"}}}`;
  return buildRegistry([
    parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE),
    parseModelsEdn(home, "models.edn (test)"),
  ]);
}

async function skipReason(cli: AgentCli): Promise<string | null> {
  if (!hasBwrap) return "bubblewrap is not available";
  const found = await findAgentCli(cli, undefined, hostEnv);
  if (found.path === null) {
    if (required) throw new Error(`${cli} is required (DVERGR_REQUIRE_AGENT_CLIS=1) but absent`);
    return `the ${cli} CLI is not installed (set DVERGR_AGENT_CLIS or put it on PATH)`;
  }
  return null;
}

interface Run {
  /** What `during` found while the attempt ran. */
  tree: SandboxTree | null;
  outcome: CandidateOutcome;
  captured: Record<string, string>;
  provider: FakeAgentProvider;
  ms: number;
  marker: string;
}

async function runAgent(
  cli: AgentCli,
  model: string,
  script: AgentScript,
  opts: {
    timeoutMs?: number;
    budgetMicros?: number;
    maxTurns?: number;
    fixtures?: Record<string, string>;
    args?: string[];
    wrapMcp?: (h: (r: Request) => Promise<Response>) => (r: Request) => Promise<Response>;
    /** Looks at the attempt's processes once the CLI asked the provider something. */
    watchTree?: boolean;
  } = {},
): Promise<Run> {
  // With watchTree the first answer waits until the attempt's processes were looked at.
  let looked = () => {};
  const lookedAt = new Promise<void>((r) => looked = r);
  const provider = startFakeAgentProvider(
    script,
    opts.watchTree ? (n) => (n === 1 ? lookedAt : Promise.resolve()) : undefined,
  );
  const marker = `dvergr-attempt-${crypto.randomUUID()}`;
  const caseText = `quiet harbour ${marker.slice(-6)}`;
  const world = await createWorld(
    opts.fixtures ?? { "/docs/case.txt": caseText },
    { mkdirs: ["/out"] },
  );
  try {
    const env = (k: string) =>
      k === "ANTHROPIC_API_KEY" || k === "OPENAI_API_KEY" ? SECRET : hostEnv(k);
    const cand = await createAgentCandidate(
      { name: cli, cli, model, maxTurns: opts.maxTurns ?? 8, args: opts.args },
      {
        isolation: "bwrap",
        env,
        registry: registryFor(provider.url),
        killGraceMs: 500,
        wrapMcp: opts.wrapMcp,
      },
    );
    await cand.preflight?.();
    const ctx: AttemptContext = {
      task:
        `Read /docs/case.txt with the read_file tool and write the answer to /out/answer.edn. ${marker}`,
      caseId: "c1",
      repetition: 0,
      world: world.files,
      worldDir: world.dir,
      reference: null,
      timeoutMs: opts.timeoutMs ?? 60_000,
      budgetMicros: opts.budgetMicros ?? 1_000_000,
      profile: "developer",
      writable: ["/out"],
      signal: new AbortController().signal,
    };
    const started = performance.now();
    const running = cand.run(ctx);
    let tree: SandboxTree | null = null;
    let done = false;
    running.finally(() => done = true);
    if (opts.watchTree) {
      while (!done && provider.requests.length === 0) {
        await new Promise((r) => setTimeout(r, 100));
      }
      tree = await sandboxTree(world.dir, caseText);
      looked();
    }
    const outcome = await running;
    const ms = performance.now() - started;
    const captured = (await world.capture(["/out"])).files;
    return { tree, outcome, captured, provider, ms, marker };
  } finally {
    await provider.close();
    await world.remove();
  }
}

interface SandboxTree {
  pids: number[];
  /** Environment and command line of every process of the attempt, as the host sees them. */
  text: string;
}

/** A command line that runs one of the agent CLIs (their executables' names). */
const RUNS_AGENT_CLI = new RegExp(
  `\\b(${AGENT_CLIS.map((c) => TESTED_VERSIONS[c].bin).join("|")})\\b`,
);

/**
 * The attempt's processes: its bwrap and that one's descendants. Unstaged, bwrap's command
 * line (by its path, as the launch runs it) names the world. Staged as root, it is this
 * process's child (the launch execs it) and names only its staged copy; other test modules of
 * this process (deno test --parallel runs them in one) may run agent CLIs in bwrap of their
 * own at the same time, so such a bwrap is the attempt's when one of its processes works in
 * a world holding this attempt's case (`caseText`, read through /proc/PID/cwd).
 */
async function sandboxTree(worldDir: string, caseText: string): Promise<SandboxTree> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,args="] }).output();
  const rows = new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim()).filter(
    (l) => l !== "",
  ).map((l) => {
    const [pid, ppid, ...args] = l.split(/\s+/);
    return { pid: Number(pid), ppid: Number(ppid), args: args.join(" ") };
  });
  const bwraps = rows.filter((r) => /^(\S*\/)?bwrap /.test(r.args));
  const treeOf = (root: number) => {
    const pids = new Set([root]);
    for (let grew = true; grew;) {
      grew = false;
      for (const r of rows) {
        if (pids.has(r.ppid) && !pids.has(r.pid)) {
          pids.add(r.pid);
          grew = true;
        }
      }
    }
    return pids;
  };
  const pids = new Set<number>();
  for (const b of bwraps) {
    if (b.args.includes(worldDir)) {
      treeOf(b.pid).forEach((p) => pids.add(p));
    } else if (b.ppid === Deno.pid && RUNS_AGENT_CLI.test(b.args)) {
      const tree = treeOf(b.pid);
      const cases = [...tree].map((p) => `/proc/${p}/cwd/docs/case.txt`);
      const read = await new Deno.Command("cat", { args: cases, stderr: "null" }).output();
      if (new TextDecoder().decode(read.stdout).includes(caseText)) {
        tree.forEach((p) => pids.add(p));
      }
    }
  }
  // Deno reads /proc/PID/environ only with --allow-all: cat reads it for us.
  const files = [...pids].flatMap((p) => [`/proc/${p}/environ`, `/proc/${p}/cmdline`]);
  const cat = await new Deno.Command("cat", { args: files, stderr: "null" }).output();
  const text = new TextDecoder().decode(cat.stdout);
  return { pids: [...pids], text };
}

/** The pids still running (a zombie waiting for its reaper has ended). */
async function stillRunning(pids: number[]): Promise<string[]> {
  if (pids.length === 0) return [];
  const out = await new Deno.Command("ps", {
    args: ["-o", "pid=,stat=,args=", "-p", pids.join(",")],
  })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim())
    .filter((l) => l !== "" && !/^\d+\s+Z/.test(l));
}

async function processesWith(text: string): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid,args"] }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) =>
    l.includes(text) && !l.includes("ps -eo")
  );
}

function gatewayOf(o: CandidateOutcome) {
  return o.evidence.gateway as {
    mcpCalls: { tool: string; args: Record<string, unknown> }[];
    modelLog: { path: string; refused?: string; worldTools?: boolean }[];
    stopped: string | null;
    fault: string | null;
  };
}

for (const { cli, model } of CLIS) {
  const reason = await skipReason(cli);
  // deno-lint-ignore no-console -- say why tests are skipped
  if (reason !== null) console.error(`agent_cli_test: skipping ${cli} tests: ${reason}`);
  const t = (name: string, fn: () => Promise<void>) =>
    Deno.test({ name: `createAgentCandidate() [${cli}] ${name}`, ignore: reason !== null, fn });

  t(
    "reads the case through MCP, writes the answer through MCP, and is metered to the token",
    async () => {
      const { outcome, captured, provider, marker, tree } = await runAgent(
        cli,
        model,
        caseReader(),
        { watchTree: true },
      );
      assert.equal(outcome.status, "completed", outcome.message ?? "");
      assert.equal(
        captured["/out/answer.edn"],
        `{"answer" "QUIET HARBOUR ${marker.slice(-6).toUpperCase()}"}\n`,
      );
      const gw = gatewayOf(outcome);
      assert.deepEqual(gw.mcpCalls.map((c) => c.tool), ["read_file", "write_file"]);
      assert.deepEqual(gw.mcpCalls[0].args, { path: "/docs/case.txt" });
      // Tokens and cost equal what the provider reported, summed.
      const sum = provider.sent.reduce(
        (a, u) => ({
          input: a.input + u.input,
          output: a.output + u.output,
          cacheRead: a.cacheRead + u.cacheRead,
          cacheWrite: cli === "claude-code" ? a.cacheWrite + u.cacheWrite : 0,
        }),
        { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      );
      assert.equal(provider.sent.length, 3);
      assert.deepEqual(outcome.usage, sum);
      assert.equal(
        outcome.billedMicros,
        costMicros(sum, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }),
      );
      // The real key reached the provider; the sandbox held only a dummy.
      for (const r of provider.requests) {
        const key = r.headers["x-api-key"] ?? r.headers["authorization"];
        assert(key?.includes(SECRET), `request without the real key: ${JSON.stringify(key)}`);
      }
      assert(!JSON.stringify(outcome.evidence).includes(SECRET));
      // The first request offered the world's tools, and only world/MCP tools were offered.
      assert.equal(gw.modelLog.find((e) => e.path !== "/")?.worldTools, true);
      const agent = outcome.evidence.agent as { result: unknown; cli: string };
      assert.equal(agent.cli, cli);
      assert.notEqual(agent.result, null);
      assert.deepEqual(await processesWith(marker), []);
      // While it ran, no process of the attempt held the real key; after it, none is left.
      assert(tree !== null && tree.pids.length > 0);
      assert(!tree.text.includes(SECRET), "the real key is in a sandboxed process");
      assert.deepEqual(await stillRunning(tree.pids), [], "processes of the attempt outlived it");
    },
  );

  t(
    "a subscription model bills nothing and reports the list price of the same tokens",
    async () => {
      const { outcome, provider } = await runAgent(cli, `${model}-sub`, caseReader());
      assert.equal(outcome.status, "completed", outcome.message ?? "");
      assert.equal(outcome.billedMicros, 0);
      assert.equal(provider.sent.length, 3);
      assert.equal(outcome.listMicros, costMicros(outcome.usage, LIST));
      assert((outcome.listMicros ?? 0) > 0);
    },
  );

  t("stops at the turn limit: its own (Claude) or the gateway's request cap (Codex)", async () => {
    const { outcome, provider, captured } = await runAgent(
      cli,
      model,
      () => ({ tool: "list_files", args: { dir: "/" } }),
      { maxTurns: 2 },
    );
    assert.equal(provider.requests.length, 2);
    const result = (outcome.evidence.agent as { result: Record<string, unknown> }).result;
    if (cli === "codex") assert.equal(gatewayOf(outcome).stopped, "request-cap");
    else assert.equal(result.subtype, "error_max_turns");
    assert.equal(outcome.status, "completed", outcome.message ?? "");
    assert.equal(captured["/out/answer.edn"], undefined);
  });

  t("stops when the budget is spent, and never spends more", async () => {
    // A request is forwarded once its worst case fits (about 1 token a byte of its body at
    // $3.75/M, and at least 1,024 output tokens at $15/M): Claude Code's ~8 kB requests fit
    // $0.06 a few times, Codex's ~23 kB ones $0.12; each call then costs about $0.003.
    const budgetMicros = cli === "claude-code" ? 60_000 : 120_000;
    const { outcome, provider } = await runAgent(
      cli,
      model,
      () => ({ tool: "list_files", args: { dir: "/" } }),
      { budgetMicros, maxTurns: 30 },
    );
    const n = provider.requests.length;
    assert(n >= 1 && n < 30, `${n} requests`);
    assert.equal(outcome.status, "budget", outcome.message ?? "");
    assert(outcome.billedMicros > 0 && outcome.billedMicros <= budgetMicros);
    const log = (outcome.evidence.gateway as { modelLog: { refused?: string }[] }).modelLog;
    assert.equal(log.at(-1)?.refused, "budget");
  });

  t("a provider that keeps failing makes the attempt a fault", async () => {
    // The CLI gives up after its own retries (and the gateway's one): a fault, not a time-out.
    // The time limit is far past that so that a loaded machine's slowness cannot decide it.
    const { outcome } = await runAgent(
      cli,
      model,
      () => ({ http: 500, body: '{"error":{"message":"overloaded"}}' }),
      { timeoutMs: 300_000 },
    );
    assert.equal(outcome.status, "fault", outcome.message ?? "");
    assert.match(outcome.message ?? "", /provider kept failing/);
  });

  t(
    "a CLI left waiting (provider hangs) is stopped at the time limit with its process tree",
    async () => {
      const { outcome, marker, ms, tree } = await runAgent(cli, model, () => ({ hang: true }), {
        timeoutMs: 15_000,
        watchTree: true,
      });
      assert.equal(outcome.status, "timeout");
      assert(ms < 40_000, `took ${ms} ms`);
      // While it ran: bwrap, the forwarder and the CLI, none holding the real key.
      assert(tree !== null && tree.pids.length >= 3, `processes: ${tree?.pids}`);
      assert(
        tree.text.includes("DVERGR_MCP_URL=") && tree.text.includes(DUMMY_KEY),
        `${tree.pids} ${tree.text.slice(0, 2000)}`,
      );
      assert(!tree.text.includes(SECRET), "the real key is in a sandboxed process");
      // After it: every one of them is gone.
      assert.deepEqual(await stillRunning(tree.pids), []);
      assert.deepEqual(await processesWith(marker), []);
    },
  );

  t("a model asking for a built-in tool gets none: the world is untouched", async () => {
    const builtin = cli === "claude-code" ? "Bash" : "shell";
    const { outcome, captured, provider } = await runAgent(
      cli,
      model,
      ({ n }) =>
        n === 1
          ? { tool: builtin, args: { command: "echo pwned > /out/answer.edn", cmd: ["sh"] } }
          : { text: "done" },
    );
    assert.equal(captured["/out/answer.edn"], undefined);
    assert.deepEqual(gatewayOf(outcome).mcpCalls, []);
    const offered = provider.requests[0].body.tools as { name: string }[];
    const names = offered.map((t) => t.name);
    assert(!names.includes(builtin), `built-in ${builtin} offered: ${names.join(", ")}`);
  });
}

for (const { cli, model } of CLIS) {
  const reason = await skipReason(cli);
  const t = (name: string, fn: () => Promise<void>) =>
    Deno.test({ name: `createAgentCandidate() [${cli}] ${name}`, ignore: reason !== null, fn });

  t("waits for a slow MCP start: the first model request offers the world's tools", async () => {
    let first = true;
    const { outcome, captured } = await runAgent(cli, model, caseReader(), {
      wrapMcp: (h) => async (req) => {
        if (first) {
          first = false;
          await new Promise((r) => setTimeout(r, 3000));
        }
        return await h(req);
      },
    });
    assert.equal(outcome.status, "completed", outcome.message ?? "");
    assert.match(captured["/out/answer.edn"] ?? "", /QUIET HARBOUR/);
    assert.equal(gatewayOf(outcome).modelLog.find((e) => e.path !== "/")?.worldTools, true);
  });

  t("an MCP server that never comes up makes the attempt a fault, not a verdict", async () => {
    const { outcome, provider } = await runAgent(cli, model, caseReader(), {
      wrapMcp: () => () => Promise.resolve(new Response("unavailable", { status: 503 })),
    });
    assert.equal(outcome.status, "fault", outcome.message ?? "");
    // Either the gateway refused a first request without the tools, or none was made.
    assert(
      provider.requests.length === 0,
      `the provider was asked ${provider.requests.length} times`,
    );
  });
}

for (const { cli, model } of CLIS) {
  const reason = await skipReason(cli);
  Deno.test({
    name:
      `createAgentCandidate() [${cli}] a CLI told to reach another MCP server on the network reaches nothing but the world`,
    ignore: reason !== null,
    fn: async () => {
      // The extra server is real and listening on the host: only the sandbox keeps it away.
      let hits = 0;
      const outside = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
        hits++;
        return new Response("{}", { headers: { "content-type": "application/json" } });
      });
      const url = `http://127.0.0.1:${outside.addr.port}/mcp`;
      try {
        const args = cli === "claude-code"
          ? ["--mcp-config", JSON.stringify({ mcpServers: { evil: { type: "http", url } } })]
          : ["-c", `mcp_servers.evil={url="${url}"}`];
        const { outcome, captured } = await runAgent(cli, model, caseReader(), { args });
        assert.equal(outcome.status, "completed", outcome.message ?? "");
        assert.match(captured["/out/answer.edn"] ?? "", /QUIET HARBOUR/);
        assert.equal(hits, 0, "the sandboxed CLI reached a server on the host");
      } finally {
        await outside.shutdown();
      }
    },
  });
}
