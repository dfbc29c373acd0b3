/**
 * The world gateway as a command candidate sees it, probed from inside the sandbox: the
 * model gateway and the MCP server on loopback ports, nothing else of the network (other
 * addresses, the host's loopback, DNS), and no real key anywhere it can look (environment,
 * files, process list).
 */
import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../adapters/candidates/command/command.ts";
import { commandGateway } from "../../../adapters/gateway/command_gateway.ts";
import {
  DUMMY_KEY,
  forwarderScripts,
  type GatewayForwarder,
  SANDBOX_GATEWAY_PORT,
  socatBinary,
  tcpserverBinary,
} from "../../../adapters/gateway/attempt_gateway.ts";
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

for (const forwarder of ["tcpserver", "socat", "deno"] as const) {
  Deno.test({
    name:
      `commandCandidate() with the world gateway (${forwarder} forwarding) reaches MCP and the model gateway only, and never sees the real key`,
    ignore: !hasBwrap || (forwarder !== "deno" && socatBinary() === null) ||
      (forwarder === "tcpserver" && tcpserverBinary() === null),
    fn: async () => {
      const provider = startFakeAgentProvider(caseReader());
      const home = `{:models {"fake-claude" {:provider :anthropic :base-url "${provider.url}"
      :prices {:input 3 :output 15}}}}`;
      const registry = buildRegistry([
        parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE),
        parseModelsEdn(home, "models.edn (test)"),
      ]);
      const world = await createWorld({ "/docs/case.txt": "quiet harbour" }, { mkdirs: ["/out"] });
      const env = (k: string) =>
        k === "ANTHROPIC_API_KEY"
          ? SECRET
          : k === "DVERGR_FORWARDER"
          ? (forwarder === "tcpserver" ? undefined : forwarder)
          : hostEnv(k);
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
        assert(r.files.includes("quiet harbour"));
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
}

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

/**
 * Streams `total` bytes as one chunked POST body over the Unix socket `socket` (1 MiB at a
 * time, the same buffer each time) until the server answers or stops reading, else to the
 * end; gives the answer's status line and how much was sent.
 */
async function streamBody(
  socket: string,
  path: string,
  total: number,
): Promise<{ status: string; sent: number }> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const enc = new TextEncoder();
  const writer = conn.writable.getWriter();
  let answer = "";
  const reading = (async () => {
    const dec = new TextDecoder();
    try {
      for await (const chunk of conn.readable) {
        answer += dec.decode(chunk, { stream: true });
        if (answer.includes("\r\n")) break;
      }
    } catch {
      // reset: the answer (if any) is what was read
    }
  })();
  const chunk = new Uint8Array(1 << 20).fill(0x20);
  const head = enc.encode(`${chunk.length.toString(16)}\r\n`);
  const crlf = enc.encode("\r\n");
  let sent = 0;
  try {
    await writer.write(enc.encode(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        `accept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n`,
    ));
    while (sent < total && answer === "") {
      await writer.write(head);
      await writer.write(chunk);
      await writer.write(crlf);
      sent += chunk.length;
    }
    // All sent and no answer yet: end the body, so a server that read it all answers.
    if (answer === "") await writer.write(enc.encode("0\r\n\r\n"));
  } catch {
    // The server closed the connection after answering.
  }
  await reading;
  try {
    conn.close();
  } catch {
    // already closed
  }
  return { status: answer.split("\r\n")[0], sent };
}

/** VmRSS and VmHWM (peak) of a process, bytes; `cat` reads /proc for us (Deno needs -A). */
async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).output();
  const status = new TextDecoder().decode(out.stdout);
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") * 1024, hwm: kb("VmHWM") * 1024 };
}

