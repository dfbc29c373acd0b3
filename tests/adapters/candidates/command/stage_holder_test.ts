/**
 * The held staging of sandboxed attempts run as root (stage_holder.ts): one holder per stage
 * mount point whose namespace every attempt enters, nothing of it on the host, a wrong
 * namespace refused, a holder gone replaced, and nothing left when dvergr is killed.
 *
 * The tests that start sandboxes stage under a temp dir of their own (the TMPDIR of the
 * candidate's environment), as stage_dirs_test.ts does, so each has holders of its own.
 */
import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import {
  heldBwrap,
  passableBy,
  stagePoint,
} from "../../../../adapters/candidates/command/host_identity.ts";
import { cleanDrop, holdStage } from "../../../../adapters/candidates/command/stage_holder.ts";
import { hostProgram } from "../../../../adapters/candidates/command/command_program.ts";
import { attemptInWorld } from "../../../helpers/attempt_world.ts";
import { createWorld } from "../../../../adapters/world/world.ts";

const env = (k: string) => Deno.env.get(k);
const isRoot = Deno.uid() === 0;
const hasBwrap = await detectBwrap(env);
const ignore = !isRoot || !hasBwrap;
const why = ignore ? ` [skipped: ${isRoot ? "no bubblewrap" : "not root: no staging"}]` : "";
const ID = { uid: 4242, gid: 4343 };
const PROGRAMS = { setpriv: "/usr/bin/setpriv", bwrap: "/usr/bin/bwrap" };

Deno.test("heldBwrap() reaches the attempt's own directories through their parents, binds others whole", () => {
  const dirs = new Set(["/root/agents", "/w/sandbox-1/bin"]);
  const passed: string[] = [];
  const plan = heldBwrap(
    ID,
    [
      "--ro-bind",
      "/usr",
      "/usr",
      "--ro-bind",
      "/root/agents",
      "/root/agents",
      "--ro-bind",
      "/w/world-1/docs",
      "/docs",
      "--bind",
      "/w/attempt-1/capture.tar",
      "/.dvergr/capture.tar",
      "--ro-bind",
      "/w/sandbox-1/bin",
      "/.dvergr/bin",
      "--ro-bind",
      "/tmp/dvg-1",
      "/run/dvergr",
      "--setenv",
      "--bind",
      "x",
    ],
    ["/bin/sh", "-c", "--bind /w/world-1/docs /x"],
    ["/usr"],
    ["/w/world-1", "/w/attempt-1", "/tmp/dvg-1"],
    {
      kind: (s) => dirs.has(s) ? "dir" : null,
      passable: (d) => {
        passed.push(d);
        return true;
      },
    },
    PROGRAMS,
  );
  assert.ok(plan);
  // The worlds directory once, written (the pack), never its submounts; the temp dir
  // read-only; the other sources whole, with theirs.
  assert.deepEqual(plan.roots, [
    { source: "/root/agents", rw: false, recursive: true },
    { source: "/w", rw: true, recursive: false },
    { source: "/w/sandbox-1/bin", rw: false, recursive: true },
    { source: "/tmp", rw: false, recursive: false },
  ]);
  // Every directory on the way from a parent to a source is one the uid must pass.
  assert.deepEqual([...new Set(passed)].sort(), ["/tmp", "/w", "/w/attempt-1", "/w/world-1"]);
  const at = (root: string) =>
    `/stage/${["/root/agents", "/w", "/w/sandbox-1/bin", "/tmp"].indexOf(root)}`;
  const argv = plan.argv(at);
  assert.deepEqual(argv.slice(0, 9), [
    "/usr/bin/setpriv",
    "--reuid=4242",
    "--regid=4343",
    "--clear-groups",
    "--inh-caps=-all",
    "--pdeathsig=KILL",
    "--",
    "/usr/bin/bwrap",
    "--ro-bind",
  ]);
  assert.deepEqual(argv.slice(8), [
    "--ro-bind",
    "/usr",
    "/usr",
    "--ro-bind",
    "/stage/0",
    "/root/agents",
    "--ro-bind",
    "/stage/1/world-1/docs",
    "/docs",
    "--bind",
    "/stage/1/attempt-1/capture.tar",
    "/.dvergr/capture.tar",
    "--ro-bind",
    "/stage/2",
    "/.dvergr/bin",
    "--ro-bind",
    "/stage/3/dvg-1",
    "/run/dvergr",
    // An option's arguments are copied, as is the command.
    "--setenv",
    "--bind",
    "x",
    "/bin/sh",
    "-c",
    "--bind /w/world-1/docs /x",
  ]);
});

