/**
 * Loading QuickJS (sandbox/quickjs_load.ts): its wasm is a bytes import of the module graph,
 * so a Worker with no permission at all loads it; the module's memory is the one given, and
 * its maximum bounds what QuickJS grows to.
 */
import assert from "node:assert/strict";
import { instantiateQuickJS, loadQuickJS } from "../../sandbox/quickjs_load.ts";

Deno.test("loadQuickJS: the memory's maximum bounds the module; an allocation past it fails inside QuickJS", async () => {
  const q = await loadQuickJS(32 * 1024 * 1024);
  assert.equal(q.capBytes, 32 * 1024 * 1024);
  const rt = q.module.newRuntime();
  // No heap limit of QuickJS's own: only the wasm memory's maximum stops the allocation.
  const ctx = rt.newContext();
  const r = ctx.evalCode(`const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length);`);
  assert.ok(r.error, "an endless allocation must fail");
  r.error.dispose();
  // The module's memory is the one given: it grew up to the cap, and no further.
  assert.ok(q.memory.buffer.byteLength > q.capBytes / 2, `${q.memory.buffer.byteLength} bytes`);
  assert.ok(q.memory.buffer.byteLength <= q.capBytes, `${q.memory.buffer.byteLength} bytes`);
  ctx.dispose();
  rt.dispose();
});

Deno.test("instantiateQuickJS: each module lives in its own memory and runs on its own", async () => {
  const a = new WebAssembly.Memory({ initial: 256, maximum: 1024 });
  const b = new WebAssembly.Memory({ initial: 256, maximum: 1024 });
  const [ma, mb] = await Promise.all([instantiateQuickJS(a), instantiateQuickJS(b)]);
  const ctxA = ma.newContext();
  const ctxB = mb.newContext();
  ctxA.setProp(ctxA.global, "who", ctxA.newString("a"));
  const seen = ctxB.evalCode(`typeof who`);
  assert.equal(ctxB.dump(ctxB.unwrapResult(seen)), "undefined");
  const grown = a.buffer.byteLength;
  const big = ctxA.unwrapResult(ctxA.evalCode(`"y".repeat(24 << 20).length`));
  assert.equal(ctxA.getNumber(big), 24 << 20);
  assert.ok(a.buffer.byteLength > grown, "module a grew its own memory");
  assert.equal(b.buffer.byteLength, 256 * 64 * 1024, "module b's memory is untouched");
  big.dispose();
  ctxA.dispose();
  ctxB.dispose();
});

Deno.test("a Worker with no permission loads QuickJS from the module graph", async () => {
  const source = `
    import { loadQuickJS, dropNodeProcess } from ${
    JSON.stringify(new URL("../../sandbox/quickjs_load.ts", import.meta.url).href)
  };
    dropNodeProcess();
    const q = await loadQuickJS(16 * 1024 * 1024);
    const ctx = q.module.newContext();
    const v = ctx.unwrapResult(ctx.evalCode("[1, 2, 3].map((x) => x * 2).join()"));
    const read = await Deno.permissions.query({ name: "read" });
    self.postMessage({ value: ctx.getString(v), read: read.state });
  `;
  const dir = await Deno.makeTempDir();
  const entry = `${dir}/load_worker.ts`;
  await Deno.writeTextFile(entry, source);
  const worker = new Worker(new URL(`file://${entry}`), {
    type: "module",
    deno: { permissions: "none" },
  });
  try {
    const got = await new Promise<{ value: string; read: string }>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
    });
    assert.equal(got.value, "2,4,6");
    assert.notEqual(got.read, "granted");
  } finally {
    worker.terminate();
    await Deno.remove(dir, { recursive: true });
  }
});
