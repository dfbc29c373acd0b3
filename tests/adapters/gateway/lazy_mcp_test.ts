/**
 * The world MCP server's module is loaded on the first MCP request, not with the gateway: a
 * script that never asks costs the run nothing of it (the MCP SDK, zod, ajv), and one that
 * asks gets a working server all the same.
 */
import assert from "node:assert/strict";

/** Runs the probe (tests/helpers/lazy_mcp_probe.ts) in a process of its own: what it saw. */
async function probe(...args: string[]) {
  const file = new URL("../../helpers/lazy_mcp_probe.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-net", file, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, stderr);
  return {
    seen: JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!),
    stderr,
  };
}

Deno.test("startAttemptGateway() of a candidate that always asks (agent CLIs) loads the world MCP server before it is ready", async () => {
  const { seen, stderr } = await probe("expected");
  assert.equal(seen.loaded, true, stderr);
});

Deno.test("startAttemptGateway() loads the world MCP server only when a request asks for it", async () => {
  const { seen, stderr } = await probe();
  // A gateway that served only a model request never loaded it…
  assert.equal(seen.afterModel, false, stderr);
  assert.ok(seen.modelStatus >= 400, `model request answered ${seen.modelStatus}`);
  assert.equal(seen.firstToolLists, 0);
  assert.equal(seen.beforeMcp, false);
  // …and the first MCP request loads it and is answered as before.
  assert.equal(seen.afterMcp, true);
  assert.equal(seen.initStatus, 200);
  assert.equal(seen.initialized, true);
  assert.equal(seen.secondCalls, 0);
  // Nothing on stderr: a request passed on behind the secret (gateway_secret.ts) follows no
  // signal of Deno.serve's, which would warn once a response succeeded.
  assert.equal(stderr, "");
});