Deno.test("heldBwrap() cannot hold a source the uid cannot pass to, nor a file or a missing source of another place", () => {
  const probe = (passable: string[]) => ({
    kind: (s: string) =>
      s === "/root/file" ? "file" as const : s === "/root/dir" ? "dir" as const : null,
    passable: (d: string) => passable.includes(d),
  });
  const plan = (options: string[], passable: string[]) =>
    heldBwrap(ID, options, ["true"], ["/usr"], ["/w/world-1"], probe(passable), PROGRAMS);
  const docs = ["--ro-bind", "/w/world-1/docs", "/docs"];
  assert.ok(plan(docs, ["/w", "/w/world-1"]));
  // The world's own directory closed to the uid, or its parent.
  assert.equal(plan(docs, ["/w"]), null);
  assert.equal(plan(docs, ["/w/world-1"]), null);
  assert.ok(plan(["--ro-bind", "/root/dir", "/d"], []));
  assert.equal(plan(["--ro-bind", "/root/file", "/f"], []), null);
  assert.equal(plan(["--ro-bind-try", "/root/missing", "/m"], []), null);
});

Deno.test({
  name:
    "passableBy() as root: the owner's, the group's or others' x bit, whichever class the uid is in",
  ignore: !isRoot,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const d = `${dir}/d`;
      await Deno.mkdir(d);
      const check = async (mode: number, uid: number, gid: number) => {
        await Deno.chown(d, uid, gid);
        await Deno.chmod(d, mode);
        return passableBy(ID, d);
      };
      assert.equal(await check(0o700, 0, 0), false);
      assert.equal(await check(0o701, 0, 0), true);
      assert.equal(await check(0o710, 0, ID.gid), true);
      // Its group's class decides, not others'.
      assert.equal(await check(0o701, 0, ID.gid), false);
      assert.equal(await check(0o100, ID.uid, 0), true);
      assert.equal(await check(0o011, ID.uid, ID.gid), false);
      await Deno.symlink(d, `${dir}/link`);
      assert.equal(passableBy(ID, `${dir}/link`), false);
      assert.equal(passableBy(ID, `${dir}/missing`), false);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("cleanDrop() takes only every uid and gid the target's, no group and no capability", () => {
  const status = (over: Record<string, string> = {}) =>
    Object.entries({
      "Uid:": "4242\t4242\t4242\t4242",
      "Gid:": "4343\t4343\t4343\t4343",
      "Groups:": "",
      "CapInh:": "0000000000000000",
      "CapPrm:": "0000000000000000",
      "CapEff:": "0000000000000000",
      "CapAmb:": "0000000000000000",
      ...over,
    }).map(([k, v]) => `${k} ${v}\n`).join("");
  assert.equal(cleanDrop(status(), ID), true);
  // A supplementary group kept (a setgroups() that failed), an inheritable capability kept.
  assert.equal(cleanDrop(status({ "Groups:": "0" }), ID), false);
  assert.equal(cleanDrop(status({ "CapInh:": "0000000000000001" }), ID), false);
  assert.equal(cleanDrop(status({ "CapAmb:": "0000000000000400" }), ID), false);
  assert.equal(cleanDrop(status({ "Uid:": "4242\t0\t4242\t4242" }), ID), false);
  assert.equal(cleanDrop(status({ "Gid:": "0\t0\t0\t0" }), ID), false);
  // A line missing (a kernel without ambient capabilities): not known clean.
  assert.equal(cleanDrop(status().replace(/CapAmb:.*\n/, ""), ID), false);
  assert.equal(cleanDrop("", ID), false);
});

/** Runs `fn` with an environment whose TMPDIR is a fresh directory of its own, removed after. */
async function inOwnTmp(fn: (tmpEnv: typeof env, tmp: string) => Promise<void>): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: "dvergr-holder-test-" });
  await Deno.chmod(tmp, 0o755);
  try {
    await fn((k) => k === "TMPDIR" ? tmp : env(k), tmp);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

/** `ps`'s pid and argv of every process whose argv names `text`. */
async function processesNaming(text: string): Promise<{ pid: number; args: string }[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stderr: "null" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((l) => l.trim().match(/^(\d+) (.*)$/))
    .filter((m): m is RegExpMatchArray =>
      m !== null && m[2].includes(text) && !m[2].startsWith("ps ")
    )
    .map((m) => ({ pid: Number(m[1]), args: m[2] }));
}

/** The holders of the stage mount point in `tmp`. */
async function holders(tmp: string): Promise<number[]> {
  return (await processesNaming(`dvergr-stage ${tmp}/dvergr-stage `)).map((p) => p.pid);
}

/** What the host's mount table has whose mount point names `text`. */
async function hostMounts(text: string): Promise<string[]> {
  const out = await new Deno.Command("cat", { args: ["/proc/self/mountinfo"] }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((l) => l.split(" ")[4]?.includes(text));
}

/** A sandboxed attempt that copies its task file to its answer: its status and message. */
async function attempt(tmpEnv: typeof env, mounts: string[] = []): Promise<string> {
  const { world, ctx } = await attemptInWorld("t", 20_000);
  try {
    const outcome = await commandCandidate(
      { name: "t", command: "cat /docs/a.md > /out/a", mounts },
      { isolation: "bwrap", env: tmpEnv },
    ).run(ctx);
    const captured = await world.capture(["/out"]);
    assert.equal(captured.files["/out/a"], outcome.status === "completed" ? "hello" : undefined);
    return `${outcome.status}${outcome.message ? `: ${outcome.message}` : ""}`;
  } finally {
    await world.remove();
  }
}

/** Whether process `pid` has ended (a zombie has: only its parent's wait is left). */
async function ended(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).output();
  const stat = new TextDecoder().decode(out.stdout).trim();
  return stat === "" || stat.startsWith("Z");
}

/** Waits until `check` holds (false if it still does not after `ms`: a minute by default). */
async function until(check: () => Promise<boolean>, ms = 60_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const gone = (pid: number) => until(() => ended(pid));

Deno.test({
  name: `held staging as root: attempts share one holder; nothing of it on the host${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      assert.deepEqual(await holders(tmp), []);
      assert.deepEqual(await Promise.all([attempt(tmpEnv), attempt(tmpEnv), attempt(tmpEnv)]), [
        "completed",
        "completed",
        "completed",
      ]);
      const [holder, ...more] = await holders(tmp);
      assert.ok(holder !== undefined && more.length === 0, "one holder");
      assert.equal(await attempt(tmpEnv), "completed");
      assert.deepEqual(await holders(tmp), [holder]);
      // Its mounts are in its namespace only; the mount point stays empty on the host, and its
      // fstab is gone.
      assert.deepEqual(await hostMounts(tmp), []);
      assert.deepEqual([...Deno.readDirSync(`${tmp}/dvergr-stage`)], []);
      assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), ["dvergr-stage"]);
    }),
});

Deno.test({
  name: `held staging as root: a new mount gets a new holder; a killed holder is replaced${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      assert.equal(await attempt(tmpEnv), "completed");
      const [first] = await holders(tmp);
      const mount = await Deno.makeTempDir({ prefix: "dvergr-holder-mount-" });
      try {
        await Deno.chmod(mount, 0o755);
        assert.equal(await attempt(tmpEnv, [mount]), "completed");
        // The last holder is let go once no attempt holds it.
        assert.ok(await gone(first), "the last holder ends");
        const [second, ...more] = await holders(tmp);
        assert.ok(second !== first && more.length === 0);
        Deno.kill(second, "SIGKILL");
        // An attempt given it before its end was seen does not start (a fault of the host);
        // the next gets a new holder.
        const afterKill = await attempt(tmpEnv, [mount]);
        assert.match(afterKill, /^completed$|^fault: Cannot start "t": the sandbox did not start/);
        assert.ok(await gone(second));
        assert.equal(await attempt(tmpEnv, [mount]), "completed");
        const [third] = await holders(tmp);
        assert.ok(third !== undefined && third !== second);
      } finally {
        await Deno.remove(mount, { recursive: true });
      }
    }),
});

Deno.test({
  name:
    `held staging as root: a mount point a temp cleaner removed under a holder gets a new one${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      assert.equal(await attempt(tmpEnv), "completed");
      const [first] = await holders(tmp);
      // Removed on the host, it is detached in the holder's namespace with its staging.
      await Deno.remove(`${tmp}/dvergr-stage`);
      assert.equal(await attempt(tmpEnv), "completed");
      assert.equal(await attempt(tmpEnv), "completed");
      const [second, ...more] = await holders(tmp);
      assert.ok(second !== undefined && second !== first && more.length === 0);
    }),
});

Deno.test({
  name: `held staging as root: a world the uid cannot be passed to stages on its own${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      // The worlds directory closed to others: its worlds are not reached through it.
      const parent = `${tmp}/worlds`;
      await Deno.mkdir(parent, { mode: 0o700 });
      const { world, ctx } = await attemptInWorld("t", 20_000);
      const own = await createWorld({ "/docs/a.md": "hello" }, { parent, mkdirs: ["/out"] });
      try {
        const outcome = await commandCandidate({ name: "t", command: "cat /docs/a.md > /out/a" }, {
          isolation: "bwrap",
          env: tmpEnv,
        }).run({ ...ctx, world: own.files, worldDir: own.dir });
        assert.equal(`${outcome.status} ${outcome.message ?? ""}`, "completed ");
        assert.equal((await own.capture(["/out"])).files["/out/a"], "hello");
        // No holder was needed for it.
        assert.deepEqual(await holders(tmp), []);
      } finally {
        await world.remove();
        await own.remove();
      }
    }),
});

