/**
 * The world gateway as a command candidate sees it, probed from inside the sandbox: the
 * model gateway and the MCP server on loopback ports, nothing else of the network (other
 * addresses, the host's loopback, DNS), and no real key anywhere it can look (environment,
 * files, process list).
 */
import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../adapters/candidates/command/command.ts";
import { commandGateway } from "../../../adapters/gateway/command_gateway.ts";
import { DUMMY_KEY } from "../../../adapters/gateway/attempt_gateway.ts";
import { createWorld } from "../../../adapters/world/world.ts";
import type { AttemptContext } from "../../../core/bench/candidate.ts";
import {
  buildRegistry,
  parseModelsEdn,
  SHIPPED_MODELS_EDN,
  SHIPPED_MODELS_FILE,
} from "../../../core/models/registry.ts";
import { caseReader, startFakeAgentProvider } from "../../helpers/fake_agent_provider.ts";

const SECRET = "sk-dvergr-probe-secret-9a8b7c";
const hostEnv = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(hostEnv);
// deno-lint-ignore no-console -- say why tests are skipped
if (!hasBwrap) console.error("attempt_gateway_test: skipping sandbox probes: no bubblewrap");

/** An attempt in `world` that may write /out, with a $1 budget and a minute. */
function attemptIn(world: { files: AttemptContext["world"]; dir: string }): AttemptContext {
  return {
    task: "probe",
    caseId: null,
    repetition: 0,
    world: world.files,
    worldDir: world.dir,
    reference: null,
    timeoutMs: 60_000,
    budgetMicros: 1_000_000,
    profile: "developer",
    writable: ["/out"],
    signal: new AbortController().signal,
  };
}

/** Runs inside the sandbox with deno eval; writes what it could reach to /out/probe.json. */
const PROBE = `
const r = {};
const env = Deno.env.toObject();
async function reach(url, init = {}) {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(4000) });
    await res.body?.cancel();
    return res.status;
  } catch (e) {
    return "failed";
  }
}
r.head = await reach(env.DVERGR_MODEL_URL + "/", { method: "HEAD" });
r.providerDirect = await reach(env.PROVIDER_URL + "/");
r.outside = await reach("http://1.1.1.1/");
r.hostName = await reach("http://example.com/");
try { await Deno.resolveDns("example.com", "A"); r.dns = "resolved"; } catch { r.dns = "failed"; }
const msg = await fetch(env.ANTHROPIC_BASE_URL + "/v1/messages", {
  method: "POST",
  headers: { "content-type": "application/json", "x-api-key": env.ANTHROPIC_API_KEY },
  body: JSON.stringify({ model: "fake-claude", max_tokens: 10, stream: true, tools: [],
    messages: [{ role: "user", content: "hi" }] }),
});
r.model = msg.status;
r.modelBody = (await msg.text()).length;
const init = await fetch(env.DVERGR_MCP_URL, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
    protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "probe", version: "1" } } }),
});
r.mcp = init.status;
const sid = init.headers.get("mcp-session-id");
await init.text();
const list = await fetch(env.DVERGR_MCP_URL, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
    "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
});
r.tools = (await list.json()).result.tools.map((t) => t.name);
r.env = JSON.stringify(env);
let procs = "";
for (const e of Deno.readDirSync("/proc")) {
  if (!/^\\d+$/.test(e.name)) continue;
  for (const f of ["environ", "cmdline"]) {
    try { procs += Deno.readTextFileSync("/proc/" + e.name + "/" + f); } catch {}
  }
}
r.procs = procs;
let files = "";
function walk(d) {
  let entries;
  try { entries = [...Deno.readDirSync(d)]; } catch { return; }
  for (const e of entries) {
    const p = d + "/" + e.name;
    // Deno's own cache (HOME=/tmp) is binary and large: the key is not there to find.
    if (e.isDirectory && e.name !== ".cache") walk(p);
    else if (e.isFile) { try { files += Deno.readTextFileSync(p).slice(0, 100000); } catch {} }
  }
}
for (const d of ["/run", "/tmp", "/docs", "/out", "/home"]) walk(d);
r.files = files;
await Deno.writeTextFile("/out/probe.json", JSON.stringify(r));
`;