Deno.test("startAttemptGateway() refuses a 4 GiB body to the models or to MCP with 413 while it streams: the host's memory stays flat", async () => {
  const host = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-net",
      new URL("../../helpers/gateway_host.ts", import.meta.url).pathname,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = host.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let first = "";
    while (!first.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error("the gateway host ended before it served");
      first += value;
    }
    const { dir, base } = JSON.parse(first);
    const MiB = 1024 * 1024;
    for (const [socket, path] of [["gateway.sock", "/v1/messages"], ["gateway.sock", "/mcp"]]) {
      const before = await memoryOf(host.pid);
      // A body of 4 GiB offered (generated as it is sent, never held): refused after its first MiBs.
      // Behind the attempt's secret (the base path): a body refused while it streams.
      const r = await streamBody(`${dir}/${socket}`, `${base}${path}`, 4096 * MiB);
      const after = await memoryOf(host.pid);
      // deno-lint-ignore no-console -- the measured figures, for the record
      console.error(
        `${socket}: sent ${r.sent / MiB} MiB; RSS ${(before.rss / MiB).toFixed(1)} → ${
          (after.rss / MiB).toFixed(1)
        } MiB, peak ${(before.hwm / MiB).toFixed(1)} → ${(after.hwm / MiB).toFixed(1)} MiB`,
      );
      // Memory, not time: the peak grew by what one bounded body holds, not by the body.
      const grew = (after.hwm - before.hwm) / MiB;
      assert(grew < 64, `${socket}: the host's peak memory grew by ${grew.toFixed(1)} MiB`);
      assert.match(r.status, /^HTTP\/1\.1 413/, `${socket}: ${r.status}`);
      assert(r.sent < 64 * MiB, `${socket}: read ${r.sent / MiB} MiB before answering`);
    }
  } finally {
    await host.stdin.close().catch(() => {});
    await lines.cancel().catch(() => {});
    await host.status;
  }
});

/**
 * Runs the forwarder's start and ready lines in a network namespace of their own; once ready,
 * a client connects to the port (exit 3 when it cannot: the port did not listen).
 */
async function readyWith(
  forwarder: GatewayForwarder,
  env: Record<string, string> = {},
  writable: string[] = [],
): Promise<{ code: number; ms: number }> {
  const { start, ready } = forwarderScripts(forwarder);
  const t0 = performance.now();
  const out = await new Deno.Command("bwrap", {
    args: [
      "--unshare-user",
      "--unshare-net",
      "--die-with-parent",
      "--ro-bind",
      "/",
      "/",
      ...writable.flatMap((d) => ["--bind", d, d]),
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "/bin/sh",
      "-c",
      `${start}\n${ready}\n${socatBinary()} -u /dev/null ` +
      `TCP4:127.0.0.1:${SANDBOX_GATEWAY_PORT} || exit 3\nkill "$forwarder"`,
    ],
    env,
    stdout: "null",
    stderr: "null",
  }).output();
  return { code: out.code, ms: performance.now() - t0 };
}