/** The holder's programs as dvergr finds them. */
function holderPrograms() {
  const path = env("PATH") ?? "/usr/bin:/bin";
  return {
    setpriv: hostProgram("setpriv", path),
    unshare: hostProgram("unshare", path),
    mount: hostProgram("mount", path),
    umount: hostProgram("umount", path),
    mkdir: hostProgram("mkdir", path),
    nsenter: hostProgram("nsenter", path),
  };
}

/** What `argv` prints, its status and its error output. */
async function run(argv: string[]) {
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** The mount points of a mountinfo listing. */
const mountPoints = (mountinfo: string) =>
  mountinfo.trim().split("\n").map((line) => line.split(" ")[4]);

Deno.test({
  name:
    `held staging as root: a launch entering another namespace than the holder's fails in nsenter, before its program${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      const point = await stagePoint(tmpEnv);
      const held = await holdStage(
        point,
        [{ source: tmp, rw: false, recursive: false }],
        holderPrograms(),
        ["/usr", "/proc"],
      );
      assert.ok(typeof held !== "string", String(held));
      try {
        const inside = await run([...held.enter, "/bin/sh", "-c", "echo in"]);
        assert.equal(inside.stdout, "in\n");
        assert.equal(inside.code, 0);
        // As if the holder's pid were another process's now: the host's namespace.
        const pid = Number(held.enter[1].match(/\/proc\/(\d+)\//)![1]);
        const wrong = await run([
          ...held.enter.map((a) => a.replaceAll(`/proc/${pid}/`, `/proc/${Deno.pid}/`)),
          "/bin/sh",
          "-c",
          "echo in",
        ]);
        assert.notEqual(wrong.code, 0);
        assert.equal(wrong.stdout, "");
        assert.match(wrong.stderr, /nsenter: .*dvergr-stage\/dvergr-[0-9a-f]{32}/);
        // The token is in nsenter's argv alone: its program's cwd is the token's directory, and
        // nsenter left no descriptor of it open.
        const fds = await run([...held.enter, "/bin/sh", "-c", "ls /proc/self/fd; pwd"]);
        assert.equal(
          fds.stdout.trim().split("\n").pop(),
          `${point.dir}/${held.enter[2].split("/").pop()}`,
        );
        // The same descriptors as the program has started without nsenter: those this test's
        // process inherited (a tool shell's, a CI runner's) and `ls`'s own.
        const plain = await run(["/bin/sh", "-c", "ls /proc/self/fd"]);
        assert.deepEqual(
          fds.stdout.trim().split("\n").slice(0, -1).sort(),
          plain.stdout.trim().split("\n").sort(),
        );
      } finally {
        held.release();
      }
    }),
});

Deno.test({
  name:
    `held staging as root: nsenter drops to the sandbox's uid and gid itself, as setpriv would (no group, no capability)${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      const point = await stagePoint(tmpEnv);
      const roots = [{ source: tmp, rw: false, recursive: false }];
      const plain = await holdStage(point, roots, holderPrograms(), ["/usr", "/proc"]);
      assert.ok(typeof plain !== "string", String(plain));
      plain.release();
      // No drop asked: none offered.
      assert.equal(plain.enterAs, null);
      const held = await holdStage(point, roots, holderPrograms(), ["/usr", "/proc"], ID);
      assert.ok(typeof held !== "string", String(held));
      try {
        assert.ok(held.enterAs, "the drop is clean on this host");
        const creds = await run([
          ...held.enterAs,
          "/bin/sh",
          "-c",
          "grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapAmb):' /proc/self/status; pwd",
        ]);
        assert.equal(creds.code, 0, creds.stderr);
        assert.match(creds.stdout, /^Uid:\s+4242\s+4242\s+4242\s+4242$/m);
        assert.match(creds.stdout, /^Gid:\s+4343\s+4343\s+4343\s+4343$/m);
        assert.match(creds.stdout, /^Groups:\s*$/m);
        for (const set of ["CapInh", "CapPrm", "CapEff", "CapAmb"]) {
          assert.match(creds.stdout, new RegExp(`^${set}:\\s+0+$`, "m"), set);
        }
        // In the holder's namespace, at its token, as `enter` is.
        assert.equal(creds.stdout.trim().split("\n").pop(), held.enter[2].split("/root").pop());
      } finally {
        held.release();
      }
    }),
});

