import assert from "node:assert/strict";
import { MAX_PREPARED, QuickJSSandbox } from "../../sandbox/quickjs_call.ts";
import { inMemory } from "./engines.ts";
import { instantiateQuickJS } from "../../sandbox/quickjs_load.ts";

let memory: WebAssembly.Memory;

/** A sandbox in a new module; `memory` is its wasm memory, for looking inside. */
async function sandbox(): Promise<QuickJSSandbox> {
  memory = new WebAssembly.Memory({ initial: 256, maximum: 1024 });
  const module = await instantiateQuickJS(memory);
  return new QuickJSSandbox(module, memory, {
    memoryLimitBytes: 56 * 1024 * 1024,
    memoryCapBytes: 64 * 1024 * 1024,
    wasmBytes: () => memory.buffer.byteLength,
    stackBytes: 128 * 1024,
  });
}

const call = (key: string, source: string, input = "{}") => ({
  fn: "check" as const,
  key,
  source,
  input,
  timeoutMs: 5_000,
});

Deno.test("QuickJSSandbox keeps small snapshots: the stack and the unused heap are left out", async () => {
  const sb = await sandbox();
  const info = sb.info();
  assert.ok(info.layout.breakWord >= 0, "the allocator's break word was found");
  assert.ok(info.layout.gapEnd - info.layout.gapStart >= 1024 * 1024, "the stack gap was found");
  assert.ok(info.baseBytes < 1024 * 1024, `a base snapshot of ${info.baseBytes} bytes`);
  const r = sb.call(call("a", "export function check() { return { checks: {}, reward: 1 }; }"));
  assert.equal(r.outcome.ok, true);
  assert.ok(sb.info().preparedBytes < 1024 * 1024);
});

Deno.test("QuickJSSandbox.call() starts each call from the state right after its checker loaded", async () => {
  const sb = await sandbox();
  const source = `
    console.log("loading");
    let calls = 0;
    const table = Array.from({ length: 1000 }, (_, i) => i * 2);
    export function check(input) {
      calls++;
      globalThis.leak = (globalThis.leak ?? 0) + 1;
      table.push(input.n);
      return { checks: { first: calls === 1 && globalThis.leak === 1 && table.length === 1001 },
               reward: table[1000] / 10 };
    }`;
  for (let n = 1; n <= 5; n++) {
    const r = sb.call(call("k", source, JSON.stringify({ n })));
    assert.deepEqual(r.outcome, { ok: true, json: `{"checks":{"first":true},"reward":${n / 10}}` });
    assert.deepEqual(r.logs, ["loading"]);
  }
  // A checker that faults while loading is not kept; the next call loads it again.
  const bad = "throw new Error('nope'); export function check() {}";
  for (let i = 0; i < 2; i++) {
    const r = sb.call(call("bad", bad));
    assert.equal(!r.outcome.ok && r.outcome.fault, "threw");
  }
  assert.equal(sb.info().prepared, 1);
});

Deno.test("QuickJSSandbox keeps at most MAX_PREPARED checkers, dropping the least recently used", async () => {
  const sb = await sandbox();
  const source = (i: number) =>
    `export function check() { return { checks: {}, reward: ${i / 100} }; }`;
  for (let i = 0; i < MAX_PREPARED + 3; i++) {
    const r = sb.call(call(`k${i}`, source(i)));
    assert.deepEqual(r.outcome, { ok: true, json: `{"checks":{},"reward":${i / 100}}` });
  }
  assert.equal(sb.info().prepared, MAX_PREPARED);
  // The first ones were dropped and load again, still right.
  const again = sb.call(call("k0", source(0)));
  assert.deepEqual(again.outcome, { ok: true, json: `{"checks":{},"reward":0}` });
});

Deno.test("QuickJSSandbox.call() starts on zeroed memory above the snapshot where an earlier call wrote", async () => {
  const sb = await sandbox();
  const source = `export function check(input) {
    const s = input.big ? "secret-".repeat(1e6) : "";
    return { checks: { wrote: s.length === (input.big ? 7e6 : 0) }, reward: 1 };
  }`;
  const writer = sb.call(call("k", source, JSON.stringify({ big: true })));
  assert.deepEqual(writer.outcome, { ok: true, json: '{"checks":{"wrote":true},"reward":1}' });
  // Megabytes above the snapshot's top hold what the call made.
  assert.equal(inMemory(memory, "secret-secret-secret-"), true);
  const reader = sb.call(call("k", source, JSON.stringify({ big: false })));
  assert.deepEqual(reader.outcome, { ok: true, json: '{"checks":{"wrote":true},"reward":1}' });
  assert.equal(
    inMemory(memory, "secret-secret-secret-"),
    false,
    "the next call ran on zeroed memory",
  );
});
