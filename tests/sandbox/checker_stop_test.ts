/**
 * A checker stuck in native calls that never poll QuickJS's interrupt handler: its worker
 * process is killed at the watchdog's deadline, and the CPU it burned is free right after
 * the caller gets the timeout (watched through /proc/<pid>/stat).
 */
import assert from "node:assert/strict";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import type { CheckerInput } from "../../core/checker.ts";

const INPUT: CheckerInput = { files: {}, params: {}, gold: null, fetched: {}, judgements: {} };
const NORMAL = "export function check() { return { checks: { ok: true }, reward: 1 }; }";

/** CPU ticks (user + system) of a process, or undefined when it is gone or a zombie. */
async function cpuTicks(pid: number): Promise<number | undefined> {
  // Deno lets only --allow-all read another process's /proc entry; cat may.
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" })
    .output();
  if (!out.success) return undefined;
  const text = new TextDecoder().decode(out.stdout);
  // The command name may hold spaces and parentheses: fields count from the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return undefined;
  return Number(fields[11]) + Number(fields[12]);
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `killed`: whether the call certainly outlives the watchdog (QuickJS's regex engine polls
 * the interrupt handler now and then, so a regex may also end inside the sandbox). */
const STUCK: { name: string; body: string; killed?: boolean }[] = [
  {
    name: "indexOf on a 40 MB string in a loop",
    body: `const s = "a".repeat(40e6); let n = 0; for (;;) n += s.indexOf("b");`,
    killed: true,
  },
  {
    name: "a catastrophically backtracking regex",
    body: `const s = "a".repeat(40) + "b"; for (;;) /^(a+)+$/.test(s);`,
  },
];

for (const { name, body, killed } of STUCK) {
  Deno.test(
    `check() stops a checker stuck in ${name}: a timeout fault, then its process's CPU idle within 1 s`,
    {
      ignore: Deno.build.os !== "linux",
    },
    async () => {
      const pool = createCheckerPool({ workers: 1, hangMarginMs: 200 });
      try {
        assert.equal((await pool.check(NORMAL, INPUT)).ok, true);
        assert.equal(pool.stats().workerKind, "process");
        const [pid] = pool.stats().workerPids;
        const stuck = pool.check(`export function check() { ${body} }`, INPUT, { timeoutMs: 1500 });
        // It is busy: its CPU time grows (polled: on a loaded machine it gets a share of a core).
        const first = await cpuTicks(pid);
        let burning = false;
        for (let i = 0; i < 20 && !burning; i++) {
          await delay(50);
          const now = await cpuTicks(pid);
          burning = first !== undefined && now !== undefined && now > first;
        }
        assert.ok(burning, "the worker process burns CPU while the checker is stuck");
        const run = await stuck;
        const faultAt = performance.now();
        assert.deepEqual(run.ok ? run : { fault: run.fault, message: run.message }, {
          fault: "timeout",
          message: "The checker did not finish within 1500ms",
        });
        if (killed) {
          // The watchdog killed the process: QuickJS never polled its interrupt handler.
          assert.equal(pool.stats().workersAbandoned, 1);
          assert.ok(!pool.stats().workerPids.includes(pid));
        }
        // Within 1 s of the fault the process is gone, or at least burns no more CPU.
        let idle = false;
        while (!idle && performance.now() - faultAt < 1000) {
          const a = await cpuTicks(pid);
          await delay(100);
          const b = await cpuTicks(pid);
          idle = a === undefined || b === undefined || a === b;
        }
        assert.ok(idle, `process ${pid} still used CPU 1 s after its timeout`);
        // And the pool answers normally on its replacement.
        assert.deepEqual((await pool.check(NORMAL, INPUT)).ok, true);
      } finally {
        pool.close();
      }
    },
  );
}