Deno.test({
  name:
    `held staging as root: a dvergr with inheritable capabilities keeps setpriv's drop (nsenter would keep them)${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (_tmpEnv, tmp) => {
      const script = `${tmp}/hold.ts`;
      const here = new URL("../../../../", import.meta.url).pathname;
      await Deno.writeTextFile(
        script,
        `import { holdStage } from "${here}adapters/candidates/command/stage_holder.ts";
import { stagePoint } from "${here}adapters/candidates/command/host_identity.ts";
const programs = ${JSON.stringify(holderPrograms())};
const point = await stagePoint((k) => k === "TMPDIR" ? ${JSON.stringify(tmp)} : Deno.env.get(k));
const roots = [{ source: ${JSON.stringify(tmp)}, rw: false, recursive: false }];
const held = await holdStage(point, roots, programs, ["/usr", "/proc"], ${JSON.stringify(ID)});
if (typeof held === "string") throw new Error(held);
console.log(held.enterAs === null ? "setpriv" : "nsenter");
held.release();
`,
      );
      const as = async (inh: string[]) => {
        const out = await new Deno.Command(holderPrograms().setpriv, {
          args: [...inh, "--", Deno.execPath(), "run", "--allow-all", script],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.ok(out.success, new TextDecoder().decode(out.stderr));
        return new TextDecoder().decode(out.stdout).trim();
      };
      assert.equal(await as(["--inh-caps=+chown"]), "setpriv");
      assert.equal(await as(["--inh-caps=-all"]), "nsenter");
    }),
});

Deno.test({
  name:
    `held staging as root: the holder's namespace keeps only the mounts that hold or lie under what the attempts reach${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      const point = await stagePoint(tmpEnv);
      const reached = ["/usr", "/proc", "/dev/null"];
      const held = await holdStage(
        point,
        [{ source: tmp, rw: false, recursive: false }],
        holderPrograms(),
        reached,
      );
      assert.ok(typeof held !== "string", String(held));
      try {
        const kept = (m: string) =>
          [point.dir, ...reached].some((p) =>
            `${p}/`.startsWith(`${m === "/" ? "" : m}/`) ||
            m.startsWith(`${p}/`)
          ) || m.includes("\\");
        const host = mountPoints((await run(["/bin/cat", "/proc/self/mountinfo"])).stdout);
        const inside = mountPoints(
          (await run([...held.enter, "/bin/cat", "/proc/self/mountinfo"])).stdout,
        );
        assert.deepEqual(inside.filter((m) => !kept(m)), []);
        // What the attempts reach is all there: the host's mounts that hold it, and the staging.
        for (const m of host.filter(kept)) assert.ok(inside.includes(m), `${m} is kept`);
        assert.ok(inside.includes(point.dir) && inside.includes(held.at(tmp)));
        // This host's other mounts (/sys, /dev/pts… where it has them) are not.
        for (const m of host.filter((m) => !kept(m))) assert.ok(!inside.includes(m), `${m} goes`);
      } finally {
        held.release();
      }
    }),
});

