import assert from "node:assert/strict";
import { openHome } from "../../adapters/store/kv/home.ts";
import { recallBundle } from "../helpers/bundles.ts";
import {
  call,
  callError,
  connectStdio,
  fromScratchFlow,
  initialize,
  type Json,
  ROOT,
  serveArgs,
} from "./helpers.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "dvergr serve --mcp over stdio runs the from-scratch flow with the SDK client",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const { client, stderr, close } = await connectStdio(home);
    try {
      assert.equal(client.getServerVersion()?.name, "dvergr");
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (
        const n of [
          "room_create",
          "room_list",
          "room_files",
          "room_read",
          "room_write",
          "catalog_list",
          "catalog_check",
          "catalog_calibrate",
          "catalog_cases",
          "catalog_benchmark",
          "catalog_export",
          "catalog_import",
          "job_status",
          "job_list",
          "job_cancel",
          "scorecard_list",
          "scorecard_detail",
          "experiment_report",
          "experiment_progress",
        ]
      ) assert.ok(names.includes(n), `the bench profile has ${n}`);
      assert.ok(!names.includes("catalog_promote"), "promotion is admin only");
      const bench = tools.find((t) => t.name === "catalog_benchmark")!;
      assert.equal(bench.annotations?.readOnlyHint, false);
      assert.equal(bench.annotations?.openWorldHint, true);
      const read = tools.find((t) => t.name === "scorecard_detail")!;
      assert.equal(read.annotations?.readOnlyHint, true);
      assert.equal(read.annotations?.idempotentHint, true);

      await fromScratchFlow(client);
      // A user's mistake is an error result, not a protocol error.
      const err = await callError(client, "catalog_calibrate", { room: "books", name: "nope" });
      assert.equal(err.code, "NOT_FOUND");
      assert.ok(err.hint.includes("invoice-coding"));
      // An unknown tool is a protocol error (-32602).
      await assert.rejects(
        () => client.callTool({ name: "no_such_tool", arguments: {} }),
        /-32602/,
      );
    } finally {
      await close();
    }
    assert.match(stderr(), /dvergr-mcp: .*profile bench/);
    assert.match(stderr(), /catalog_benchmark ok/);
    await Deno.remove(home, { recursive: true });
  },
});

/** Runs a raw stdio session: sends `messages` (one JSON per line), collects stdout lines. */
async function rawSession(home: string, messages: Json[], responses: number, extra: string[] = []) {
  const child = new Deno.Command(Deno.execPath(), {
    args: serveArgs(home, extra),
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const lines: string[] = [];
  const reading = (async () => {
    let buf = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      if (lines.filter((l) => /"id"/.test(l)).length >= responses) break;
    }
    if (buf.trim()) lines.push(buf);
  })();
  // A string is written as it is: several messages in one write reach the server together.
  for (const m of messages) {
    await writer.write(enc.encode((typeof m === "string" ? m : JSON.stringify(m)) + "\n"));
  }
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await reading;
  await writer.close(); // End of stdin: the server stops by itself.
  const status = await child.status;
  clearTimeout(timer);
  const err = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
  return { lines, status, err };
}

for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
  Deno.test({
    name: `dvergr serve --mcp over stdio handshakes ${version}; stdout carries only JSON-RPC`,
    ...opts,
    async fn() {
      const home = await Deno.makeTempDir();
      const { lines, status, err } = await rawSession(home, [
        initialize(version),
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "room_list", arguments: {} },
        },
      ], 3);
      assert.ok(lines.length >= 3, err);
      const msgs = lines.map((l) => JSON.parse(l));
      for (const m of msgs) assert.equal(m.jsonrpc, "2.0", "every stdout line is JSON-RPC");
      const byId = new Map(msgs.map((m) => [m.id, m]));
      assert.equal(byId.get(1).result.protocolVersion, version);
      assert.equal(byId.get(1).result.serverInfo.name, "dvergr");
      assert.ok(byId.get(2).result.tools.length >= 19);
      assert.deepEqual(byId.get(3).result.structuredContent, {
        format: "dvergr-room-list/1",
        rooms: [],
      });
      assert.equal(status.code, 0, "the server ends when stdin does");
      assert.match(err, /dvergr-mcp: .*room_list ok/, "logs go to stderr");
      await Deno.remove(home, { recursive: true });
    },
  });
}

