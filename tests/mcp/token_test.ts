import assert from "node:assert/strict";
import type { DvergrError } from "../../core/errors.ts";
import { ensureHttpToken, newToken, tokensEqual } from "../../mcp/token.ts";
import { isLoopbackOrigin } from "../../mcp/http.ts";

Deno.test("ensureHttpToken() creates a 64-hex token with mode 0600 once, then reads it", async () => {
  const home = await Deno.makeTempDir();
  const a = await ensureHttpToken(home);
  assert.equal(a.created, true);
  assert.match(a.token, /^[0-9a-f]{64}$/);
  assert.equal((await Deno.stat(a.path)).mode! & 0o777, 0o600);
  assert.equal((await Deno.stat(`${home}/mcp`)).mode! & 0o077, 0);
  const b = await ensureHttpToken(home);
  assert.equal(b.created, false);
  assert.equal(b.token, a.token);
  // A token file others can read is narrowed to 0600.
  await Deno.chmod(a.path, 0o644);
  await ensureHttpToken(home);
  assert.equal((await Deno.stat(a.path)).mode! & 0o777, 0o600);
  await Deno.remove(home, { recursive: true });
});

Deno.test("ensureHttpToken() refuses a token file that holds no token", async () => {
  const home = await Deno.makeTempDir();
  await Deno.mkdir(`${home}/mcp`);
  await Deno.writeTextFile(`${home}/mcp/http-token`, "\n");
  await assert.rejects(
    () => ensureHttpToken(home),
    (e: DvergrError) => e.code === "USAGE" && /Remove the file/.test(e.hint ?? ""),
  );
  await Deno.remove(home, { recursive: true });
});

Deno.test("newToken() is random; tokensEqual() compares whole tokens", () => {
  const a = newToken();
  assert.notEqual(a, newToken());
  assert.equal(tokensEqual(a, a), true);
  assert.equal(tokensEqual(a, a.slice(0, -1)), false);
  assert.equal(tokensEqual(a, a + "0"), false);
  assert.equal(tokensEqual(a, ""), false);
});

Deno.test("isLoopbackOrigin() accepts loopback http(s) origins only", () => {
  for (const o of ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:8080"]) {
    assert.equal(isLoopbackOrigin(o), true, o);
  }
  for (
    const o of [
      "null",
      "https://example.com",
      "http://127.0.0.1.nip.io",
      "file://",
      "ws://localhost",
    ]
  ) {
    assert.equal(isLoopbackOrigin(o), false, o);
  }
});
