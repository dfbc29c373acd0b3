import assert from "node:assert/strict";
import { BodyBytes } from "../../../adapters/gateway/request_body.ts";

/** A streamed POST of `chunks` chunks of `size` bytes, counting what was pulled from it. */
function streamed(chunks: number, size: number, headers: Record<string, string> = {}) {
  const seen = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (seen.pulled === chunks) return c.close();
      seen.pulled++;
      c.enqueue(new Uint8Array(size).fill(0x61));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  const req = new Request("http://127.0.0.1/x", { method: "POST", body, headers });
  return { req, seen };
}

Deno.test("BodyBytes.read() gives a body within its bound and holds its bytes until released", async () => {
  const bodies = new BodyBytes(100, 150);
  const { req } = streamed(3, 30);
  const r = await bodies.read(req);
  assert(r.ok);
  assert.equal(r.bytes.length, 90);
  assert.equal(new TextDecoder().decode(r.bytes), "a".repeat(90));
  assert.equal(bodies.inUse, 90);
  bodies.release(90);
  assert.equal(bodies.inUse, 0);
});

Deno.test("BodyBytes.read() stops reading a body at its bound and cancels the rest", async () => {
  const bodies = new BodyBytes(100, 1000);
  const { req, seen } = streamed(1_000_000, 30);
  const r = await bodies.read(req);
  assert.deepEqual(r.ok, false);
  assert(!r.ok && r.reason === "too-large" && /at most 100 bytes/.test(r.message));
  // Four chunks pass the bound of 100: reading stopped there, the stream was cancelled.
  assert(seen.pulled <= 5, `pulled ${seen.pulled} chunks`);
  assert.equal(seen.cancelled, true);
  assert.equal(bodies.inUse, 0);
});

Deno.test("BodyBytes.read() refuses a declared length over the bound without reading", async () => {
  const bodies = new BodyBytes(100, 1000);
  const { req, seen } = streamed(10, 30, { "content-length": "300" });
  const r = await bodies.read(req);
  assert(!r.ok && r.reason === "too-large");
  assert.equal(seen.pulled <= 1, true, `pulled ${seen.pulled}`);
});

Deno.test("BodyBytes.read() refuses a body that would pass the bytes held at once", async () => {
  const bodies = new BodyBytes(100, 150);
  const first = await bodies.read(streamed(3, 30).req);
  assert(first.ok);
  const second = await bodies.read(streamed(3, 30).req);
  assert(!second.ok && second.reason === "too-many-at-once", JSON.stringify(second));
  assert.equal(bodies.inUse, 90);
  bodies.release(first.bytes.length);
  const third = await bodies.read(streamed(3, 30).req);
  assert(third.ok);
});
