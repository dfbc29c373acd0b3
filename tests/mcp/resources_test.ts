/** Resources (templates, list, read, subscribe across processes) and logging of the handshake server. */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { allOps } from "../../core/ops/registry.ts";
import { jobLogMessage } from "../../mcp/server.ts";
import { matchResource, templateOf } from "../../mcp/resources.ts";
import { createRoomWatcher } from "../../mcp/room_watch.ts";
import { withMemoryClient } from "./memory_client.ts";
import type { JobRecord } from "../../core/ports/state_store.ts";
import { ROOT } from "./helpers.ts";

async function rpcError(p: Promise<unknown>): Promise<McpError> {
  const e = await p.then(() => null, (e) => e);
  assert.ok(e instanceof McpError, `expected an McpError, got ${e}`);
  return e;
}

/** Runs a script in another Deno process with the home open (as a benchmark job's worker is). */
async function inOtherProcess(home: string, body: string): Promise<void> {
  const script = `import { openHome } from "${ROOT}adapters/store/kv/home.ts";
const home = await openHome(${JSON.stringify(home)});
${body}
await home.close();`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--unstable-kv", "--ext=ts", script],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

async function until(what: string, f: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("templateOf() and matchResource(): every read op is a resource, URIs give its arguments", () => {
  const reads = allOps().filter((o) => o.kind === "read");
  const templates = reads.map((o) => templateOf(o));
  assert.equal(new Set(templates.map((t) => t.uriTemplate)).size, reads.length);
  const file = matchResource(templates, "room://books/file/data/my%20cases.csv?offset=40000");
  assert.equal(file?.template.op.name, "room_read");
  assert.deepEqual(file?.args, { room: "books", path: "data/my cases.csv", offset: 40000 });
  assert.equal(file?.room, "books");
  assert.equal(matchResource(templates, "room://books/files")?.template.op.name, "room_files");
  assert.equal(
    matchResource(templates, "experiment://books/progress")?.template.op.name,
    "experiment_progress",
  );
  assert.deepEqual(matchResource(templates, "scorecard://books/abc")?.args, {
    room: "books",
    experiment: "abc",
  });
  assert.equal(matchResource(templates, "room://rooms")?.room, null);
  assert.equal(matchResource(templates, "room://books/files?bogus=1"), null);
  assert.equal(matchResource(templates, "test://static-text"), null);
});

Deno.test("resources: templates, list and read say what the tools say; unknown is -32002", async () => {
  await withMemoryClient({}, async (client) => {
    assert.deepEqual(client.getServerCapabilities()?.resources, {
      subscribe: true,
      listChanged: true,
    });
    await client.callTool({ name: "room_create", arguments: { title: "Books" } });
    await client.callTool({
      name: "room_write",
      arguments: { room: "books", files: { "data/a.csv": { text: "x;y\n1;2\n" } } },
    });
    const { resourceTemplates } = await client.listResourceTemplates();
    const names = resourceTemplates.map((t) => t.name);
    assert.ok(names.includes("room_read"));
    assert.ok(
      resourceTemplates.some((t) =>
        t.uriTemplate === "room://{room}/file/{+path}{?encoding,offset,limit}"
      ),
    );
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    assert.ok(uris.includes("room://rooms"));
    assert.ok(uris.includes("room://books/files"));
    assert.ok(resources.every((r) => r.name && r.description));
    const read = await client.readResource({ uri: "room://books/file/data/a.csv" });
    const value = JSON.parse((read.contents[0] as { text: string }).text);
    assert.equal(value.content, "x;y\n1;2\n");
    const tool = await client.callTool({
      name: "room_read",
      arguments: { room: "books", path: "data/a.csv" },
    });
    assert.deepEqual(tool.structuredContent, value);
    assert.equal((await rpcError(client.readResource({ uri: "test://static-text" }))).code, -32002);
    assert.equal(
      (await rpcError(client.readResource({ uri: "room://nosuch/files" }))).code,
      -32002,
    );
    assert.equal(
      (await rpcError(client.subscribeResource({ uri: "test://watched-resource" }))).code,
      -32002,
    );
  });
});

Deno.test("resources/subscribe: updated after commits and records written by another process, throttled", async () => {
  await withMemoryClient({}, async (client, home) => {
    await client.callTool({ name: "room_create", arguments: { room: "books" } });
    await client.callTool({ name: "room_create", arguments: { room: "other" } });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await client.subscribeResource({ uri: "experiment://books/progress" });
    await new Promise((r) => setTimeout(r, 600));
    assert.deepEqual(updates, []);
    // A commit by another process.
    await inOtherProcess(
      home.dir,
      `await home.rooms.writeFiles("books", new Map([["a.txt", "a"]]), "a");`,
    );
    await until("an update after the commit", () => updates.length >= 1);
    // A job's progress recorded by another process (a benchmark job runs in its own).
    const n = updates.length;
    await inOtherProcess(
      home.dir,
      `await home.state.putJob({ id: "j1", kind: "benchmark", room: "books", status: "running",
        startedAt: new Date().toISOString(), finishedAt: null,
        progress: { done: 1, total: 4, faults: 0, phase: "running" }, result: null, error: null,
        reason: null, pid: Deno.pid, owner: "test" });`,
    );
    await until("an update after the job record", () => updates.length > n);
    // Another room's change says nothing about this one.
    const m = updates.length;
    await inOtherProcess(
      home.dir,
      `await home.rooms.writeFiles("other", new Map([["b.txt", "b"]]), "b");`,
    );
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(updates.length, m);
    // Many changes at once: at most a few notifications a second.
    const before = updates.length;
    const started = Date.now();
    for (let i = 0; i < 20; i++) {
      await home.rooms.writeFiles("books", new Map([["c.txt", String(i)]]), `c${i}`);
    }
    await new Promise((r) => setTimeout(r, 700));
    const seconds = (Date.now() - started) / 1000;
    assert.ok(updates.length > before);
    assert.ok(
      updates.length - before <= Math.ceil(seconds / 0.3) + 1,
      `${updates.length - before} in ${seconds}s`,
    );
    await client.unsubscribeResource({ uri: "experiment://books/progress" });
    const after = updates.length;
    await home.rooms.writeFiles("books", new Map([["d.txt", "d"]]), "d");
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(updates.length, after);
    assert.ok(updates.every((u) => u === "experiment://books/progress"));
  });
});

Deno.test("logging/setLevel: failed calls are warnings, sent at or above the chosen level", async () => {
  await withMemoryClient({}, async (client) => {
    assert.deepEqual(client.getServerCapabilities()?.logging, {});
    const logs: { level: string; logger?: string }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params);
    });
    assert.deepEqual(await client.setLoggingLevel("error"), {});
    await client.callTool({ name: "room_read", arguments: { room: "nosuch", path: "a" } });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(logs.length, 0);
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "room_read", arguments: { room: "nosuch", path: "a" } });
    await until("a warning", () => logs.length === 1);
    assert.equal(logs[0].level, "warning");
    assert.equal(logs[0].logger, "dvergr.tools");
  });
});