Deno.test({
  name:
    "forwarderScripts(): ready waits until the forwarder listens however slow it is, and exits 125 only when it died",
  ignore: !hasBwrap || socatBinary() === null,
  async fn() {
    const dir = await Deno.makeTempDir();
    // Slow to listen: no number of looks gives up on it (the host's setup limit is the deadline).
    const slow = `${dir}/slow-socat`;
    await Deno.writeTextFile(slow, `#!/bin/sh\nsleep 2\nexec ${socatBinary()} "$@"\n`);
    const dead = `${dir}/dead-socat`;
    await Deno.writeTextFile(dead, "#!/bin/sh\nexit 1\n");
    await Deno.chmod(slow, 0o755);
    await Deno.chmod(dead, 0o755);
    const waited = await readyWith({ socat: slow });
    assert.equal(waited.code, 0);
    assert.ok(waited.ms >= 2000, `${waited.ms}`);
    const socat = socatBinary()!;
    assert.equal((await readyWith({ socat })).code, 0);
    const tcpserver = tcpserverBinary();
    if (tcpserver) assert.equal((await readyWith({ tcpserver, socat })).code, 0);
    assert.equal((await readyWith({ socat: dead })).code, 125);
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name:
    "forwarderScripts(): with tcpserver, ready blocks until it says it listens (no looks, no sleep), and exits 125 when it died",
  ignore: !hasBwrap || socatBinary() === null || tcpserverBinary() === null,
  async fn() {
    const dir = await Deno.makeTempDir();
    const socat = socatBinary()!;
    const tcpserver = tcpserverBinary()!;
    // Every sleep the wait runs is logged: the looks sleep between them, the blocking read never.
    const bin = `${dir}/bin`;
    await Deno.mkdir(bin);
    const slept = `${dir}/slept`;
    await Deno.writeTextFile(
      `${bin}/sleep`,
      `#!/bin/sh\necho "$@" >> ${slept}\nexec /bin/sleep "$@"\n`,
    );
    const slow = `${dir}/slow-tcpserver`;
    await Deno.writeTextFile(slow, `#!/bin/sh\n/bin/sleep 1\nexec ${tcpserver} "$@"\n`);
    const dead = `${dir}/dead-tcpserver`;
    await Deno.writeTextFile(dead, "#!/bin/sh\nexit 1\n");
    for (const f of [`${bin}/sleep`, slow, dead]) await Deno.chmod(f, 0o755);
    const env = { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` };
    const sleeps = async () =>
      (await Deno.readTextFile(slept).catch(() => "")).split("\n").length - 1;

    const waited = await readyWith({ tcpserver: slow, socat }, env, [dir]);
    assert.equal(waited.code, 0);
    assert.ok(waited.ms >= 1000, `${waited.ms}`);
    assert.equal(await sleeps(), 0, "the wait for tcpserver slept");
    assert.equal((await readyWith({ tcpserver: dead, socat }, env, [dir])).code, 125);
    // The same slow start behind socat is waited for by looking, with sleeps between looks.
    const slowSocat = `${dir}/slow-socat`;
    await Deno.writeTextFile(slowSocat, `#!/bin/sh\n/bin/sleep 1\nexec ${socat} "$@"\n`);
    await Deno.chmod(slowSocat, 0o755);
    assert.equal((await readyWith({ socat: slowSocat }, env, [dir])).code, 0);
    assert.ok(await sleeps() > 0, "the hook saw no sleep of the looks");
    await Deno.remove(dir, { recursive: true });
  },
});

for (const forwarder of ["socat", "deno"] as const) {
  Deno.test({
    name:
      `attempts' gateways (${forwarder} forwarder) share one directory and socket, which a finished one leaves to the others`,
    ignore: forwarder === "socat" && socatBinary() === null,
    fn: async () => {
      const registry = buildRegistry([parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE)]);
      const env = (k: string) => k === "DVERGR_FORWARDER" ? forwarder : hostEnv(k);
      const world = await createWorld({ "/docs/case.txt": "quiet harbour" }, { mkdirs: ["/out"] });
      try {
        const factory = commandGateway({ env, registry });
        const a = await factory(attemptIn(world), "unix");
        const b = await factory(attemptIn(world), "unix");
        assert.equal(a.dir, b.dir);
        assert.deepEqual(a.sockets, b.sockets);
        assert.deepEqual(a.sockets, [`${a.dir}/gateway.sock`]);
        assert.notEqual(a.env.DVERGR_MODEL_URL, b.env.DVERGR_MODEL_URL);
        assert.equal(Deno.statSync(a.dir!).mode! & 0o777, 0o700);
        const held = [...Deno.readDirSync(a.dir!)].map((e) => e.name);
        assert.ok(held.includes("gateway.sock"), held.join());
        if (forwarder === "deno") assert.ok(held.includes("forward.js"), held.join());
        await a.finish();
        assert.ok(Deno.lstatSync(a.sockets[0]).isSocket, "a finished attempt took the socket");
        await b.finish();
        const c = await factory(attemptIn(world), "unix");
        assert.equal(c.dir, a.dir);
        await c.finish();
      } finally {
        await world.remove();
      }
    },
  });
}
