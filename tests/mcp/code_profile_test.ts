/** The code profile: js_eval programs chain ops in the sandbox and reach nothing else; describe lists the ops. */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { toolProblems } from "../../mcp/tool_schema.ts";
import { runJsEval } from "../../sandbox/js_eval.ts";
import { withMemoryClient } from "./memory_client.ts";
import type { Home } from "../../core/ports/home.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** A client of the code profile, its programs run by runJsEval. */
function withCode(f: (client: Client, home: Home) => Promise<void>): Promise<void> {
  return withMemoryClient({ profile: "code" }, (client, home) => f(client, home), {
    jsEval: runJsEval,
  });
}

async function evalJs(client: Client, code: string, timeout_ms?: number): Promise<Json> {
  const r = await client.callTool({
    name: "js_eval",
    arguments: { code, ...(timeout_ms ? { timeout_ms } : {}) },
  });
  return { ...(r.structuredContent as Json), isError: r.isError === true };
}

Deno.test("--profile code has exactly js_eval and describe, both within the tool rules", async () => {
  await withCode(async (client) => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["js_eval", "describe"]);
    for (const t of tools) assert.deepEqual(toolProblems(t as Json), []);
    assert.equal(tools[0].annotations?.destructiveHint, true);
    assert.equal(tools[1].annotations?.readOnlyHint, true);
  });
});

Deno.test("js_eval: one program chains ops, gets their results and its console output", async () => {
  await withCode(async (client, home) => {
    const r = await evalJs(
      client,
      `
      await ops.room_create({ title: "Books" });
      await ops.room_write({ room: "books", files: { "a.txt": { text: "hello" }, "b.txt": { text: "x" } } });
      const files = await ops.room_files({ room: "books" });
      console.log("files:", files.count);
      console.warn({ n: 1 });
      const a = await ops.room_read({ room: "books", path: "a.txt" });
      return { paths: files.files.map((f) => f.path), text: a.content };
    `,
    );
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.deepEqual(r.value, { paths: ["a.txt", "b.txt"], text: "hello" });
    assert.deepEqual(r.logs, ["files: 2", '[warn] {"n":1}']);
    assert.equal(r.calls, 4);
    assert.equal((await home.rooms.readFiles("books")).get("a.txt"), "hello");
    // One expression is its own value.
    const e = await evalJs(client, "(await ops.room_list({})).rooms.map((x) => x.room)");
    assert.deepEqual(e.value, ["books"]);
  });
});

Deno.test("js_eval: an op's schema and errors hold inside programs", async () => {
  await withCode(async (client) => {
    const bad = await evalJs(
      client,
      `try { await ops.room_read({ room: "nosuch", path: "a", bogus: 1 }); }
       catch (e) { return { code: e.code, message: e.message }; }`,
    );
    assert.equal(bad.value.code, "USAGE");
    assert.match(bad.value.message, /unknown parameter bogus/);
    const missing = await evalJs(
      client,
      `try { await ops.room_read({ room: "nosuch", path: "a" }); } catch (e) { return e.code; }`,
    );
    assert.equal(missing.value, "NOT_FOUND");
    const thrown = await evalJs(client, `throw new Error("mine")`);
    assert.equal(thrown.isError, true);
    assert.equal(thrown.error.code, "EVAL_FAILED");
    assert.match(thrown.error.message, /Your program threw Error: mine/);
  });
});

Deno.test("js_eval: programs reach nothing but the connection's ops", async () => {
  await withCode(async (client) => {
    // Promotion is the admin profile's, not the code profile's reach.
    const promote = await evalJs(client, `typeof ops.catalog_promote`);
    assert.equal(promote.value, "undefined");
    const own = await evalJs(client, `[typeof ops.js_eval, typeof ops.describe]`);
    assert.deepEqual(own.value, ["undefined", "undefined"]);
    const globals = await evalJs(
      client,
      `[typeof Deno, typeof fetch, typeof require, typeof process, typeof setTimeout,
        typeof WebAssembly, typeof globalThis.postMessage, typeof self, typeof Worker]`,
    );
    assert.deepEqual(globals.value, Array(9).fill("undefined"));
    const imported = await evalJs(client, `await import("node:fs")`);
    assert.equal(imported.isError, true);
    assert.match(imported.error.message, /loads no modules/);
    const frozen = await evalJs(
      client,
      `ops.room_list = () => 1; ops.evil = 1; return [typeof ops.evil, Object.isFrozen(ops)]`,
    );
    assert.deepEqual(frozen.value, ["undefined", true]);
    const fn = await evalJs(client, `() => 1`);
    assert.equal(fn.isError, true);
    assert.match(fn.error.message, /not JSON/);
  });
});

Deno.test("js_eval: time and memory limits as for checkers, and a program that waits forever ends", async () => {
  await withCode(async (client) => {
    const loop = await evalJs(client, `for (;;) {}`, 300);
    assert.equal(loop.isError, true);
    assert.match(loop.error.message, /ran out of time/);
    const asyncLoop = await evalJs(client, `await ops.room_list({}); for (;;) {}`, 300);
    assert.match(asyncLoop.error.message, /ran out of time/);
    const memory = await evalJs(client, `const a = []; for (;;) a.push("x".repeat(1 << 20));`);
    assert.equal(memory.isError, true);
    assert.match(memory.error.message, /memory|time/);
    const never = await evalJs(client, `await new Promise(() => {})`);
    assert.match(never.error.message, /never comes/);
    const logs = await evalJs(client, `console.log("before"); throw 1`);
    assert.deepEqual(logs.error.details.logs, ["before"]);
  });
});

Deno.test("describe lists the ops programs can call, filtered by a query", async () => {
  await withCode(async (client) => {
    const all = (await client.callTool({ name: "describe", arguments: {} }))
      .structuredContent as Json;
    const names = all.ops.map((o: Json) => o.name);
    assert.ok(names.includes("room_write") && names.includes("catalog_benchmark"));
    assert.ok(!names.includes("catalog_promote") && !names.includes("js_eval"));
    const write = all.ops.find((o: Json) => o.name === "room_write");
    assert.ok(write.inputSchema.properties.files);
    const q = (await client.callTool({ name: "describe", arguments: { query: "fork" } }))
      .structuredContent as Json;
    assert.deepEqual(q.ops.map((o: Json) => o.name).sort(), [
      "review_show",
      "room_diff",
      "room_fork",
      "room_merge",
      "run_list",
    ]);
    assert.equal(write.format, "dvergr-room-write/1");
  });
});

Deno.test("runJsEval() runs a program that calls no op", async () => {
  const r = await runJsEval(`1 + 1`, { ops: [], call: () => Promise.reject(new Error("none")) });
  assert.equal(r.ok, true);
  assert.equal(r.ok && r.value, 2);
});
