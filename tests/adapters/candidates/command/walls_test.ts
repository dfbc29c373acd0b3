/**
 * The sandbox's walls hold whoever runs dvergr: the probe (tests/helpers/walls_probe.ts) runs
 * a command candidate that tries to get past them, once as the user running the tests (root
 * on CI) and, when that is root, once more as an unprivileged user.
 */
import assert from "node:assert/strict";
import { DVERGR_PERMISSIONS } from "../../../../core/permissions.ts";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import { sandboxHostIdentity } from "../../../../adapters/candidates/command/host_identity.ts";

const env = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(env);
const isRoot = Deno.uid() === 0;
const repo = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const NOBODY = "65534";

function asNobody(argv: string[]): string[] {
  return ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...argv];
}

/** The repository as `nobody` can read it: itself, or a copy of what the probe imports. */
async function readableRepo(tmp: string): Promise<string> {
  const probe = await new Deno.Command("setpriv", {
    args: [...asNobody(["test", "-r", join(repo, "deno.json")]).slice(1)],
  }).output();
  if (probe.success) return repo;
  const copy = join(tmp, "repo");
  await Deno.mkdir(join(copy, "tests"), { recursive: true });
  for (
    const part of ["core", "adapters", "tests/helpers", "deno.json", "deno.lock", "node_modules"]
  ) {
    const out = await new Deno.Command("cp", {
      args: ["-a", join(repo, part), join(copy, part)],
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
  }
  return copy;
}

/**
 * The host's view of the candidate's held process (its Uid, Gid and Groups lines of
 * /proc/PID/status), looked for until it shows or the probe ends; then lets it go.
 */
async function hostView(mount: string, probe: Promise<unknown>): Promise<string> {
  let ended = false;
  probe.finally(() => ended = true);
  let seen = "";
  for (let i = 0; i < 1200 && !ended && seen === ""; i++) {
    const out = await new Deno.Command("/bin/sh", {
      args: [
        "-c",
        'for p in /proc/[0-9]*; do [ "$p" = /proc/$$ ] && continue\n' +
        '  case "$(tr "\\0" " " < "$p/cmdline" 2>/dev/null)" in\n' +
        '    *"$1"*) grep -E "^(Uid|Gid|Groups):" "$p/status"; exit 0;;\n' +
        "  esac\ndone\nexit 1",
        "dvergr-walls-scan",
        "dvergr-wall-hold " + mount,
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (out.success) seen = new TextDecoder().decode(out.stdout);
    else await new Promise((r) => setTimeout(r, 50));
  }
  await Deno.writeTextFile(join(mount, "release"), "");
  return seen;
}

interface Probe {
  status: string;
  message: string | null;
  sandbox: Record<string, unknown> | null;
  files: Record<string, string>;
}

async function probe(
  user: "self" | "nobody",
): Promise<
  { found: Map<string, string>; probe: Probe; mount: string; hidden: string[]; host: string }
> {
  const tmp = await Deno.makeTempDir({ prefix: "dvergr-walls-" });
  try {
    await Deno.chmod(tmp, 0o755);
    const mount = join(tmp, "mounted");
    await Deno.mkdir(mount);
    await Deno.writeTextFile(join(mount, "kept.txt"), "host file");
    // A file only the host's root may read, where the sandbox sees it.
    await Deno.writeTextFile(join(mount, "secret.txt"), "root only", { mode: 0o600 });
    await Deno.chmod(join(mount, "secret.txt"), 0o600);
    await Deno.chmod(mount, 0o777);
    // What a benchmark keeps outside the sandbox: a bundle's gold and checker, the home.
    const gold = join(tmp, "gold.edn");
    await Deno.writeTextFile(gold, '{:word "w1"}');
    let dir = repo;
    const vars: Record<string, string> = {};
    if (user === "nobody") {
      dir = await readableRepo(tmp);
      const denoDir = join(tmp, "deno-dir");
      const home = join(tmp, "home");
      for (const d of [denoDir, home]) {
        await Deno.mkdir(d);
        await Deno.chown(d, Number(NOBODY), Number(NOBODY));
      }
      Object.assign(vars, { DENO_DIR: denoDir, HOME: home, TMPDIR: home });
    }
    const hidden = [gold, join(dir, "deno.json"), join(dir, "tests/helpers/dataset_bundle.ts")];
    const deno = [
      Deno.execPath(),
      "run",
      "--cached-only",
      ...DVERGR_PERMISSIONS,
      join(dir, "tests/helpers/walls_probe.ts"),
      mount,
      ...hidden,
    ];
    // Under umask 077 the world's files are its owner's alone: the candidate reads them all
    // the same (as root dvergr opens them to others; as nobody they are the candidate's own).
    // dvergr starts holding the host's / on descriptors 7 and 47, not close-on-exec (as a CI
    // runner or a shell may leave them): the candidate must not get them (bash opens 47).
    const umask077 = [
      "/bin/bash",
      "-c",
      'umask 077; exec 7</ 47</; exec "$@"',
      "dvergr-walls",
      ...deno,
    ];
    const argv = user === "nobody" ? asNobody(umask077) : umask077;
    const running = new Deno.Command(argv[0], {
      args: argv.slice(1),
      cwd: tmp,
      env: vars,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const host = await hostView(mount, running);
    const out = await running;
    const stderr = new TextDecoder().decode(out.stderr);
    assert(out.success, `the probe failed as ${user}: ${stderr}`);
    const result = JSON.parse(new TextDecoder().decode(out.stdout)) as Probe;
    const found = new Map<string, string>();
    for (const line of (result.files["/out/probe.txt"] ?? "").split("\n")) {
      const m = line.match(/^([^=:]+(?::[^=]*)?)[=:](.*)$/);
      if (m) found.set(m[1], m[2]);
    }
    // Nothing the sandbox tried reached the host's files.
    assert.deepEqual([...Deno.readDirSync(mount)].map((e) => e.name).sort(), [
      "kept.txt",
      "release",
      "secret.txt",
    ]);
    return { found, probe: result, mount, hidden, host };
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

function assertWalls(user: string, r: Awaited<ReturnType<typeof probe>>) {
  const { found } = r;
  assert.equal(r.probe.status, "completed", `${user}: ${r.probe.message}`);
  const said = (k: string) => found.get(k);
  assert.equal(said("CapEff"), "0000000000000000", `${user}: effective capabilities`);
  assert.equal(said("CapPrm"), "0000000000000000", `${user}: permitted capabilities`);
  assert.equal(said("CapBnd"), "0000000000000000", `${user}: bounding set`);
  assert.equal(said("CapInh"), "0000000000000000", `${user}: inheritable capabilities`);
  assert.equal(said("CapAmb"), "0000000000000000", `${user}: ambient capabilities`);
  assert.equal(said("NoNewPrivs"), "1", `${user}: no_new_privs`);
  assert.notEqual(said("uid"), "0", `${user}: the candidate runs as root`);
  if (Deno.build.arch === "x86_64") assert.equal(said("Seccomp"), "2", `${user}: seccomp filter`);
  for (const d of ["/docs", "/etc", "/usr", r.mount]) {
    assert.equal(said(`remount:${d}`), "refused", `${user}: remounting ${d} read-write`);
    assert.equal(said(`write:${d}`), "refused", `${user}: writing ${d}`);
  }
  const refused = [
    "mount-tmpfs",
    "ptrace-supervisor",
    "chroot",
    "unshare-user",
    "unshare-root",
    "unshare-mount",
    "setns",
    "write-proc-root",
    "write-proc-sys",
    "mknod-device",
    "regain-caps",
    "open_by_handle_at",
    "keyctl",
    "add_key",
    "io_uring",
    "fsopen",
    "bpf",
    "perf",
  ];
  for (const k of refused) assert.equal(said(k), "refused", `${user}: ${k}`);
  // A setuid-root program runs with the candidate's uid (no_new_privs, and root is not mapped).
  for (const [k, v] of found) {
    if (k.startsWith("setuid:")) assert.equal(v, said("uid"), `${user}: ${k}`);
  }
  for (const p of r.hidden) assert.equal(said(`see:${p}`), "refused", `${user}: sees ${p}`);
  for (const n of [7, 47]) {
    assert.equal(said(`inherited-fd:${n}`), "refused", `${user}: holds dvergr's descriptor ${n}`);
  }
  assert.equal(said("write-out"), "allowed", `${user}: the capture directory is writable`);
  assert.equal(said("read-world"), "allowed", `${user}: reads the world made under umask 077`);
  assert.equal(r.probe.files["/out/written.txt"], "ok\n");
  assert.equal(r.probe.sandbox?.capabilities, "none");
  // On the host the candidate is an unprivileged uid: the sandbox's own when dvergr is root.
  const hostUid = user === "nobody" ? 65534 : sandboxHostIdentity(env)?.uid ?? Deno.uid();
  assert.equal(r.probe.sandbox?.hostUid, hostUid, `${user}: the evidence's host uid`);
  assert.match(
    r.host,
    new RegExp(`^Uid:\\s+${hostUid}\\s+${hostUid}\\s+${hostUid}\\s+${hostUid}$`, "m"),
  );
  assert.match(
    r.host,
    new RegExp(`^Gid:\\s+${hostUid}\\s+${hostUid}\\s+${hostUid}\\s+${hostUid}$`, "m"),
  );
  assert.match(r.host, /^Groups:\s*$/m, `${user}: supplementary groups`);
  assert.equal(said("released"), "yes", `${user}: the held process was let go`);
  if (isRoot) {
    // Root's files are not the candidate's: root is not mapped into its user namespace.
    if (user !== "nobody") assert.notEqual(said("world-owner"), said("uid"), `${user}: owner`);
    assert.equal(said("read-secret"), "refused", `${user}: reads a 0600 file of root`);
  }
}

Deno.test({
  name: "commandCandidate() [bwrap] drops every capability and walls the candidate in",
  ignore: !hasBwrap,
  async fn() {
    assertWalls(isRoot ? "root" : "this user", await probe("self"));
  },
});

Deno.test({
  name: "commandCandidate() [bwrap] holds the same walls when dvergr runs as an unprivileged user",
  ignore: !hasBwrap || !isRoot,
  async fn() {
    assertWalls("nobody", await probe("nobody"));
  },
});