Deno.test({
  name:
    `held staging as root: a holder that cannot stage says why; after three, none is tried${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv, tmp) => {
      const point = await stagePoint(tmpEnv);
      const programs = { ...holderPrograms(), mount: `${tmp}/mount` };
      await Deno.writeTextFile(
        programs.mount,
        "#!/bin/sh\necho 'mount: no such root' >&2\nexit 32\n",
      );
      await Deno.chmod(programs.mount, 0o755);
      const roots = [{ source: tmp, rw: false, recursive: false }];
      for (let i = 0; i < 3; i++) {
        assert.equal(
          await holdStage(point, roots, programs, []),
          "its staging holder did not start: mount: no such root",
        );
      }
      assert.equal(
        await holdStage(point, roots, programs, []),
        "its staging holder failed to start before",
      );
      assert.deepEqual(await holders(tmp), []);
      // Its fstab is removed all the same.
      assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name).sort(), [
        "dvergr-stage",
        "mount",
      ]);
    }),
});

Deno.test({
  name: `held staging as root: dvergr killed mid-attempt leaves no holder, sandbox or mount${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (_tmpEnv, tmp) => {
      const script = `${tmp}/run.ts`;
      const here = new URL("../../../../", import.meta.url).pathname;
      await Deno.writeTextFile(
        script,
        `import { commandCandidate } from "${here}adapters/candidates/command/command.ts";
import { attemptInWorld } from "${here}tests/helpers/attempt_world.ts";
const { ctx } = await attemptInWorld("t", 600_000);
await commandCandidate({ name: "t", command: "echo started >&2; sleep 613" }, {
  isolation: "bwrap",
  env: (k) => Deno.env.get(k),
}).run(ctx);
`,
      );
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", script],
        // Its world, pack and stage in the test's own temp dir.
        env: { TMPDIR: tmp },
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      // Its sandbox runs once the candidate's sleep does.
      assert.ok(await until(async () => (await processesNaming("sleep 613")).length > 0));
      const [holder] = await holders(tmp);
      assert.ok(holder !== undefined, "a holder while the attempt runs");
      const sandbox = (await processesNaming("sleep 613")).map((p) => p.pid);
      assert.ok(sandbox.length > 0);
      assert.ok((await holders(tmp)).length === 1);
      child.kill("SIGKILL");
      await child.status;
      assert.ok(await gone(holder), "the holder ends with dvergr");
      for (const pid of sandbox) assert.ok(await gone(pid), "the sandbox ends with dvergr");
      assert.deepEqual(await hostMounts(tmp), []);
      assert.deepEqual([...Deno.readDirSync(`${tmp}/dvergr-stage`)], []);
    }),
});
