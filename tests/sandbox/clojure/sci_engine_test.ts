import assert from "node:assert/strict";
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-singlefile-mjs-release-sync";
import { SciEngine } from "../../../sandbox/sci_engine.ts";
import { SCITTLE_SHA256, SCITTLE_SOURCE, sha256Hex } from "../../../sandbox/scittle_source.ts";
import { createClojurePool } from "../../../sandbox/clojure_pool.ts";
import { toTagged } from "../../../core/edn/tagged.ts";

const QUIET = { print: () => {}, printErr: () => {} } as never;
const INPUT = JSON.stringify(toTagged(new Map()));
const DEEP = "(ns deep) (defn d [n] (if (zero? n) 0 (inc (d (dec n))))) " +
  "(defn check [_] {:checks {} :reward (d 1000000)})";

Deno.test("scittle's dist/scittle.js is the one pinned (sha256)", async () => {
  assert.equal(await sha256Hex(SCITTLE_SOURCE), SCITTLE_SHA256);
});

Deno.test("SciEngine: a stack overflow that reaches the host's stack poisons the engine", async () => {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 4096 });
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, { wasmMemory: memory, emscriptenModule: QUIET }),
  );
  // A QuickJS stack limit (4 MiB, inside the 5 MiB C stack) deeper than the host allows.
  const engine = SciEngine.boot(module, memory, SCITTLE_SOURCE, {
    memoryLimitBytes: 200 * 1024 * 1024,
    memoryCapBytes: 256 * 1024 * 1024,
    stackBytes: 4 * 1024 * 1024,
  });
  const r = engine.call({
    fn: "check",
    key: "deep",
    source: DEEP,
    input: INPUT,
    timeoutMs: 60_000,
  });
  assert.equal(r.poisoned, true);
  assert.deepEqual(r.outcome, {
    ok: false,
    fault: "memory",
    message: "checker.clj overflowed the sandbox's stack (too deep a recursion?)",
  });
  const after = engine.call({
    fn: "check",
    key: "ok",
    source: "(ns ok) (defn check [_] {:checks {} :reward 1})",
    input: INPUT,
    timeoutMs: 10_000,
  });
  assert.equal(after.poisoned, true);
  assert.equal(after.outcome.ok, false);
});

Deno.test("createClojurePool() replaces a worker whose host stack overflowed; the next call grades", async () => {
  const pool = createClojurePool({ workers: 1, stackBytes: 4 * 1024 * 1024 });
  try {
    const deep = await pool.check(DEEP, toTagged(new Map()), { timeoutMs: 60_000 });
    assert.equal(deep.ok, false);
    assert.equal(!deep.ok && deep.fault, "memory");
    assert.equal(pool.stats().workersReplaced, 1);
    const ok = await pool.check(
      "(ns ok) (defn check [_] {:checks {:a true} :reward 1})",
      toTagged(new Map()),
    );
    assert.equal(ok.ok && ok.verdict.reward, 1);
    assert.equal(pool.stats().workersStarted, 2);
  } finally {
    pool.close();
  }
});
