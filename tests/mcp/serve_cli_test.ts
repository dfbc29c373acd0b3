import assert from "node:assert/strict";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";

async function serve(args: string[]) {
  const ctx = memoryContext({ env: {} });
  const code = await runMain(["serve", ...args], ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

Deno.test("dvergr serve refuses an unknown profile at start with exit 2, listing the known ones", async () => {
  const r = await serve(["--mcp", "--profile", "offload"]);
  assert.equal(r.code, 2);
  assert.match(
    r.err,
    /^error\[USAGE\]: Unknown dvergr MCP profile: "offload" \(known: bench, readonly, admin, code\)\n/,
  );
  assert.equal(r.out, "", "nothing on stdout");
});

Deno.test("dvergr serve refuses an unknown toolset or tool, and --room without --tools", async () => {
  const t = await serve(["--mcp", "--toolsets", "jobs,wallets"]);
  assert.equal(t.code, 2);
  assert.match(t.err, /Unknown dvergr MCP toolset: "wallets" \(known: /);
  const u = await serve(["--mcp", "--tools", "read_file"]);
  assert.equal(u.code, 2);
  assert.match(u.err, /Unknown dvergr MCP tool: "read_file"/);
  const r = await serve(["--mcp", "--room", "books"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /--tools/);
});

Deno.test("dvergr serve takes --http only with --mcp, and --port only with --http", async () => {
  // Without --mcp, serve starts the schedules' due runs (tests/cli/schedules_test.ts).
  const a = await serve(["--http"]);
  assert.equal(a.code, 2);
  assert.match(a.err, /--http applies to --mcp only/);
  const b = await serve(["--mcp", "--port", "1234"]);
  assert.equal(b.code, 2);
  assert.match(b.err, /--port applies to --http only/);
  const c = await serve(["--mcp", "--http", "--port", "http"]);
  assert.equal(c.code, 2);
  assert.match(c.err, /--port "http"/);
});

Deno.test("dvergr serve takes --socket only with --http and not with --port", async () => {
  const a = await serve(["--mcp", "--socket", "/tmp/x.sock"]);
  assert.equal(a.code, 2);
  assert.match(a.err, /--socket applies to --http only/);
  const b = await serve(["--mcp", "--http", "--socket", "/tmp/x.sock", "--port", "1"]);
  assert.equal(b.code, 2);
  assert.match(b.err, /Cannot use --socket and --port together/);
});
