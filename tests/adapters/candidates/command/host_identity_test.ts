import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import {
  DEFAULT_SANDBOX_HOST_ID,
  sandboxHostIdentity,
  stagedBwrap,
  stageDir,
} from "../../../../adapters/candidates/command/host_identity.ts";
import type { DvergrError } from "../../../../core/errors.ts";

const env = (k: string) => Deno.env.get(k);
const isRoot = Deno.uid() === 0;
const hasBwrap = await detectBwrap(env);
const SYSTEM = ["/usr", "/etc"];

Deno.test("stagedBwrap() stages every bind source but the system's, then drops to the uid", () => {
  const kinds: Record<string, "dir" | "file"> = {
    "/root/agents": "dir",
    "/root/my agents\\x": "dir",
    "/tmp/attempt/capture-1": "file",
  };
  const staged = stagedBwrap(
    { uid: 4242, gid: 4343 },
    { dir: "/tmp/dvergr-stage", fstab: "/tmp/attempt/capture-1.fstab" },
    [
      "--ro-bind",
      "/usr",
      "/usr",
      "--symlink",
      "--bind",
      "/bin",
      "--ro-bind-try",
      "/proc/sys",
      "/proc/sys",
      "--ro-bind",
      "/root/agents",
      "/root/agents",
      "--ro-bind-try",
      "/root/missing",
      "/m",
      "--ro-bind",
      "/root/my agents\\x",
      "/a",
      "--size",
      "9",
      "--tmpfs",
      "/out",
      "--bind",
      "/tmp/attempt/capture-1",
      "/.dvergr/capture.tar",
    ],
    ["/bin/sh", "-c", "x", "--bind", "/root/secret", "/s"],
    SYSTEM,
    (p) => kinds[p] ?? null,
  );
  // One tmpfs over the stage, then each directory source (escaped), read-only unless written.
  assert.equal(
    staged.fstab,
    "dvergr-stage /tmp/dvergr-stage tmpfs size=64k,mode=0755 0 0\n" +
      "/root/agents /tmp/dvergr-stage/0 none rbind,ro,X-mount.mkdir 0 0\n" +
      "/root/my\\040agents\\134x /tmp/dvergr-stage/2 none rbind,ro,X-mount.mkdir 0 0\n",
  );
  // A file source is bound on a file the script makes; a missing one is left out.
  assert.equal(
    staged.script,
    "mount -a -T '/tmp/attempt/capture-1.fstab' || exit 125\n" +
      ": > '/tmp/dvergr-stage/3' && mount --bind -- '/tmp/attempt/capture-1' " +
      "'/tmp/dvergr-stage/3' || exit 125",
  );
  const argv = staged.argv;
  assert.deepEqual(argv.slice(0, 8), [
    "setpriv",
    "--reuid=4242",
    "--regid=4343",
    "--clear-groups",
    "--inh-caps=-all",
    "--pdeathsig=KILL",
    "--",
    "bwrap",
  ]);
  assert.deepEqual(argv.slice(8), [
    "--ro-bind",
    "/usr",
    "/usr",
    // An option's argument that reads like an option is left alone.
    "--symlink",
    "--bind",
    "/bin",
    "--ro-bind-try",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind",
    "/tmp/dvergr-stage/0",
    "/root/agents",
    "--ro-bind-try",
    "/tmp/dvergr-stage/1",
    "/m",
    "--ro-bind",
    "/tmp/dvergr-stage/2",
    "/a",
    "--size",
    "9",
    "--tmpfs",
    "/out",
    "--bind",
    "/tmp/dvergr-stage/3",
    "/.dvergr/capture.tar",
    // The command's own arguments are never rewritten.
    "/bin/sh",
    "-c",
    "x",
    "--bind",
    "/root/secret",
    "/s",
  ]);
});

