/**
 * The checker.js thread worker a one-shot command starts before its pool exists
 * (sandbox/early_thread.ts, cli/early_start.ts): the pool takes it instead of starting one,
 * and it is the pool's worker in every way: no permission inside, a hostile checker's loop
 * or memory bomb ends as a fault at the deadline and a fresh worker answers next. One sent
 * another init is not taken. When it is started: not for a checker whose load is kept, and a
 * changed checker or sandbox (dvergr's version) is a miss.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CHECKER_WORKERS, createCheckerPool } from "../../sandbox/checker_pool.ts";
import { createWorkerPool } from "../../sandbox/worker_pool.ts";
import { DEFAULT_MEMORY_BYTES, STACK_BYTES } from "../../sandbox/pool_types.ts";
import type { CallOutcome } from "../../sandbox/protocol.ts";
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
import {
  CHECKER_THREAD_ENTRY,
  startEarlyThread,
  takeEarlyThread,
} from "../../sandbox/early_thread.ts";
import { loadCachingRunner, loadsKept, sandboxIdentity } from "../../sandbox/load_cache.ts";
import { earlySandboxChecker } from "../../cli/early_start.ts";
import { initEarlyCheckerThread, startEarlyCheckerThread } from "../../cli/early_sandbox.ts";
import type { CheckerInput } from "../../core/checker.ts";

const INPUT: CheckerInput = {
  files: { "/out/answer.edn": "{:total 42}" },
  params: {},
  gold: { total: 42 },
  fetched: {},
  judgements: {},
};

const GOOD = `export function check({ files, gold }) {
  const answer = edn.parse(files["/out/answer.edn"]);
  return { checks: { total: answer.total === gold.total }, reward: 1 };
}`;

/** Runs `body` counting the Worker objects made meanwhile. */
async function countingWorkers(body: (made: () => number) => Promise<void>): Promise<void> {
  const Original = globalThis.Worker;
  let made = 0;
  globalThis.Worker = class extends Original {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      super(...args);
      made++;
    }
  };
  try {
    await body(() => made);
  } finally {
    globalThis.Worker = Original;
  }
}

Deno.test("a pool takes the checker.js worker started early: one worker, no permission inside, faults at the deadline", async () => {
  await countingWorkers(async (made) => {
    startEarlyCheckerThread();
    assert.equal(made(), 1);
    const pool = createCheckerPool({ workers: 1, workerKind: "thread" });
    try {
      const run = await pool.check(GOOD, INPUT);
      assert.ok(run.ok, JSON.stringify(run));
      assert.equal(made(), 1, "the pool started a worker of its own");
      assert.equal(takeEarlyThread(CHECKER_THREAD_ENTRY), undefined, "it was not taken");
      const stats = pool.stats();
      assert.equal(stats.workersStarted, 1);
      assert.ok(stats.workerPermissions, "the worker said what it may do");
      for (const [name, state] of Object.entries(stats.workerPermissions)) {
        assert.notEqual(state, "granted", `the early worker has ${name}`);
      }
      // A top level that never ends, then a memory bomb: faults, and the next call answers.
      const loop = await pool.check("for (;;) {}\nexport function check() {}", INPUT, {
        timeoutMs: 300,
      });
      assert.equal(!loop.ok && loop.fault, "timeout", JSON.stringify(loop));
      const bomb = await pool.check(
        "export function check() { let s = 'x'; for (;;) s = s + s; }",
        INPUT,
        {
          timeoutMs: 10_000,
        },
      );
      assert.equal(!bomb.ok && bomb.fault, "memory", JSON.stringify(bomb));
      assert.ok((await pool.check(GOOD, INPUT)).ok);
    } finally {
      pool.close();
    }
  });
});

Deno.test("a worker started early and sent its init later is taken; one never sent an init is stopped", async () => {
  await countingWorkers(async (made) => {
    // As cli/early_start.ts does: the worker first, its init once early_sandbox.ts has loaded.
    const thread = startEarlyThread(CHECKER_THREAD_ENTRY);
    assert.equal(thread.init, undefined);
    await delay(5);
    initEarlyCheckerThread(thread);
    const pool = createCheckerPool({ workers: 1, workerKind: "thread" });
    try {
      assert.ok((await pool.check(GOOD, INPUT)).ok);
      assert.equal(made(), 1, "the pool started a worker of its own");
    } finally {
      pool.close();
    }
    // Never sent one (what makes it failed to load): the pool starts its own, this one stops.
    startEarlyThread(CHECKER_THREAD_ENTRY);
    const again = createCheckerPool({ workers: 1, workerKind: "thread" });
    try {
      assert.ok((await again.check(GOOD, INPUT)).ok);
      assert.equal(made(), 3, "the pool took the worker that has no init");
      assert.equal(takeEarlyThread(CHECKER_THREAD_ENTRY), undefined, "it is still kept");
    } finally {
      again.close();
    }
  });
});

