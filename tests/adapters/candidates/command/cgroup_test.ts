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

/** Starts, in `held`, a process that leaves a sleeper behind; the sleeper's pid. */
async function sleeperIn(held: first.AttemptCgroup): Promise<number> {
  const [cmd, ...args] = [
    ...first.joinCgroupArgv(held),
    "/bin/sh",
    "-c",
    "sleep 60 </dev/null >/dev/null 2>&1 & echo $!",
  ];
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).output();
  const pid = Number(new TextDecoder().decode(out.stdout).trim());
  assert.ok(pid > 0);
  return pid;
}

/** Whether process `pid` runs (killed, it may stay a zombie until the host's init reaps it). */
async function alive(pid: number): Promise<boolean> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", `read -r s < /proc/${pid}/stat && case "$s" in *") Z "*) exit 1;; esac`],
    stderr: "null",
  }).output();
  return out.success;
}

Deno.test("openAttemptCgroup() in a second module instance of the process leaves the first's fresh cgroup alone", async () => {
  const a = await first.openAttemptCgroup(64 * MIB, 24, env);
  if (a === null) return; // No cgroup on this host: nothing to sweep.
  // A fresh instance of the module, as another worker of this process has: its first
  // attempt sweeps the leftovers of dead dvergr processes.
  const url = new URL("../../../../adapters/candidates/command/cgroup.ts", import.meta.url);
  const second: typeof first = await import(`${url.href}?second-instance`);
  const b = await second.openAttemptCgroup(64 * MIB, 24, env);
  // Its sweep runs beside its attempts: what it would take, it has taken once it ended.
  await second.cgroupsSwept();
  try {
    assert.equal(await joinAndRun(a), 0, "the first instance's cgroup was swept away");
    if (b !== null) assert.equal(await joinAndRun(b), 0);
  } finally {
    await a.close();
    await b?.close();
  }
});

/** The attempt's cgroup directories, as its join script makes them. */
function dirsOf(cgroup: first.AttemptCgroup): string[] {
  // The line that makes them; a fresh cgroup's also makes the spares after its own.
  const line = cgroup.joinScript.split("\n")[0];
  const own = cgroup.version === 2 ? 2 : 3;
  // Its quoted words but mkdir's own path.
  return [...line.matchAll(/'([^']+)'/g)].map((m) => m[1]).filter((d, i, all) =>
    all.indexOf(d) === i && !d.endsWith("/mkdir")
  ).slice(0, own);
}

/** Those of `dirs` that exist (a shell looks: Deno reads /sys only with every permission). */
async function existing(dirs: string[]): Promise<string[]> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", 'for d in "$@"; do [ -d "$d" ] && echo "$d"; done; exit 0', "t", ...dirs],
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
}

Deno.test("AttemptCgroup.end() removes an emptied cgroup, and kills what a detached process left in one first", async () => {
  const empty = await first.openAttemptCgroup(64 * MIB, 24, env);
  if (empty === null) return; // No cgroup on this host.
  assert.equal(await joinAndRun(empty), 0);
  assert.equal((await existing(dirsOf(empty))).length, dirsOf(empty).length);
  assert.deepEqual(await empty.end(), []);
  assert.deepEqual(await existing(dirsOf(empty)), []);

  const held = await first.openAttemptCgroup(64 * MIB, 24, env);
  assert.ok(held !== null);
  // A process that leaves a sleeper behind in the cgroup, and says its pid.
  const pid = await sleeperIn(held);
  try {
    assert.deepEqual(await held.end(), []);
    assert.deepEqual(await existing(dirsOf(held)), []);
    // The sleeper went with its cgroup.
    // (Killed, it may stay a zombie until the host's init reaps it.)
    assert.equal(await alive(pid), false, "the detached sleeper outlived its cgroup");
  } finally {
    await new Deno.Command("/bin/sh", { args: ["-c", `kill -9 ${pid} 2>/dev/null; exit 0`] })
      .output();
  }
});

Deno.test("AttemptCgroup.end(true) says the limits hit and removes the cgroup after, killing what was left in it", async () => {
  const held = await first.openAttemptCgroup(64 * MIB, 24, env);
  if (held === null) return; // No cgroup on this host.
  const pid = await sleeperIn(held);
  try {
    assert.deepEqual(await held.end(true), []);
    await first.cgroupRemovalsSettled();
    assert.deepEqual(await existing(dirsOf(held)), []);
    assert.equal(await alive(pid), false, "the detached sleeper outlived its cgroup");
  } finally {
    await new Deno.Command("/bin/sh", { args: ["-c", `kill -9 ${pid} 2>/dev/null; exit 0`] })
      .output();
  }
});