Deno.test({
  name: "dvergr serve --mcp --room R --tools a,b gives exactly those tools, in room R only",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const h = await openHome(home);
    await h.rooms.createRoom("books");
    await h.rooms.createRoom("other");
    await h.close();
    const { client, close } = await connectStdio(home, [
      "--room",
      "books",
      "--tools",
      "room_read,room_write",
      "--tools",
      "catalog_check",
    ]);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        "catalog_check",
        "room_read",
        "room_write",
      ]);
      for (const t of tools) {
        assert.ok(!("room" in (t.inputSchema.properties ?? {})), `${t.name} has no room`);
        assert.ok(!(t.inputSchema.required ?? []).includes("room"));
      }
      await call(client, "room_write", { files: { "notes.md": "hello" } });
      const read = await call(client, "room_read", { path: "notes.md" });
      assert.equal(read.room, "books");
      assert.equal(read.content, "hello");
      // Naming the pinned room is allowed; naming another is refused.
      await call(client, "room_read", { room: "books", path: "notes.md" });
      const err = await callError(client, "room_read", { room: "other", path: "notes.md" });
      assert.equal(err.message, "This connection works in room books only");
      await assert.rejects(() => client.callTool({ name: "room_list", arguments: {} }), /-32602/);
    } finally {
      await close();
    }
    await Deno.remove(home, { recursive: true });
  },
});

Deno.test({
  name:
    "jobs run in processes of their own: they outlive their server, cancel, and read orphaned when killed",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    await Deno.writeTextFile(`${home}/candidates.edn`, '{"slow" {:command "sleep 20"}}');
    const slow = { room: "r", name: "recall", candidates: ["cmd:slow"] };

    // A server started per call, as a CLI client does: the job goes on after it stops.
    const first = await connectStdio(home);
    let quick = "";
    try {
      await call(first.client, "room_create", { room: "r" });
      const files: Record<string, string> = {};
      for (const [p, t] of recallBundle()) files[`workflows/recall/${p}`] = t;
      await call(first.client, "room_write", { room: "r", files });
      quick = (await call(first.client, "catalog_benchmark", {
        room: "r",
        name: "recall",
        candidates: ["builtin:reference"],
      })).job;
    } finally {
      await first.close();
    }

    const second = await connectStdio(home);
    let job2 = "";
    let worker = 0;
    try {
      const { client } = second;
      let done: Json;
      for (let i = 0; i < 10; i++) {
        done = await call(client, "job_status", { job: quick, wait_ms: 25_000 });
        if (done.status !== "running") break;
      }
      assert.equal(done.status, "succeeded", JSON.stringify(done));
      assert.equal(done.result.complete, true);

      const job1 = (await call(client, "catalog_benchmark", slow)).job;
      const running = await call(client, "job_status", { job: job1, wait_ms: 1500 });
      assert.equal(running.status, "running");
      assert.notEqual(running.pid, second.pid, "the job runs in a worker process");
      const cancelled = await call(client, "job_cancel", { job: job1 });
      assert.equal(cancelled.status, "cancelled");

      job2 = (await call(client, "catalog_benchmark", slow)).job;
      const r2 = await call(client, "job_status", { job: job2, wait_ms: 1500 });
      assert.equal(r2.status, "running");
      worker = r2.pid;
      Deno.kill(second.pid, "SIGKILL"); // The server dies; the job's worker does not.
    } finally {
      await second.close().catch(() => {});
    }

    const third = await connectStdio(home);
    try {
      const { client } = third;
      assert.equal((await call(client, "job_status", { job: job2 })).status, "running");
      Deno.kill(worker, "SIGKILL");
      let r: Json;
      for (let i = 0; i < 40; i++) {
        r = await call(client, "job_status", { job: job2 });
        if (r.status !== "running") break;
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(r.status, "failed");
      assert.equal(r.reason, "orphaned");
      assert.equal(r.error.code, "JOB_ORPHANED");
      const list = await call(client, "job_list", { room: "r" });
      assert.deepEqual(
        list.jobs.map((j: Json) => j.status).sort(),
        ["cancelled", "failed", "succeeded"],
      );
    } finally {
      await third.close();
    }
    const log = await Deno.readTextFile(`${home}/mcp/jobs.log`);
    assert.match(log, new RegExp(`job ${quick} pid \\d+: ended succeeded`));
    await Deno.remove(home, { recursive: true });
  },
});

Deno.test({
  name: "dvergr serve --mcp over stdio answers a second request with an id in flight with an error",
  ...opts,
  async fn() {
    const home = await Deno.makeTempDir();
    const list = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "room_list", arguments: {} },
    });
    const { lines, err } = await rawSession(home, [
      initialize("2025-06-18"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      // In one write: the server reads both before the first can be answered.
      `${JSON.stringify(list(7))}\n${JSON.stringify(list(7))}`,
      { jsonrpc: "2.0", id: 8, method: "ping" },
    ], 4);
    const msgs = lines.map((l) => JSON.parse(l));
    const sevens = msgs.filter((m) => m.id === 7);
    assert.equal(sevens.length, 2, err);
    assert.equal(sevens.filter((m) => m.error?.code === -32600).length, 1, lines.join("\n"));
    assert.deepEqual(sevens.find((m) => m.result)?.result.structuredContent, {
      format: "dvergr-room-list/1",
      rooms: [],
    });
    assert.ok(msgs.some((m) => m.id === 8 && m.result), "the connection goes on");
    await Deno.remove(home, { recursive: true });
  },
});
