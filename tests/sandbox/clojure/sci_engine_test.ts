import assert from "node:assert/strict";
import { bootSci, inMemory } from "../engines.ts";
import { SCITTLE_SHA256, SCITTLE_SOURCE, sha256Hex } from "../../../sandbox/scittle_source.ts";
import { createClojurePool } from "../../../sandbox/clojure_pool.ts";
import { toTagged } from "../../../core/edn/tagged.ts";

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

const INPUT = JSON.stringify(toTagged(new Map()));
const DEEP = "(ns deep) (defn d [n] (if (zero? n) 0 (inc (d (dec n))))) " +
  "(defn check [_] {:checks {} :reward (d 1000000)})";

Deno.test("scittle's dist/scittle.js is the one pinned (sha256)", async () => {
  assert.equal(await sha256Hex(SCITTLE_SOURCE), SCITTLE_SHA256);
});

Deno.test("SciEngine: a stack overflow that reaches the host's stack poisons the engine", async () => {
  // A QuickJS stack limit (4 MiB, inside the 5 MiB C stack) deeper than the host allows.
  const { engine } = await bootSci(4 * 1024 * 1024);
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

Deno.test("createClojurePool(): a checker stuck in slow native calls is killed at its deadline (process workers)", async () => {
  const pool = createClojurePool({ workers: 1, hangMarginMs: 1_000, workerKind: "process" });
  try {
    // A JavaScript loop inside QuickJS (reached through js/Function) whose every iteration
    // is one slow native call: QuickJS polls its interrupt handler once per thousands of
    // iterations, far past the deadline, so only the host's watchdog can end it.
    const stuck = '(ns stuck) (defn check [_] (let [s (.repeat "a" 40000000)] ' +
      '((js/Function. "s" "for (;;) s.indexOf(\'b\')") s)))';
    const running = pool.check(stuck, toTagged(new Map()), { timeoutMs: 2_000 });
    let pids: number[] = [];
    while (pids.length === 0) {
      await new Promise((ok) => setTimeout(ok, 50));
      pids = pool.stats().workerPids;
    }
    const r = await running;
    assert.equal(!r.ok && r.fault, "timeout");
    const stats = pool.stats();
    assert.equal(stats.workerKind, "process");
    assert.equal(stats.workersAbandoned, 1, "the watchdog, not QuickJS, ended it");
    // The process is gone (killed with SIGKILL), not left burning a core.
    for (let i = 0; i < 100 && exists(`/proc/${pids[0]}`); i++) {
      await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.equal(exists(`/proc/${pids[0]}`), false);
    const ok = await pool.check(
      "(ns ok) (defn check [_] {:checks {:a true} :reward 1})",
      toTagged(new Map()),
    );
    assert.equal(ok.ok && ok.verdict.reward, 1);
  } finally {
    pool.close();
  }
});

Deno.test("createClojurePool() runs checker.clj in thread workers too (no process can be started)", async () => {
  const pool = createClojurePool({ workers: 1, workerKind: "thread" });
  try {
    const r = await pool.check(
      "(ns t) (defn check [{:keys [gold]}] {:checks {:kw (= :a (:k gold))} :reward 1})",
      ["m", ["k", null, "gold"], ["m", ["k", null, "k"], ["k", null, "a"]]],
    );
    assert.deepEqual(r.ok && r.verdict.checks, { kw: true });
    assert.equal(pool.stats().workerKind, "thread");
    assert.deepEqual(pool.stats().workerPids, []);
  } finally {
    pool.close();
  }
});

Deno.test("SciEngine: a call starts on zeroed memory above the snapshot where an earlier call wrote", async () => {
  const { engine, memory } = await bootSci(256 * 1024);
  const source =
    '(ns w) (defn check [input] (let [s (if (seq input) (.repeat "secret-" 1000000) "")] ' +
    "{:checks {:a (= (count s) (if (seq input) 7000000 0))} :reward 1}))";
  const run = (key: string, src: string, input: string) => {
    const r = engine.call({ fn: "check", key, source: src, input, timeoutMs: 60_000 });
    assert.deepEqual(r.outcome, {
      ok: true,
      edn: key === "w" ? "{:checks {:a true}, :reward 1}" : "{:checks {}, :reward 1}",
    });
  };
  run("w", source, JSON.stringify(toTagged(new Map([["big", true]]))));
  assert.equal(
    inMemory(memory, "secret-secret-secret-"),
    true,
    "the call wrote megabytes above the snapshot",
  );
  // The same checker again (its snapshot restored), then another one (the base restored).
  run("w", source, INPUT);
  assert.equal(
    inMemory(memory, "secret-secret-secret-"),
    false,
    "the next call ran on zeroed memory",
  );
  run("w", source, JSON.stringify(toTagged(new Map([["big", true]]))));
  run("r", "(ns r) (defn check [_] {:checks {} :reward 1})", INPUT);
  assert.equal(
    inMemory(memory, "secret-secret-secret-"),
    false,
    "the next call ran on zeroed memory",
  );
});

Deno.test("SciEngine keeps each prepared checker as its difference from SCI's base snapshot; alternating checkers keep their own state", async () => {
  const { engine } = await bootSci(256 * 1024);
  // Each checker defines a table of its own at load and counts its calls in an atom.
  const source = (i: number) =>
    `(ns c${i}) (def table (vec (range ${i * 100} ${i * 100 + 50}))) (def calls (atom 0)) ` +
    `(defn check [_] (swap! calls inc) {:checks {:fresh (= 1 @calls)} :reward (/ (first table) 1000)})`;
  for (let round = 0; round < 3; round++) {
    for (let i = 1; i <= 4; i++) {
      const r = engine.call({
        fn: "check",
        key: `c${i}`,
        source: source(i),
        input: INPUT,
        timeoutMs: 60_000,
      });
      assert.deepEqual(r.outcome, { ok: true, edn: `{:checks {:fresh true}, :reward ${i / 10}}` });
      assert.equal(r.loaded, round === 0);
    }
  }
  const { base, prepared } = engine.sizes();
  assert.equal(prepared.length, 4);
  for (const bytes of prepared) {
    assert.ok(bytes < base / 4, `a prepared checker holds ${bytes} bytes (SCI's base: ${base})`);
  }
});

Deno.test("SciEngine.settle(): the memory goes back to the last checker's snapshot at once, and its next call restores nothing", async () => {
  const { engine, memory } = await bootSci(256 * 1024);
  const source = "(ns s) (def calls (atom 0)) " +
    '(defn check [input] (swap! calls inc) (let [s (if (seq input) (.repeat "hidden-" 100000) "")] ' +
    "{:checks {:fresh (= 1 @calls)} :reward (count s)}))";
  let restores = 0;
  // deno-lint-ignore no-explicit-any
  const snapshots = (engine as any).snapshots;
  const restore = snapshots.restore.bind(snapshots);
  snapshots.restore = (s: unknown) => {
    restores++;
    restore(s);
  };
  const run = (key: string, src: string, input: string) =>
    engine.call({ fn: "check", key, source: src, input, timeoutMs: 60_000 }).outcome;
  const big = JSON.stringify(toTagged(new Map([["big", true]])));
  assert.deepEqual(run("s", source, big), {
    ok: true,
    edn: "{:checks {:fresh true}, :reward 700000}",
  });
  assert.equal(inMemory(memory, "hidden-hidden-hidden-"), true, "the call's string is in memory");
  const before = restores;
  engine.settle();
  assert.equal(restores, before + 1);
  assert.equal(
    inMemory(memory, "hidden-hidden-hidden-"),
    false,
    "settled: the call's string is gone",
  );
  engine.settle();
  assert.equal(restores, before + 1, "settled already: nothing to restore");
  // The next call of the same checker finds its snapshot in place and starts fresh.
  assert.deepEqual(run("s", source, INPUT), {
    ok: true,
    edn: "{:checks {:fresh true}, :reward 0}",
  });
  assert.equal(restores, before + 1, "the call restored nothing");
  // Without settling, the next call restores as before; another checker restores its own.
  assert.deepEqual(run("s", source, big), {
    ok: true,
    edn: "{:checks {:fresh true}, :reward 700000}",
  });
  assert.equal(restores, before + 2);
  engine.settle();
  assert.deepEqual(
    run("t", "(ns t) (defn check [_] {:checks {} :reward 1})", INPUT),
    { ok: true, edn: "{:checks {}, :reward 1}" },
  );
  assert.equal(inMemory(memory, "hidden-hidden-hidden-"), false);
  assert.deepEqual(run("s", source, INPUT), {
    ok: true,
    edn: "{:checks {:fresh true}, :reward 0}",
  });
});