Deno.test("a worker started early with another init is stopped, and the pool starts its own", async () => {
  await countingWorkers(async (made) => {
    startEarlyThread(CHECKER_THREAD_ENTRY, {
      type: "init",
      memoryBytes: 48 * 1024 * 1024,
      stackBytes: 128 * 1024,
    });
    const pool = createCheckerPool({ workers: 1, workerKind: "thread" });
    try {
      assert.ok((await pool.check(GOOD, INPUT)).ok);
      assert.equal(made(), 2);
      assert.equal(pool.stats().workersStarted, 1);
    } finally {
      pool.close();
    }
  });
});

Deno.test("a worker started early that failed to load is reported to the pool that takes it", async () => {
  const dir = await Deno.makeTempDir();
  const entry = new URL(`file://${join(dir, "broken_worker.js")}`);
  await Deno.writeTextFile(entry, 'throw new Error("boom at load");\n');
  const thread = startEarlyThread(entry, {
    type: "init",
    memoryBytes: DEFAULT_MEMORY_BYTES,
    stackBytes: STACK_BYTES,
  });
  // Its failure, once it came, waits for the pool; if it has not come yet, it comes live.
  for (let i = 0; i < 200 && thread.failure === undefined; i++) await delay(25);
  const pool = createWorkerPool<CallOutcome>(
    { ...CHECKER_WORKERS, entries: { ...CHECKER_WORKERS.entries, thread: entry } },
    { workers: 1, workerKind: "thread" },
  );
  try {
    const { outcome } = await pool.submit("check", GOOD, INPUT);
    assert.equal(!outcome.ok && outcome.fault, "crashed", JSON.stringify(outcome));
    assert.match(!outcome.ok ? outcome.message : "", /could not start: .*boom at load/);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a pool whose worker does not load within its start time fails the calls waiting for it", async () => {
  const dir = await Deno.makeTempDir();
  const entry = new URL(`file://${join(dir, "silent_worker.js")}`);
  // Loads, then never answers its init.
  await Deno.writeTextFile(entry, "self.onmessage = () => {};\n");
  const pool = createWorkerPool<CallOutcome>(
    {
      ...CHECKER_WORKERS,
      entries: { ...CHECKER_WORKERS.entries, thread: entry },
      startTimeoutMs: 300,
    },
    { workers: 1, workerKind: "thread" },
  );
  try {
    const { outcome } = await pool.submit("check", GOOD, INPUT);
    assert.equal(!outcome.ok && outcome.fault, "crashed", JSON.stringify(outcome));
    assert.match(
      !outcome.ok ? outcome.message : "",
      /could not start: .*did not load within 300ms/,
    );
    assert.equal(pool.stats().workersStarted, 1);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a pool closed before its first call stops the worker started early", () => {
  startEarlyCheckerThread();
  const pool = createCheckerPool({ workers: 1, workerKind: "thread" });
  pool.warm("checker.js");
  pool.close();
  assert.equal(takeEarlyThread(CHECKER_THREAD_ENTRY), undefined);
  // Nothing is left running: the test's sanitizers would report a live worker.
});

Deno.test("earlySandboxChecker(): calibrate and check --answer of a checker.js bundle, check only when its load is not kept", async () => {
  const bundle = await Deno.makeTempDir();
  const cache = await Deno.makeTempDir();
  const env = (name: string) => (name === "XDG_CACHE_HOME" ? cache : undefined);
  try {
    assert.equal(earlySandboxChecker(["check", bundle], env), null, "no checker.js");
    await Deno.writeTextFile(join(bundle, "checker.js"), GOOD);
    assert.equal(earlySandboxChecker(["check", bundle], env), GOOD);
    assert.equal(earlySandboxChecker(["check", bundle, "--answer", "a"], env), GOOD);
    assert.equal(earlySandboxChecker(["calibrate", bundle, "--json"], env), GOOD);
    assert.equal(earlySandboxChecker(["calibrate", bundle, "--help"], env), null);
    assert.equal(earlySandboxChecker(["benchmark", bundle], env), null);
    assert.equal(earlySandboxChecker(["check", "--json"], env), null);

    // A load kept for this checker (any input): check asks no sandbox, so none starts.
    const dir = join(cache, "dvergr", "checker-loads");
    const pool = createCheckerPool({ workers: 1, workerKind: "thread" });
    try {
      assert.ok((await loadCachingRunner(pool, dir).check(GOOD, INPUT)).ok);
    } finally {
      pool.close();
    }
    assert.equal(loadsKept(dir, GOOD), true);
    assert.equal(earlySandboxChecker(["check", bundle], env), null);
    assert.equal(earlySandboxChecker(["check", bundle, "--answer=a"], env), GOOD);

    // A changed checker is a miss; so is another sandbox (another dvergr version).
    await Deno.writeTextFile(join(bundle, "checker.js"), GOOD + "\n// changed\n");
    assert.equal(earlySandboxChecker(["check", bundle], env), GOOD + "\n// changed\n");
    assert.equal(loadsKept(dir, GOOD, sandboxIdentity("0.0.0-other")), false);
    assert.notEqual(sandboxIdentity("0.0.0-other"), sandboxIdentity());
  } finally {
    await Deno.remove(bundle, { recursive: true });
    await Deno.remove(cache, { recursive: true });
  }
});
