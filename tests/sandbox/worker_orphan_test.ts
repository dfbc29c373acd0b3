/**
 * A checker worker process does not outlive its pool's process: a process whose pool has a
 * worker stuck in a native call (which QuickJS's interrupt handler never sees, so only the
 * pool's watchdog would stop it) is killed with SIGKILL, and the worker goes with it. Before,
 * such workers spun at 100% CPU for as long as the machine ran.
 */
import assert from "node:assert/strict";
import { DVERGR_PERMISSIONS } from "../../core/permissions.ts";

const POOL = new URL("../../sandbox/checker_pool.ts", import.meta.url).href;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

// The pool's process: one stuck check (no time limit of its own that would end it soon), the
// worker's pid on stdout, then it waits to be killed.
const SCRIPT = `
import { createCheckerPool } from ${JSON.stringify(POOL)};
const pool = createCheckerPool({ workers: 1 });
const input = { files: {}, params: {}, gold: null, fetched: {}, judgements: {} };
await pool.check("export function check() { return { checks: { ok: true }, reward: 1 }; }", input);
const [pid] = pool.stats().workerPids;
pool.check('export function check() { const s = "a".repeat(40e6); let n = 0; for (;;) n += s.indexOf("b"); }', input, { timeoutMs: 600_000 });
console.log(pid);
await new Promise(() => {});
`;

async function alive(pid: number): Promise<boolean> {
  // Deno lets only --allow-all read another process's /proc entry; cat may.
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" })
    .output();
  if (!out.success) return false;
  const text = new TextDecoder().decode(out.stdout);
  const state = text.slice(text.lastIndexOf(")") + 2).split(" ")[0];
  return state !== "Z" && state !== "X";
}

Deno.test({
  name: "a checker worker stuck in a native call dies with its pool's process (kill -9)",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "dvergr-orphan-" });
    const file = `${dir}/pool.ts`;
    await Deno.writeTextFile(file, SCRIPT);
    const owner = new Deno.Command(Deno.execPath(), {
      args: ["run", ...DVERGR_PERMISSIONS, "--config", CONFIG, file],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    let pid = 0;
    try {
      const reader = owner.stdout.getReader();
      let text = "";
      while (!text.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      pid = Number(text.trim());
      assert.ok(pid > 0, `the pool's process printed its worker's pid: ${JSON.stringify(text)}`);
      assert.equal(await alive(pid), true);
      owner.kill("SIGKILL");
      await owner.status;
      // Bounded: the kernel sends the signal when the pool's process dies; a loaded machine
      // gets a minute to deliver it.
      let gone = false;
      for (let i = 0; i < 600 && !gone; i++) {
        gone = !(await alive(pid));
        if (!gone) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(gone, true, `worker ${pid} outlived its pool's process`);
    } finally {
      try {
        owner.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await owner.stdout.cancel().catch(() => {});
      if (pid > 0) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // Gone, as it should be.
        }
      }
      await Deno.remove(dir, { recursive: true });
    }
  },
});