Deno.test("jobLogMessage(): progress is info, new faults a warning, the end by how it ended", () => {
  const job = (over: Partial<JobRecord>): JobRecord => ({
    id: "j",
    kind: "benchmark",
    room: "r",
    status: "running",
    startedAt: "",
    finishedAt: null,
    progress: { done: 1, total: 4, faults: 0, phase: "running" },
    result: null,
    error: null,
    reason: null,
    pid: 1,
    owner: "o",
    ...over,
  });
  const a = job({});
  assert.equal(jobLogMessage(a, null)?.level, "info");
  assert.equal(jobLogMessage(a, a), null);
  const b = job({ progress: { done: 2, total: 4, faults: 1, phase: "running" } });
  assert.equal(jobLogMessage(b, a)?.level, "warning");
  assert.equal(jobLogMessage(job({ status: "failed" }), b)?.level, "error");
  assert.equal(jobLogMessage(job({ status: "succeeded" }), b)?.level, "info");
});

Deno.test("createRoomWatcher(): calls only after a change, stops when unwatched", async () => {
  let v = "1";
  const w = createRoomWatcher(() => Promise.resolve(v), 10);
  let calls = 0;
  const stop = w.watch("r", () => calls++);
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(calls, 0);
  v = "2";
  await until("a call", () => calls === 1, 2000);
  stop();
  v = "3";
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(calls, 1);
  w.close();
});
