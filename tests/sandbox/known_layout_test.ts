/**
 * The QuickJS memory layout handed from one worker to the next (sandbox/known_layout.ts,
 * sandbox/layout_cache.ts): a sandbox given the layout another found keeps the same
 * snapshots (each call from a fresh state, nothing of one call readable by the next); a
 * layout of another module, a tampered one or garbage is refused and the layout found
 * afresh; a pool gives its workers the kept layout and keeps the first one found.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { QuickJSSandbox } from "../../sandbox/quickjs_call.ts";
import {
  describeLayout,
  freshCopy,
  type KnownLayout,
  layoutFits,
  PINNED_LAYOUT,
} from "../../sandbox/known_layout.ts";
import { layoutFile, layoutStore } from "../../sandbox/layout_cache.ts";
import { CHECKER_THREAD_ENTRY, newThreadWorker } from "../../sandbox/early_thread.ts";
import { DEFAULT_MEMORY_BYTES, STACK_BYTES } from "../../sandbox/pool_types.ts";
import type { WorkerMessage } from "../../sandbox/protocol.ts";
import { sandboxIdentity } from "../../sandbox/load_cache.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import type { CheckerInput } from "../../core/checker.ts";
import { instantiateQuickJS } from "../../sandbox/quickjs_load.ts";

/** A fresh module in a new memory. */
async function freshModule() {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 1024 });
  const module = await instantiateQuickJS(memory);
  return { memory, module };
}

function sandboxIn(
  { memory, module }: Awaited<ReturnType<typeof freshModule>>,
  layout?: KnownLayout,
): QuickJSSandbox {
  return new QuickJSSandbox(module, memory, {
    memoryLimitBytes: 56 * 1024 * 1024,
    memoryCapBytes: 64 * 1024 * 1024,
    wasmBytes: () => memory.buffer.byteLength,
    stackBytes: 128 * 1024,
    layout,
  });
}

/** A sandbox that finds its layout, and that layout as a worker reports it. */
async function foundLayout(): Promise<KnownLayout> {
  const fresh = await freshModule();
  const copy = freshCopy(fresh.memory);
  const bytes = fresh.memory.buffer.byteLength;
  const sb = sandboxIn(fresh);
  assert.ok(sb.foundLayout, "a sandbox given no layout finds one");
  const known = await describeLayout(
    copy,
    bytes,
    sb.foundLayout.layout,
    sb.foundLayout.breakValue,
  );
  assert.ok(known, "the layout can be handed on");
  return known;
}

const call = (key: string, source: string, input = "{}") => ({
  fn: "check" as const,
  key,
  source,
  input,
  timeoutMs: 5_000,
});

Deno.test("a sandbox given another's layout uses it, and each call still starts fresh and sees nothing of the last", async () => {
  const known = await foundLayout();
  const fresh = await freshModule();
  const fits = await layoutFits(known, fresh.memory);
  assert.deepEqual(fits, known);
  const sb = sandboxIn(fresh, fits);
  assert.equal(sb.foundLayout, undefined, "it looked for the layout anyway");
  const { gapStart, gapEnd, breakWord } = known;
  assert.deepEqual(sb.info().layout, { gapStart, gapEnd, breakWord });
  const source = `let calls = 0;
    export function check(input) {
      calls++;
      const seen = globalThis.secret;
      globalThis.secret = input.secret;
      // A large string: the next call's heap covers where it lay.
      globalThis.big = input.secret.repeat(50000);
      return { checks: { fresh: calls === 1 && seen === undefined }, reward: 1 };
    }`;
  for (const secret of ["first-secret", "second-secret", "third-secret"]) {
    const r = sb.call(call("k", source, JSON.stringify({ secret })));
    assert.deepEqual(r.outcome, { ok: true, json: '{"checks":{"fresh":true},"reward":1}' });
  }
  // Nothing of the calls is left in the memory the next call's interpreter could read.
  const text = new TextDecoder("latin1").decode(new Uint8Array(fresh.memory.buffer));
  for (const secret of ["first-secret", "second-secret"]) {
    assert.ok(!text.includes(secret), `${secret} is still in the sandbox's memory`);
  }
});

