/**
 * The checker.js worker process `dvergr benchmark` starts before its pool exists
 * (sandbox/worker_process.ts, cli/early_start.ts): the pool's first process worker is that
 * process, and it is the pool's worker in every way (no permission inside, killed at a
 * call's deadline and replaced); one started with other flags is stopped, and the pool starts
 * its own. When it is started: a benchmark of a bundle directory with a checker.js that runs
 * its cells here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import {
  CHECKER_PROCESS_ENTRY,
  processWorkersAvailable,
  startEarlyProcess,
} from "../../sandbox/worker_process.ts";
import { earlyBenchmarkChecker } from "../../cli/early_start.ts";
import type { CheckerInput } from "../../core/checker.ts";
import { DEFAULT_MEMORY_BYTES, STACK_BYTES } from "../../sandbox/pool_types.ts";

const INPUT: CheckerInput = {
  files: { "/out/answer.txt": "w1" },
  params: {},
  gold: { word: "w1" },
  fetched: {},
  judgements: {},
};

const GOOD = `export function check({ files, gold }) {
  return { checks: { right: files["/out/answer.txt"] === gold.word }, reward: 1 };
}`;

/** The init a pool sends when it has no layout and no image kept. */
const BARE_INIT = {
  type: "init",
  memoryBytes: DEFAULT_MEMORY_BYTES,
  stackBytes: STACK_BYTES,
} as const;

Deno.test({
  name:
    "a pool takes the worker process started early: its pid, no permission inside, killed at a deadline and replaced",
  ignore: !processWorkersAvailable(),
  fn: async () => {
    const early = startEarlyProcess(CHECKER_PROCESS_ENTRY, true);
    const pool = createCheckerPool({ workers: 1, workerKind: "process" });
    try {
      const run = await pool.check(GOOD, INPUT);
      assert.ok(run.ok, JSON.stringify(run));
      const stats = pool.stats();
      assert.equal(stats.workersStarted, 1);
      assert.deepEqual(stats.workerPids, [early.pid]);
      assert.ok(stats.workerPermissions, "the worker said what it may do");
      for (const [name, state] of Object.entries(stats.workerPermissions)) {
        assert.notEqual(state, "granted", `the early worker has ${name}`);
      }
      const loop = await pool.check("export function check() { for (;;) {} }", INPUT, {
        timeoutMs: 300,
      });
      assert.equal(!loop.ok && loop.fault, "timeout", JSON.stringify(loop));
      assert.ok((await early.status).signal, "the early worker was killed at the deadline");
      assert.ok((await pool.check(GOOD, INPUT)).ok);
      assert.notDeepEqual(pool.stats().workerPids, [early.pid]);
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name: "a worker process started early with other flags is stopped, and the pool starts its own",
  ignore: !processWorkersAvailable(),
  fn: async () => {
    // Not baseline-only: a checker.js pool's first worker is.
    const early = startEarlyProcess(CHECKER_PROCESS_ENTRY, false);
    const pool = createCheckerPool({ workers: 1, workerKind: "process" });
    try {
      assert.ok((await pool.check(GOOD, INPUT)).ok);
      assert.equal(pool.stats().workersStarted, 1);
      assert.notDeepEqual(pool.stats().workerPids, [early.pid]);
      assert.equal((await early.status).signal, "SIGKILL");
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name:
    "a worker process given its init as arguments serves a pool whose init is the same, which sends it none",
  ignore: !processWorkersAvailable(),
  fn: async () => {
    // The init a pool of these options sends (no layouts, no images): the worker has only its
    // arguments' init, so a call answered means it booted from them.
    const early = startEarlyProcess(CHECKER_PROCESS_ENTRY, true, BARE_INIT);
    const pool = createCheckerPool({ workers: 1, workerKind: "process" });
    try {
      const run = await pool.check(GOOD, INPUT);
      assert.ok(run.ok, JSON.stringify(run));
      assert.equal(pool.stats().workersStarted, 1);
      assert.deepEqual(pool.stats().workerPids, [early.pid]);
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name:
    "a worker process started early has its init in its arguments and a checker image only over stdin, once taken",
  ignore: !processWorkersAvailable(),
  fn: async () => {
    // Bytes that do not hold as an image: the worker drops them and loads the checker itself.
    const key = "f00d".repeat(16);
    const prepared = { type: "prepared", key, image: new Uint8Array([1, 2, 3]) } as const;
    const early = startEarlyProcess(CHECKER_PROCESS_ENTRY, true, BARE_INIT, prepared);
    const pool = createCheckerPool({ workers: 1, workerKind: "process" });
    try {
      // What any local user can read of it: the init, nothing of the checker.
      const ps = await new Deno.Command("ps", { args: ["-o", "args=", "-p", String(early.pid)] })
        .output();
      const args = new TextDecoder().decode(ps.stdout);
      assert.match(args, /--dvergr-messages/);
      assert.doesNotMatch(args, new RegExp(key));
      assert.doesNotMatch(args, /prepared/);
      assert.ok((await pool.check(GOOD, INPUT)).ok);
      assert.deepEqual(pool.stats().workerPids, [early.pid]);
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name:
    "a worker process given another init as arguments is stopped, and the pool's own worker gets the pool's init",
  ignore: !processWorkersAvailable(),
  fn: async () => {
    const init = { type: "init", memoryBytes: 64 * 1024 * 1024, stackBytes: STACK_BYTES } as const;
    const early = startEarlyProcess(CHECKER_PROCESS_ENTRY, true, init);
    const pool = createCheckerPool({ workers: 1, workerKind: "process" });
    try {
      assert.ok((await pool.check(GOOD, INPUT)).ok);
      assert.equal(pool.stats().workersStarted, 1);
      assert.notDeepEqual(pool.stats().workerPids, [early.pid]);
      assert.equal((await early.status).signal, "SIGKILL");
    } finally {
      pool.close();
    }
  },
});

Deno.test("a benchmark of a bundle directory with a checker.js whose cells run here starts its worker process early", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-early-process-" });
  try {
    const js = join(dir, "js");
    const clj = join(dir, "clj");
    await Deno.mkdir(js);
    await Deno.mkdir(clj);
    await Deno.writeTextFile(join(js, "checker.js"), GOOD);
    await Deno.writeTextFile(join(clj, "checker.clj"), "(defn check [input] {})");
    // Whether process workers can start is asked only then (cli/early_sandbox.ts).
    const checker = join(js, "checker.js");
    assert.equal(earlyBenchmarkChecker(["benchmark", js, "--candidate", "builtin:noop"]), checker);
    assert.equal(earlyBenchmarkChecker(["benchmark", "--parallel", "4", js]), checker);
    for (
      const args of [
        ["benchmark", js, "--check"],
        ["benchmark", js, "--enqueue"],
        ["benchmark", js, "--help"],
        ["benchmark", clj],
        ["benchmark", "room/name"],
        ["calibrate", js],
        ["check", js, "--answer", "a.txt"],
      ]
    ) {
      assert.equal(earlyBenchmarkChecker(args), null, args.join(" "));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
