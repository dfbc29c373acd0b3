/**
 * Attempt cgroups of one process: a second module instance (what a `deno test --parallel`
 * worker is: same pid, its own module state) must not sweep away a cgroup another instance
 * just made and has not yet moved a process into.
 */
import assert from "node:assert/strict";
import * as first from "../../../../adapters/candidates/command/cgroup.ts";

const env = (k: string) => Deno.env.get(k);
const MIB = 1024 * 1024;

/** Exit status of a process that joins `cgroup` and exits 0 (125: it could not join). */
async function joinAndRun(cgroup: first.AttemptCgroup): Promise<number> {
  const [cmd, ...args] = [...first.joinCgroupArgv(cgroup), "/bin/sh", "-c", "exit 0"];
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output();
  return out.code;
}

Deno.test("openAttemptCgroup() in a second module instance of the process leaves the first's fresh cgroup alone", async () => {
  const a = await first.openAttemptCgroup(64 * MIB, 24, env);
  if (a === null) return; // No cgroup on this host: nothing to sweep.
  // A fresh instance of the module, as another worker of this process has: its first
  // attempt sweeps the leftovers of dead dvergr processes.
  const url = new URL("../../../../adapters/candidates/command/cgroup.ts", import.meta.url);
  const second: typeof first = await import(`${url.href}?second-instance`);
  const b = await second.openAttemptCgroup(64 * MIB, 24, env);
  try {
    assert.equal(await joinAndRun(a), 0, "the first instance's cgroup was swept away");
    if (b !== null) assert.equal(await joinAndRun(b), 0);
  } finally {
    await a.close();
    await b?.close();
  }
});