Deno.test("openAttemptCgroup() makes the next attempts' cgroups ahead with the same mkdir, and a spare taken early still starts", async () => {
  const open = () => first.openAttemptCgroup(64 * MIB, 24, env);
  const probe = await open();
  if (probe === null) return; // No cgroup on this host.
  const opened: first.AttemptCgroup[] = [probe];
  try {
    // Use up what earlier tests left ahead, up to a fresh cgroup (one whose mkdir makes more).
    // mkdir by its absolute path: the launch's root shell looks nothing up on the attempt's PATH.
    const FRESH = /^'\/[^']*\/mkdir' -p /;
    let fresh = probe;
    while (!FRESH.test(fresh.joinScript)) {
      fresh = (await open())!;
      opened.push(fresh);
      assert.ok(opened.length <= first.SPARE_CGROUPS + 2);
    }
    // A spare taken before the fresh cgroup's launch ran makes its own directories.
    const early = (await open())!;
    opened.push(early);
    assert.match(early.joinScript, /^\[ -d '[^']+' \] \|\| '\/[^']*\/mkdir' -p /);
    assert.equal(await joinAndRun(early), 0);
    // The fresh launch's one mkdir makes its own and the rest of the spares.
    assert.equal(await joinAndRun(fresh), 0);
    for (let i = 1; i < first.SPARE_CGROUPS; i++) {
      const next = (await open())!;
      opened.push(next);
      assert.match(next.joinScript, /^\[ -d /, `spare ${i}`);
      assert.equal((await existing(dirsOf(next))).length, dirsOf(next).length, `spare ${i} made`);
      assert.equal(await joinAndRun(next), 0);
      assert.deepEqual(await next.end(), []);
      assert.deepEqual(await existing(dirsOf(next)), []);
    }
    // Spent: the next one is fresh again.
    const again = (await open())!;
    opened.push(again);
    assert.match(again.joinScript, FRESH);
  } finally {
    for (const c of opened) await c.close();
  }
});

Deno.test("warmAttemptCgroups() starts the probe a first attempt awaits: its cgroup joins as an unwarmed one does; DVERGR_CGROUP=none stays off", async () => {
  const url = new URL("../../../../adapters/candidates/command/cgroup.ts", import.meta.url);
  const warmed: typeof first = await import(`${url.href}?warmed-instance`);
  const off = (k: string) => k === "DVERGR_CGROUP" ? "none" : env(k);
  // Started, never awaited: neither a throw nor a rejection left unhandled (which fails a test).
  warmed.warmAttemptCgroups(off);
  assert.equal(await warmed.openAttemptCgroup(64 * MIB, 24, off), null);
  warmed.warmAttemptCgroups(env);
  warmed.warmAttemptCgroups(env);
  const unwarmed = await first.openAttemptCgroup(64 * MIB, 24, env);
  const cgroup = await warmed.openAttemptCgroup(64 * MIB, 24, env);
  try {
    assert.equal(cgroup === null, unwarmed === null, "the same kind of host as unwarmed");
    if (cgroup !== null) assert.equal(await joinAndRun(cgroup), 0);
  } finally {
    await cgroup?.close();
    await unwarmed?.close();
  }
});

Deno.test("the first openAttemptCgroup() of a process sweeps every cgroup of dead dvergr processes, never a live one's", async () => {
  const probe = await first.openAttemptCgroup(64 * MIB, 24, env);
  if (probe === null) return; // No cgroup on this host: nothing to sweep.
  // Where the attempts' cgroups are: the parents of its own directories (not its candidate's).
  const parents = [
    ...new Set(
      dirsOf(probe).filter((d) => !d.endsWith("/candidate"))
        .map((d) => d.slice(0, d.lastIndexOf("/"))),
    ),
  ];
  await probe.close();
  // A pid that ran and ended: its cgroups are leftovers; this process's are alive.
  const ended = new Deno.Command("true").spawn();
  await ended.status;
  const dead = Array.from({ length: 30 }, (_, i) => `dvergr-${ended.pid}-sweeptest${i}`);
  const live = `dvergr-${Deno.pid}-sweeptest`;
  const made = [...dead, live].flatMap((n) => [
    ...parents.map((p) => `${p}/${n}`),
    `${parents.at(-1)}/${n}/candidate`,
  ]);
  const mk = await new Deno.Command("/bin/sh", {
    args: ["-c", 'mkdir -p "$@"', "t", ...made],
  }).output();
  assert.ok(mk.success, new TextDecoder().decode(mk.stderr));
  try {
    const url = new URL("../../../../adapters/candidates/command/cgroup.ts", import.meta.url);
    const fresh: typeof first = await import(`${url.href}?sweeping-instance`);
    const cgroup = await fresh.openAttemptCgroup(64 * MIB, 24, env);
    await fresh.cgroupsSwept();
    await cgroup?.close();
    const left = await existing(made);
    assert.deepEqual(left.filter((d) => !d.includes(live)), [], "a dead process's cgroup left");
    assert.deepEqual(left.filter((d) => d.includes(live)).length, parents.length + 1);
  } finally {
    await new Deno.Command("/bin/sh", {
      args: ["-c", 'rmdir "$@" 2>/dev/null; exit 0', "t", ...made.slice().reverse()],
    }).output();
  }
});