Deno.test("stagedBwrap() stages a file of the attempt's own directory by binding the directory: no mount process", () => {
  const kinds: Record<string, "dir" | "file"> = {
    "/w/attempt-1/capture.tar": "file",
    "/w/attempt-1/other": "file",
    "/w/pack": "file",
    "/w/bin": "dir",
  };
  const staged = stagedBwrap(
    { uid: 4242, gid: 4343 },
    { dir: "/tmp/dvergr-stage", fstab: "/w/attempt-1/fstab", own: "/w/attempt-1" },
    [
      "--bind",
      "/w/attempt-1/capture.tar",
      "/.dvergr/capture.tar",
      "--ro-bind",
      "/w/bin",
      "/.dvergr/bin",
      "--ro-bind",
      "/w/attempt-1/other",
      "/o",
      "--ro-bind",
      "/w/pack",
      "/p",
    ],
    ["/bin/sh"],
    SYSTEM,
    (p) => kinds[p] ?? null,
  );
  // The own directory once (read-write: bwrap binds its files, read-only where asked).
  assert.equal(
    staged.fstab,
    "dvergr-stage /tmp/dvergr-stage tmpfs size=64k,mode=0755 0 0\n" +
      "/w/attempt-1 /tmp/dvergr-stage/0 none rbind,X-mount.mkdir 0 0\n" +
      "/w/bin /tmp/dvergr-stage/1 none rbind,ro,X-mount.mkdir 0 0\n",
  );
  // A file elsewhere still gets a mount of its own.
  assert.equal(
    staged.script,
    "mount -a -T '/w/attempt-1/fstab' || exit 125\n" +
      ": > '/tmp/dvergr-stage/2' && mount --bind -o ro -- '/w/pack' '/tmp/dvergr-stage/2' || exit 125",
  );
  assert.deepEqual(staged.argv.slice(8), [
    "--bind",
    "/tmp/dvergr-stage/0/capture.tar",
    "/.dvergr/capture.tar",
    "--ro-bind",
    "/tmp/dvergr-stage/1",
    "/.dvergr/bin",
    "--ro-bind",
    "/tmp/dvergr-stage/0/other",
    "/o",
    "--ro-bind",
    "/tmp/dvergr-stage/2",
    "/p",
    "/bin/sh",
  ]);
});

