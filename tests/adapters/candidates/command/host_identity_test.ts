import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import {
  DEFAULT_SANDBOX_HOST_ID,
  openStage,
  sandboxHostIdentity,
  stagedBwrapArgv,
} from "../../../../adapters/candidates/command/host_identity.ts";
import type { DvergrError } from "../../../../core/errors.ts";

const env = (k: string) => Deno.env.get(k);
const isRoot = Deno.uid() === 0;
const hasBwrap = await detectBwrap(env);
const SYSTEM = ["/usr", "/etc"];

Deno.test("stagedBwrapArgv() stages every bind source but the system's, then drops to the uid", () => {
  const argv = stagedBwrapArgv(
    { uid: 4242, gid: 4343 },
    { pid: 777, dir: "/tmp/a5" },
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
  );
  const at = argv.indexOf("setpriv");
  assert.deepEqual(argv.slice(0, 9), [
    "nsenter",
    "--target=777",
    "--mount",
    "--root",
    "--wd",
    "--",
    "/bin/sh",
    "-c",
    argv[8],
  ]);
  // The attempt's directory, how many sources, each read-only or not with its path.
  assert.deepEqual(argv.slice(9, at), [
    "dvergr-stage",
    "/tmp/a5",
    "2",
    "ro",
    "/root/agents",
    "rw",
    "/tmp/attempt/capture-1",
  ]);
  assert.deepEqual(argv.slice(at, at + 8), [
    "setpriv",
    "--reuid=4242",
    "--regid=4343",
    "--clear-groups",
    "--inh-caps=-all",
    "--pdeathsig=KILL",
    "--",
    "bwrap",
  ]);
  assert.deepEqual(argv.slice(at + 8), [
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
    "/tmp/a5/0",
    "/root/agents",
    "--size",
    "9",
    "--tmpfs",
    "/out",
    "--bind",
    "/tmp/a5/1",
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
    "openStage() as root: attempts share one staging namespace, each its own directory there, removed when it closes",
  ignore: !isRoot || !hasBwrap,
  async fn() {
    const a = await openStage();
    const b = await openStage();
    assert.equal(a.pid, b.pid);
    assert.notEqual(a.dir, b.dir);
    const list = async (pid: number, dir: string) => {
      const out = await new Deno.Command("nsenter", {
        args: [`--target=${pid}`, "--mount", "--root", "--wd", "--", "ls", "-A", dir],
        stderr: "null",
      }).output();
      return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
    };
    const root = a.dir.slice(0, a.dir.lastIndexOf("/"));
    // Nothing of the staging is on the host: its directory there stays empty.
    assert.deepEqual([...Deno.readDirSync(root)], []);
    // The attempt's directory is made by its launch: none yet.
    assert.deepEqual(await list(a.pid, root), []);
    const made = await new Deno.Command("nsenter", {
      args: [`--target=${a.pid}`, "--mount", "--root", "--wd", "--", "mkdir", a.dir],
    }).output();
    assert.ok(made.success);
    assert.deepEqual(await list(a.pid, root), [a.dir.slice(root.length + 1)]);
    await a.close();
    await b.close();
    assert.deepEqual(await list(a.pid, root), []);
  },
});