Deno.test({
  name:
    "commandCandidate() with the world gateway reaches MCP and the model gateway only, and never sees the real key",
  ignore: !hasBwrap,
  fn: async () => {
    const provider = startFakeAgentProvider(caseReader());
    const home = `{:models {"fake-claude" {:provider :anthropic :base-url "${provider.url}"
      :prices {:input 3 :output 15}}}}`;
    const registry = buildRegistry([
      parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE),
      parseModelsEdn(home, "models.edn (test)"),
    ]);
    const world = await createWorld({ "/docs/case.txt": "quiet harbour" }, { mkdirs: ["/out"] });
    const env = (k: string) => (k === "ANTHROPIC_API_KEY" ? SECRET : hostEnv(k));
    try {
      const deno = Deno.execPath();
      const cand = commandCandidate(
        {
          name: "probe",
          command: `"${deno}" eval --quiet "$PROBE_JS"`,
          env: { PROVIDER_URL: provider.url, PROBE_JS: PROBE },
        },
        {
          isolation: "bwrap",
          env,
          gateway: commandGateway({ env, registry }),
        },
      );
      const outcome = await cand.run(attemptIn(world));
      assert.equal(
        outcome.status,
        "completed",
        `${outcome.message} ${outcome.evidence.stderrTail}`,
      );
      const probe = (await world.capture(["/out"])).files["/out/probe.json"];
      assert(probe, `no probe: ${JSON.stringify(outcome.evidence).slice(0, 3000)}`);
      const r = JSON.parse(probe);
      assert.equal(r.head, 200);
      assert.equal(r.model, 200);
      assert(r.modelBody > 0);
      assert.equal(r.mcp, 200);
      assert.deepEqual(r.tools, ["list_files", "read_file", "write_file"]);
      assert.equal(r.providerDirect, "failed", "the host's loopback is reachable");
      assert.equal(r.outside, "failed", "an outside address is reachable");
      assert.equal(r.hostName, "failed");
      assert.equal(r.dns, "failed", "DNS resolves");
      assert(!r.env.includes(SECRET) && r.env.includes(DUMMY_KEY));
      assert(!r.procs.includes(SECRET));
      assert(r.files.includes("quiet harbour") && r.files.includes("dvergr's forwarder"));
      assert(!r.files.includes(SECRET));
      // The provider got the real key, and the request was metered.
      assert.equal(provider.requests[0].headers["x-api-key"], SECRET);
      const u = provider.sent[0];
      assert.deepEqual(outcome.usage, u);
      assert(outcome.billedMicros > 0);
      assert(!JSON.stringify(outcome).includes(SECRET));
    } finally {
      await provider.close();
      await world.remove();
    }
  },
});

Deno.test("commandCandidate() without bubblewrap reaches the world gateway on host loopback ports", async () => {
  const world = await createWorld({ "/docs/case.txt": "quiet harbour" }, { mkdirs: ["/out"] });
  try {
    const js = `
const url = Deno.env.get("DVERGR_MCP_URL");
const h = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const init = await fetch(url, { method: "POST", headers: h, body: JSON.stringify({ jsonrpc: "2.0",
  id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {},
  clientInfo: { name: "t", version: "1" } } }) });
const sid = init.headers.get("mcp-session-id");
await init.text();
const call = await fetch(url, { method: "POST", headers: { ...h, "mcp-session-id": sid,
  "mcp-protocol-version": "2025-06-18" }, body: JSON.stringify({ jsonrpc: "2.0", id: 2,
  method: "tools/call", params: { name: "read_file", arguments: { path: "/docs/case.txt" } } }) });
const text = (await call.json()).result.content[0].text;
await Deno.writeTextFile("out/answer.txt", text.toUpperCase());
`;
    const env = (k: string) => hostEnv(k);
    const cand = commandCandidate(
      { name: "mcp", command: `"${Deno.execPath()}" eval --quiet "$JS"`, env: { JS: js } },
      { isolation: "none", env, gateway: commandGateway({ env }) },
    );
    const outcome = await cand.run(attemptIn(world));
    assert.equal(outcome.status, "completed", String(outcome.evidence.stderrTail));
    assert.equal(outcome.isolated, false);
    assert.equal((await world.capture(["/out"])).files["/out/answer.txt"], "QUIET HARBOUR");
    const gw = outcome.evidence.gateway as { mcpCalls: { tool: string }[] };
    assert.deepEqual(gw.mcpCalls.map((c) => c.tool), ["read_file"]);
  } finally {
    await world.remove();
  }
});