Deno.test("layoutFits() refuses a layout of another module, a tampered one and garbage", async () => {
  const known = await foundLayout();
  const fresh = await freshModule();
  const refused: unknown[] = [
    { ...known, lowSha256: "0".repeat(64) },
    { ...known, bytes: known.bytes * 2 },
    { ...known, gapStart: known.gapStart - 8 },
    { ...known, gapEnd: known.bytes + 4096 },
    { ...known, breakWord: known.gapStart + 4 },
    { ...known, breakWord: known.breakWord + 2 },
    { ...known, gapStart: "1" },
    null,
    "layout",
    [],
  ];
  for (const given of refused) {
    assert.equal(await layoutFits(given, fresh.memory), undefined, JSON.stringify(given));
  }
  // Another module: its static data differs once anything in it has changed.
  const other = await freshModule();
  new Uint8Array(other.memory.buffer)[known.gapStart - 64] ^= 1;
  assert.equal(await layoutFits(known, other.memory), undefined);
});

Deno.test("a known layout whose break word no longer holds its value has the break word found again", async () => {
  const known = await foundLayout();
  const fresh = await freshModule();
  const sb = sandboxIn(fresh, { ...known, breakValue: known.breakValue + 8 });
  assert.equal(sb.info().layout.breakWord, known.breakWord);
  assert.equal(
    sb.call(call("a", "export function check() { return { checks: {}, reward: 1 }; }"))
      .outcome.ok,
    true,
  );
});

const INPUT: CheckerInput = { files: {}, params: {}, gold: null, fetched: {}, judgements: {} };
const GOOD = "export function check() { return { checks: { ok: true }, reward: 1 }; }";

Deno.test("PINNED_LAYOUT is the layout of the QuickJS module a checker worker loads", async () => {
  // A worker given a layout that does not fit finds its own and sends it in its "ready".
  const worker = newThreadWorker(CHECKER_THREAD_ENTRY);
  try {
    const ready = await new Promise<WorkerMessage>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<WorkerMessage>) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
      worker.postMessage({
        type: "init",
        memoryBytes: DEFAULT_MEMORY_BYTES,
        stackBytes: STACK_BYTES,
        layout: { ...PINNED_LAYOUT, lowSha256: "0".repeat(64) },
      });
    });
    assert.equal(ready.type, "ready");
    // When QuickJS's version changes, PINNED_LAYOUT in sandbox/known_layout.ts is this one.
    assert.deepEqual(ready.type === "ready" && ready.layout, PINNED_LAYOUT);
  } finally {
    worker.terminate();
  }
});

Deno.test("a pool gives its workers the kept layout (none: the pinned one fits) and keeps one a worker found, in a file named by the sandbox's identity", async () => {
  const cache = await Deno.makeTempDir();
  try {
    const file = layoutFile((name) => (name === "XDG_CACHE_HOME" ? cache : undefined))!;
    assert.equal(file, join(cache, "dvergr", "sandbox-layouts", `${sandboxIdentity()}.json`));
    const kept: KnownLayout[] = [];
    const spy = (store: ReturnType<typeof layoutStore>) => ({
      known: () => store.known(),
      keep: (l: KnownLayout) => {
        kept.push(l);
        store.keep(l);
      },
    });
    // Nothing kept: the workers take the pinned layout and find none.
    for (const [round, keeps] of [[1, 0], [2, 0]] as const) {
      const pool = createCheckerPool({
        workers: 1,
        workerKind: "thread",
        layouts: spy(layoutStore(file)),
      });
      try {
        assert.ok((await pool.check(GOOD, INPUT)).ok);
      } finally {
        pool.close();
      }
      assert.equal(kept.length, keeps, `round ${round}`);
      kept.length = 0;
    }
    // A garbage file: the worker finds the layout and it is kept.
    await Deno.mkdir(join(file, ".."), { recursive: true });
    await Deno.writeTextFile(file, '{"gapStart": 1}');
    const pool = createCheckerPool({
      workers: 1,
      workerKind: "thread",
      layouts: spy(layoutStore(file)),
    });
    try {
      assert.ok((await pool.check(GOOD, INPUT)).ok);
    } finally {
      pool.close();
    }
    assert.equal(kept.length, 1);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(file)), kept[0]);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});