Deno.test({
  name:
    "sandboxHostIdentity() as root: a uid of its own, set by DVERGR_SANDBOX_HOST_UID/GID, never 0",
  ignore: !isRoot,
  fn() {
    const vars = (v: Record<string, string>) => (k: string) => v[k];
    assert.deepEqual(sandboxHostIdentity(vars({})), {
      uid: DEFAULT_SANDBOX_HOST_ID,
      gid: DEFAULT_SANDBOX_HOST_ID,
    });
    assert.deepEqual(sandboxHostIdentity(vars({ DVERGR_SANDBOX_HOST_UID: "61000" })), {
      uid: 61000,
      gid: 61000,
    });
    assert.deepEqual(
      sandboxHostIdentity(
        vars({ DVERGR_SANDBOX_HOST_UID: "61000", DVERGR_SANDBOX_HOST_GID: "62000" }),
      ),
      { uid: 61000, gid: 62000 },
    );
    for (const bad of ["0", "00"]) {
      assert.throws(() => sandboxHostIdentity(vars({ DVERGR_SANDBOX_HOST_UID: bad })), (e) => {
        assert.equal((e as DvergrError).code, "USAGE");
        assert.match((e as Error).message, /is 0: the sandbox would run as the host's root/);
        return true;
      });
    }
    assert.throws(() => sandboxHostIdentity(vars({ DVERGR_SANDBOX_HOST_GID: "0" })), /is 0/);
    for (const bad of ["-5", "nobody", "1e9", "4294967295"]) {
      assert.throws(
        () => sandboxHostIdentity(vars({ DVERGR_SANDBOX_HOST_UID: bad })),
        /is not a uid\/gid/,
      );
    }
  },
});

Deno.test({
  name: "sandboxHostIdentity() is null when dvergr is not root: bwrap runs as the user",
  ignore: isRoot,
  fn() {
    assert.equal(sandboxHostIdentity(() => "0"), null);
  },
});

Deno.test({
  name: "commandCandidate().preflight() as root refuses a mount the sandbox's uid cannot read",
  ignore: !isRoot || !hasBwrap,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.chmod(dir, 0o700);
      const cand = (e: (k: string) => string | undefined) =>
        commandCandidate({ name: "t", command: "true", mounts: [dir] }, {
          isolation: "bwrap",
          env: e,
        });
      await assert.rejects(() => cand(env).preflight!(), (e: Error) => {
        assert.equal((e as DvergrError).code, "CANDIDATE_INVALID");
        assert.match(e.message, /its mount ".*" \(mode 0700\) is not readable by the sandbox/);
        assert.match((e as DvergrError).hint ?? "", /chmod o\+rx/);
        return true;
      });
      await Deno.chmod(dir, 0o755);
      await cand(env).preflight!();
      // A program only its owner may run is not the sandbox's to run.
      await Deno.writeTextFile(`${dir}/agent`, "#!/bin/sh\necho hi\n", { mode: 0o700 });
      await Deno.chmod(`${dir}/agent`, 0o700);
      const agent = commandCandidate({ name: "t", command: `${dir}/agent`, mounts: [dir] }, {
        isolation: "bwrap",
        env,
      });
      await assert.rejects(() => agent.preflight!(), (e: Error) => {
        assert.match(e.message, /its program ".*\/agent" is not executable in the sandbox/);
        assert.match((e as DvergrError).hint ?? "", /executable by all \(chmod o\+rx\)/);
        return true;
      });
      await Deno.chmod(`${dir}/agent`, 0o755);
      await agent.preflight!();
      await assert.rejects(
        () => cand((k) => k === "DVERGR_SANDBOX_HOST_UID" ? "0" : env(k)).preflight!(),
        /DVERGR_SANDBOX_HOST_UID is 0/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "stageDir() as root: one root-owned 0755 mount point, made again when removed, refused when it is not root's",
  ignore: !isRoot,
  async fn() {
    const tmp = await Deno.makeTempDir();
    // The environment's TMPDIR, not the process's: test modules running beside share that.
    const tmpEnv = (k: string) => k === "TMPDIR" ? tmp : Deno.env.get(k);
    try {
      const dir = await stageDir(tmpEnv);
      assert.equal(dir, `${tmp}/dvergr-stage`);
      const info = await Deno.lstat(dir);
      assert.equal(info.uid, 0);
      assert.equal((info.mode ?? 0) & 0o7777, 0o755);
      assert.deepEqual([...Deno.readDirSync(dir)], []);
      await Deno.remove(dir);
      assert.equal(await stageDir(tmpEnv), dir);
      assert.ok((await Deno.lstat(dir)).isDirectory);
      await Deno.remove(dir);
      await Deno.mkdir(dir);
      await Deno.chown(dir, 65534, 65534);
      await assert.rejects(() => stageDir(tmpEnv), /is not a directory of root's \(uid 65534\)/);
      await Deno.remove(dir);
      await Deno.symlink("/etc", dir);
      await assert.rejects(() => stageDir(tmpEnv), /is not a directory of root's/);
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  },
});

Deno.test("stagedBwrap() runs setpriv, bwrap and mount at the paths it is given", () => {
  const staged = stagedBwrap(
    { uid: 4242, gid: 4343 },
    { dir: "/tmp/dvergr-stage", fstab: "/tmp/attempt/fstab" },
    ["--ro-bind", "/usr", "/usr", "--bind", "/root/capture", "/c"],
    ["/bin/sh"],
    SYSTEM,
    () => "file",
    { setpriv: "/usr/bin/setpriv", bwrap: "/usr/local/bin/bwrap", mount: "/usr/bin/mount" },
  );
  assert.equal(staged.argv[0], "/usr/bin/setpriv");
  assert.equal(staged.argv[staged.argv.indexOf("--") + 1], "/usr/local/bin/bwrap");
  // The root shell looks up no program on the attempt's PATH.
  assert.equal(
    staged.script,
    "'/usr/bin/mount' -a -T '/tmp/attempt/fstab' || exit 125\n" +
      ": > '/tmp/dvergr-stage/0' && '/usr/bin/mount' --bind -- '/root/capture' " +
      "'/tmp/dvergr-stage/0' || exit 125",
  );
});
