/**
 * Resource bombs inside the sandbox: memory, bytes written under the world, processes and
 * open files are bounded by the kernel, and going over one ends the attempt as failed with
 * the limit named; no process of an attempt outlives it.
 */
import assert from "node:assert/strict";
import {
  commandCandidate,
  detectBwrap,
  type GatewayFactory,
  type Isolation,
} from "../../../../adapters/candidates/command/command.ts";
import { commandGateway } from "../../../../adapters/gateway/command_gateway.ts";
import {
  DEFAULT_LIMITS,
  NPROC_HEADROOM,
  NUL64_LINE,
  ONE_END,
  ONE_MAGIC,
  PACK_NO_ROOM,
  packRoots,
  printfNuls,
  readBackWorld,
  type ResourceLimits,
  rlimitArgv,
  rlimitLines,
  sandboxWorldArgs,
  sealArgs,
  superviseArgv,
  SUPERVISOR,
  SUPERVISOR_BIN,
  writableTopLevel,
} from "../../../../adapters/candidates/command/limits.ts";
import type { CandidateOutcome } from "../../../../core/bench/candidate.ts";
import { attemptInWorld } from "../../../helpers/attempt_world.ts";

const env = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(env);
const MIB = 1024 * 1024;

interface LimitEvidence {
  limits: { enforcedBy: Record<string, string>; exceeded: string[] };
  readBack?: { files: number; skipped: { path: string; reason: string }[] };
}

async function attempt(
  command: string,
  isolation: Isolation,
  limits: Partial<ResourceLimits>,
  timeoutMs = 20_000,
  more: { bwrapExtra?: string[]; gateway?: GatewayFactory } = {},
) {
  const { world, ctx } = await attemptInWorld("bomb", timeoutMs);
  const cand = commandCandidate({ name: "bomb", command, bwrapExtra: more.bwrapExtra }, {
    isolation,
    env,
    killGraceMs: 200,
    limits: { ...DEFAULT_LIMITS, ...limits },
    gateway: more.gateway,
  });
  const outcome = await cand.run(ctx);
  const captured = await world.capture(["/out"]);
  return { outcome, captured, world, ev: outcome.evidence as unknown as LimitEvidence };
}

function cgroupEnforces(ev: LimitEvidence, what: "memory" | "processes"): boolean {
  return ev.limits.enforcedBy[what].startsWith("cgroup");
}

Deno.test("rlimitLines() bounds open files, file size and core dumps; rlimitArgv() memory and processes without a cgroup", async () => {
  const l = { memoryBytes: 64 * MIB, worldBytes: 8 * MIB, processes: 16, openFiles: 32 };
  assert.deepEqual(rlimitArgv(l, { cgroup: false }), [
    "prlimit",
    `--data=${64 * MIB}:${64 * MIB}`,
    `--nproc=${16 + NPROC_HEADROOM}:${16 + NPROC_HEADROOM}`,
    "--",
  ]);
  assert.equal(rlimitArgv(l, { cgroup: true }), null);
  // The shell that runs the lines, and what it execs, hold the limits, soft and hard.
  const limitsOf = async (lines: string) => {
    const out = await new Deno.Command("/bin/sh", {
      args: ["-c", `${lines}\nexec cat /proc/self/limits`],
      stderr: "inherit",
    }).output();
    assert.ok(out.success);
    const text = new TextDecoder().decode(out.stdout);
    const row = (name: string) =>
      text.split("\n").find((r) => r.startsWith(name))!.slice(26).trim().split(/\s+/)
        .slice(0, 2);
    return { files: row("Max open files"), size: row("Max file size"), core: row("Max core") };
  };
  const unsupervised = await limitsOf(rlimitLines(l, { supervisedDirs: null }));
  assert.deepEqual(unsupervised.files, ["32", "32"]);
  assert.deepEqual(unsupervised.size, [String(8 * MIB), String(8 * MIB)]);
  assert.deepEqual(unsupervised.core, ["0", "0"]);
  const supervised = await limitsOf(rlimitLines(l, { supervisedDirs: 1 }));
  assert.deepEqual(supervised.size, [
    String(2 * 8 * MIB + 64 * MIB),
    String(2 * 8 * MIB + 64 * MIB),
  ]);
});

Deno.test("sandboxWorldArgs() makes writable directories sized tmpfs mounts and the rest read-only", () => {
  assert.deepEqual(writableTopLevel(["/out", "/out/sub", "/work/x"]), ["out", "work"]);
  const args = sandboxWorldArgs(
    "/w",
    [{ name: "docs", isSymlink: false }, { name: "out", isSymlink: false }, {
      name: "l",
      isSymlink: true,
    }],
    ["out"],
    { ...DEFAULT_LIMITS, worldBytes: MIB },
    "/cap",
  );
  assert.deepEqual(args, [
    "--ro-bind",
    "/w/docs",
    "/docs",
    "--ro-bind",
    "/w/out",
    "/.dvergr/seed/out",
    "--size",
    String(MIB),
    "--tmpfs",
    "/out",
    "--size",
    String(MIB),
    "--tmpfs",
    "/.dvergr/run",
    "--bind",
    "/cap",
    "/.dvergr/capture.tar",
  ]);
  // An empty writable directory has nothing to seed: its tmpfs only.
  const empty = sandboxWorldArgs(
    "/w",
    [{ name: "out", isSymlink: false, empty: true }],
    ["out"],
    { ...DEFAULT_LIMITS, worldBytes: MIB },
    "/cap",
  );
  assert.ok(!empty.some((a) => a.includes("seed")), empty.join(" "));
  assert.deepEqual(empty.slice(0, 4), ["--size", String(MIB), "--tmpfs", "/out"]);
});

Deno.test("readBackWorld() writes back only regular files under the writable directories", async () => {
  const src = await Deno.makeTempDir();
  await Deno.mkdir(`${src}/out/sub`, { recursive: true });
  await Deno.writeTextFile(`${src}/out/sub/a.txt`, "a");
  await Deno.writeTextFile(`${src}/out/x`, "evil");
  await Deno.writeTextFile(`${src}/out/y`, "evil");
  await Deno.symlink("/etc/passwd", `${src}/out/link`);
  await Deno.mkdir(`${src}/docs`);
  await Deno.writeTextFile(`${src}/docs/forged.txt`, "not writable");
  const pack = `${src}.tar`;
  // Names a hostile pack could hold: leaving the world, outside the writable directories.
  const tar = await new Deno.Command("tar", {
    args: [
      "-C",
      src,
      "--format=posix",
      "--transform",
      "s,^out/x$,out/../../escaped,;s,^out/y$,/abs/y,",
      "-cPf",
      pack,
      "out",
      "docs",
    ],
  }).output();
  assert.ok(tar.success, new TextDecoder().decode(tar.stderr));
  const world = await Deno.makeTempDir();
  await Deno.mkdir(`${world}/out`);
  await Deno.writeTextFile(`${world}/out/mcp.txt`, "written through the world gateway");
  const back = await readBackWorld(world, ["out"], pack);
  assert.equal(back.files, 1);
  assert.equal(await Deno.readTextFile(`${world}/out/sub/a.txt`), "a");
  const reasons = Object.fromEntries(back.skipped.map((s) => [s.path, s.reason]));
  assert.equal(reasons["/out/link"], "symlink");
  assert.equal(reasons["/docs/forged.txt"], "outside");
  assert.equal(reasons["/out/../../escaped"], "outside");
  assert.equal(back.status, null); // no supervisor status in a forged pack
  const names: string[] = [];
  for await (const e of Deno.readDir(`${world}/out`)) names.push(e.name);
  assert.deepEqual(names.sort(), ["mcp.txt", "sub"]);
  await Deno.remove(src, { recursive: true });
  await Deno.remove(pack);
  await Deno.remove(world, { recursive: true });
});

Deno.test("readBackWorld() calls a pack cut inside a member's data or padding truncated", async () => {
  const src = await Deno.makeTempDir();
  await Deno.mkdir(`${src}/out`);
  await Deno.mkdir(`${src}/docs`);
  await Deno.writeTextFile(`${src}/out/a`, "a");
  await Deno.writeTextFile(`${src}/docs/b`, "b".repeat(1000));
  const pack = `${src}.tar`;
  // ustar: out/a's header at 0, its byte and padding at 512; docs/b's header at 1024, data at 1536.
  const tar = await new Deno.Command("tar", {
    args: ["-C", src, "--format=ustar", "-cf", pack, "out/a", "docs/b"],
  }).output();
  assert.ok(tar.success, new TextDecoder().decode(tar.stderr));
  const whole = await Deno.readFile(pack);
  for (const [cut, files] of [[1536 + 100, 1], [512 + 100, 0], [whole.length, 1]] as const) {
    await Deno.writeFile(pack, whole.subarray(0, cut));
    const world = await Deno.makeTempDir();
    const back = await readBackWorld(world, ["out"], pack);
    assert.equal(back.truncated, cut !== whole.length, `cut at ${cut}`);
    assert.equal(back.files, files, `cut at ${cut}`);
    await Deno.remove(world, { recursive: true });
  }
  await Deno.remove(src, { recursive: true });
  await Deno.remove(pack);
});

Deno.test("readBackWorld() gives the event loop turns while it writes back many files or a big one", async () => {
  const src = await Deno.makeTempDir();
  await Deno.mkdir(`${src}/out/many`, { recursive: true });
  for (let i = 0; i < 200; i++) await Deno.writeTextFile(`${src}/out/many/f${i}`, `${i}`);
  await Deno.writeFile(`${src}/out/big`, new Uint8Array(3 * 1024 * 1024).fill(7));
  for (const [what, members] of [["many", ["out/many"]], ["big", ["out/big"]]] as const) {
    const pack = `${src}-${what}.tar`;
    const tar = await new Deno.Command("tar", {
      args: ["-C", src, "--format=posix", "-cf", pack, ...members],
    }).output();
    assert.ok(tar.success, new TextDecoder().decode(tar.stderr));
    const world = await Deno.makeTempDir();
    // Timers of other attempts (their limits) run while the pack is read back, not after it.
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    const back = await readBackWorld(world, ["out"], pack).then((b) => ({ ...b, turns }));
    clearInterval(tick);
    assert.ok(back.turns > 0, `${what}: no timer ran while the pack was read back`);
    assert.equal(back.files, what === "many" ? 200 : 1);
    assert.equal(back.truncated, false);
    if (what === "big") assert.equal((await Deno.stat(`${world}/out/big`)).size, 3 * 1024 * 1024);
    else assert.equal(await Deno.readTextFile(`${world}/out/many/f199`), "199");
    await Deno.remove(world, { recursive: true });
    await Deno.remove(pack);
  }
  await Deno.remove(src, { recursive: true });
});

Deno.test("packRoots() packs the capture directories alone, in declared order, each once", () => {
  assert.deepEqual(packRoots(["/out"]), ["out"]);
  assert.deepEqual(packRoots(["/work/out", "/answers", "/work/out/sub", "/answers"]), [
    "work/out",
    "answers",
  ]);
  assert.deepEqual(packRoots(["/work/out/sub", "/work"]), ["work"]);
});

Deno.test("readBackWorld() brings back non-ASCII names and hard links as tar packs them", async () => {
  const src = await Deno.makeTempDir();
  await Deno.mkdir(`${src}/out`);
  await Deno.writeTextFile(`${src}/out/Müller.txt`, "m");
  await Deno.writeTextFile(`${src}/out/€😀.txt`, "e");
  await Deno.writeTextFile(`${src}/out/a`, "w1");
  await Deno.link(`${src}/out/a`, `${src}/out/answer.edn`);
  await Deno.link(`${src}/out/a`, `${src}/elsewhere`);
  const pack = `${src}.tar`;
  const tar = await new Deno.Command("tar", {
    args: ["-C", src, "--format=posix", "-cf", pack, "out", "elsewhere"],
    env: { LC_ALL: "C.UTF-8" },
  }).output();
  assert.ok(tar.success, new TextDecoder().decode(tar.stderr));
  const world = await Deno.makeTempDir();
  const back = await readBackWorld(world, ["out"], pack);
  assert.equal(await Deno.readTextFile(`${world}/out/Müller.txt`), "m");
  assert.equal(await Deno.readTextFile(`${world}/out/€😀.txt`), "e");
  assert.equal(await Deno.readTextFile(`${world}/out/a`), "w1");
  assert.equal(await Deno.readTextFile(`${world}/out/answer.edn`), "w1");
  assert.equal(back.files, 4);
  // A link outside the writable directories is not followed back in.
  assert.deepEqual(back.skipped.map((s) => s.path), ["/elsewhere"]);
  await Deno.remove(src, { recursive: true });
  await Deno.remove(pack);
  await Deno.remove(world, { recursive: true });
});

Deno.test("readBackWorld() writes a pack's hard links as links, never as copies of the file", async () => {
  // One file and many links to it cost the sandbox its bytes once; copies would cost the
  // host's disk the bytes once per link (50,000 links to a 1 GiB file: 50 TB).
  const src = await Deno.makeTempDir();
  await Deno.mkdir(`${src}/out`);
  await Deno.writeFile(`${src}/out/big`, new Uint8Array(MIB).fill(7));
  for (let i = 0; i < 50; i++) await Deno.link(`${src}/out/big`, `${src}/out/l${i}`);
  const pack = `${src}.tar`;
  const tar = await new Deno.Command("tar", {
    args: ["-C", src, "--format=posix", "-cf", pack, "out"],
  }).output();
  assert.ok(tar.success, new TextDecoder().decode(tar.stderr));
  const world = await Deno.makeTempDir();
  await Deno.mkdir(`${world}/out`);
  await Deno.writeTextFile(`${world}/out/l0`, "the host's copy, replaced");
  const back = await readBackWorld(world, ["out"], pack);
  assert.equal(back.files, 51);
  assert.deepEqual(back.skipped, []);
  const inodes = new Set<number | null>();
  for (let i = 0; i < 50; i++) {
    const st = await Deno.stat(`${world}/out/l${i}`);
    assert.equal(st.size, MIB);
    inodes.add(st.ino);
  }
  inodes.add((await Deno.stat(`${world}/out/big`)).ino);
  assert.equal(inodes.size, 1, "every link is the one file written back");
  await Deno.remove(src, { recursive: true });
  await Deno.remove(pack);
  await Deno.remove(world, { recursive: true });
});

/**
 * Runs `script` as the supervisor of a bare sandbox (no gateway, no cgroup) around `sh -c
 * run`, with /out writable and captured; returns the pack's listing and what reads back.
 */
async function supervised(script: string, run: string) {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/world`);
  await Deno.mkdir(`${dir}/bin`);
  await Deno.copyFile("/bin/sh", `${dir}/bin/sh`);
  await Deno.chmod(`${dir}/bin/sh`, 0o711);
  const capture = `${dir}/capture.tar`;
  await Deno.writeFile(capture, new Uint8Array());
  const limits = { ...DEFAULT_LIMITS, worldBytes: 64 * MIB };
  const argv = superviseArgv(["sh", "-c", run], { writable: ["out"], capture: ["/out"] });
  argv[2] = script;
  const bwrap = [
    "--unshare-all",
    "--uid",
    "1000",
    "--gid",
    "1000",
    "--die-with-parent",
    "--as-pid-1",
    "--ro-bind",
    "/usr",
    "/usr",
    "--symlink",
    "usr/bin",
    "/bin",
    "--symlink",
    "usr/lib",
    "/lib",
    "--symlink",
    "usr/lib64",
    "/lib64",
    "--ro-bind",
    "/etc",
    "/etc",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    ...sandboxWorldArgs(`${dir}/world`, [], ["out"], limits, capture),
    "--ro-bind",
    `${dir}/bin`,
    SUPERVISOR_BIN,
    ...sealArgs(limits.worldBytes),
    "--chdir",
    "/",
    ...argv,
  ];
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", 'exec 8>/dev/null; exec bwrap "$@"', "sh", ...bwrap],
    stdin: "null",
    stderr: "piped",
  }).output();
  const listing = await new Deno.Command("tar", { args: ["-tvf", capture], stderr: "null" })
    .output();
  const pack = await Deno.readFile(capture);
  const back = await readBackWorld(`${dir}/world`, ["out"], capture);
  const names = new TextDecoder().decode(listing.stdout).split("\n")
    .map((l) => l.replace(/^.* \d\d:\d\d /, "")).filter((l) => l !== "");
  const files: Record<string, string> = {};
  for (const e of Deno.readDirSync(`${dir}/world/out`)) {
    if (e.isFile) files[e.name] = await Deno.readTextFile(`${dir}/world/out/${e.name}`);
  }
  await Deno.remove(dir, { recursive: true });
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr), names, back, files, pack };
}

if (hasBwrap) {
  Deno.test("SUPERVISOR packs the same through its own pipe or a pipeline: each entry once, links never followed, no probe", async () => {
    // 400 names of ~200 bytes: their list overfills a pipe (64 KiB) while tar reads it.
    const run = "cd /out && mkdir -p sub/deep && echo a > a && echo b > sub/deep/b && " +
      "echo h > .hidden && echo x > ..x && ln -s /etc/passwd link && ln a hard && " +
      "printf 'n' > \"$(printf 'new\\nline')\" && mkdir many && i=0 && " +
      "while [ $i -lt 400 ]; do : > many/$i-$(printf '%0190d' 0); i=$((i + 1)); done; exit 3";
    const pipeline = SUPERVISOR.replace("[ -p /proc/self/fd/5 ]", "false");
    assert.notEqual(pipeline, SUPERVISOR, "the supervisor no longer checks for its pipe");
    const viaPipe = await supervised(SUPERVISOR, run);
    const viaPipeline = await supervised(pipeline, run);
    for (const r of [viaPipe, viaPipeline]) {
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.back.status?.exit, 3);
      assert.deepEqual(r.back.status?.full, []);
      assert.equal(r.back.truncated, false);
      assert.equal(r.back.files, 406);
      assert.deepEqual(r.back.skipped.map((s) => `${s.path} ${s.reason}`), ["/out/link symlink"]);
      assert.equal(r.names.length, 412, r.names.slice(0, 12).join("\n"));
      assert.ok(r.names.includes("out/link -> /etc/passwd"), r.names.join("\n"));
      assert.ok(!r.names.some((n) => n.includes("dvergr\\room")), "the probe was packed");
    }
    assert.deepEqual(viaPipe.names, viaPipeline.names);
  });

  Deno.test("SUPERVISOR packs nothing without tar: a valid pack of its status alone, its exit read back", async () => {
    const bare = await supervised(SUPERVISOR, "exit 7");
    assert.equal(bare.code, 7, bare.stderr);
    assert.deepEqual(bare.names, [".dvergr/run/status"]);
    assert.equal(bare.back.status?.exit, 7);
    assert.equal(bare.back.status?.timedOut, false);
    assert.deepEqual(bare.back.status?.full, []);
    assert.equal(bare.back.truncated, false);
    assert.equal(bare.back.files, 0);
    // An empty directory under the capture one is something to pack: tar packs it.
    const dir = await supervised(SUPERVISOR, "mkdir /out/d; exit 0");
    assert.equal(dir.code, 0, dir.stderr);
    assert.deepEqual(dir.names, [".dvergr/run/status", "out/", "out/d/"]);
    assert.equal(dir.back.status?.exit, 0);
  });

  Deno.test("SUPERVISOR packs one regular file without tar, its bytes exact, and anything more with tar", async () => {
    const one = await supervised(SUPERVISOR, "printf 'w1\\000\\n\\\\x' > /out/answer.edn; exit 5");
    assert.equal(one.code, 5, one.stderr);
    // A tar reader sees the status alone: the file follows the end of archive.
    assert.deepEqual(one.names, [".dvergr/run/status"]);
    assert.equal(one.back.status?.exit, 5);
    assert.equal(one.back.truncated, false);
    assert.equal(one.back.files, 1);
    assert.equal(one.back.bytes, 6);
    assert.deepEqual(one.files, { "answer.edn": "w1\0\n\\x" });
    const tail = new TextDecoder().decode(one.pack.subarray(one.pack.length - ONE_END.length - 40));
    assert.ok(tail.endsWith(`${ONE_MAGIC}out/answer.edn\0w1\0\n\\x${ONE_END}`), tail);
    // Two files, a deeper one, a lone link, fifo or directory: tar packs them, as before.
    for (
      const [run, names] of [
        ["echo a > /out/a; echo b > /out/b", ["out/", "out/a", "out/b"]],
        ["mkdir /out/d; echo a > /out/d/a", ["out/", "out/d/", "out/d/a"]],
        ["ln -s /etc/passwd /out/l", ["out/", "out/l -> /etc/passwd"]],
        ["mkfifo /out/f", ["out/", "out/f"]],
      ] as const
    ) {
      const r = await supervised(SUPERVISOR, run);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.names, [".dvergr/run/status", ...names], run);
      assert.equal(r.back.truncated, false, run);
    }
  });

  Deno.test("readBackWorld() of a one-file pack: cut before its end mark, truncated and nothing written; its name checked as tar's", async () => {
    const { pack } = await supervised(SUPERVISOR, "echo w1 > /out/answer.edn");
    const enc = new TextEncoder();
    const at = pack.length - enc.encode(`${ONE_MAGIC}out/answer.edn\0w1\n${ONE_END}`).length;
    const head = pack.subarray(0, at);
    const packOf = (name: string, data: string, end = ONE_END) =>
      new Uint8Array([...head, ...enc.encode(`${ONE_MAGIC}${name}\0${data}${end}`)]);
    const dir = await Deno.makeTempDir();
    for (
      const [what, bytes, files, truncated, skipped] of [
        ["whole", packOf("out/answer.edn", "w1\n"), ["answer.edn"], false, []],
        ["cut", pack.subarray(0, pack.length - 1), [], true, []],
        ["no end", packOf("out/answer.edn", "w1\n", ""), [], true, []],
        ["outside", packOf("docs/x", "x"), [], false, ["/docs/x outside"]],
        ["escaping", packOf("out/../../x", "x"), [], false, ["/out/../../x outside"]],
        ["top level", packOf("out", "x"), [], false, ["/out special"]],
      ] as const
    ) {
      await Deno.writeFile(`${dir}/pack`, bytes);
      await Deno.mkdir(`${dir}/world`);
      const back = await readBackWorld(`${dir}/world`, ["out"], `${dir}/pack`);
      assert.equal(back.status?.exit, 0, what);
      assert.equal(back.truncated, truncated, what);
      assert.deepEqual(back.skipped.map((s) => `${s.path} ${s.reason}`), skipped, what);
      assert.deepEqual([...Deno.readDirSync(`${dir}/world/out`)].map((e) => e.name), files, what);
      if (files.length) {
        assert.equal(await Deno.readTextFile(`${dir}/world/out/answer.edn`), "w1\n");
      }
      await Deno.remove(`${dir}/world`, { recursive: true });
    }
    await Deno.remove(dir, { recursive: true });
  });

  Deno.test("commandCandidate() [bwrap] captures non-ASCII names and a hard-linked answer", async () => {
    const { outcome, captured, world } = await attempt(
      "echo m > /out/Müller.txt; echo e > '/out/€😀.txt'; echo w1 > /out/a; " +
        "ln /out/a /out/answer.edn",
      "bwrap",
      {},
    );
    await world.remove();
    assert.equal(outcome.status, "completed", outcome.message ?? "");
    assert.deepEqual(captured.files, {
      "/out/Müller.txt": "m\n",
      "/out/a": "w1\n",
      "/out/answer.edn": "w1\n",
      "/out/€😀.txt": "e\n",
    });
  });

  Deno.test("commandCandidate() [bwrap] that writes 60,000 entries fails with that cause, never silently", async () => {
    const { outcome, world } = await attempt(
      "echo w1 > /out/answer.edn; mkdir /out/m && cd /out/m && seq 60000 | xargs touch",
      "bwrap",
      {},
    );
    await world.remove();
    assert.equal(outcome.status, "crashed");
    assert.match(outcome.message ?? "", /wrote more than 50,000 entries under \/out/);
  });

  Deno.test("commandCandidate() [bwrap] stops a 50 MiB write at the world limit and names it", async () => {
    const { outcome, captured, world, ev } = await attempt(
      "echo kept > /out/a.txt; dd if=/dev/zero of=/out/big bs=1M count=50 2>/dev/null; " +
        "dd if=/dev/zero of=/tmp/big bs=1M count=50 2>/dev/null; true",
      "bwrap",
      { worldBytes: 8 * MIB },
    );
    assert.equal(outcome.status, "crashed");
    assert.match(outcome.message ?? "", /bytes written under the world/);
    assert.deepEqual(ev.limits.exceeded, ["world-bytes"]);
    assert.equal(captured.files["/out/a.txt"], "kept\n");
    const big = await Deno.stat(`${world.dir}/out/big`);
    assert.ok(big.size <= 8 * MIB, `${big.size}`);
    await world.remove();
  });

  Deno.test("commandCandidate() [bwrap] names a full directory whatever its exit, never one with room, and never packs its room probe", async () => {
    // The supervisor's probe file in each writable directory (limits.ts ROOM_PROBE).
    const probe = "'/out/.dvergr\\room'";
    const cases = [
      // About 1 MiB of 8 left: not full; only the candidate's two files come back.
      { run: "head -c 7340032 /dev/zero > /out/big; echo w1 > /out/answer.edn", full: false },
      // Blocks held without bytes (fallocate --keep-size: the pack shows an empty file), 28 KiB
      // left, exit 0: full.
      {
        run: "echo w1 > /out/answer.edn; : > /out/held; fallocate -n -l 8355840 /out/held; true",
        full: true,
      },
      // The probe's name taken by the candidate: df decides, and a FIFO there blocks nothing.
      {
        run: `echo w1 > /out/answer.edn; : > ${probe}; ` +
          "dd if=/dev/zero of=/out/big bs=1M count=50 2>/dev/null; true",
        full: true,
      },
      { run: `echo w1 > /out/answer.edn; mkfifo ${probe}`, full: false },
    ];
    for (const c of cases) {
      const { outcome, captured, world, ev } = await attempt(c.run, "bwrap", {
        worldBytes: 8 * MIB,
      });
      await world.remove();
      assert.equal(captured.files["/out/answer.edn"], "w1\n", c.run);
      assert.deepEqual(ev.limits.exceeded, c.full ? ["world-bytes"] : [], c.run);
      assert.equal(
        outcome.status,
        c.full ? "crashed" : "completed",
        `${c.run}: ${outcome.message}`,
      );
      if (c.full) assert.match(outcome.message ?? "", /bytes written under the world/);
      // The supervisor's own probe never comes back; a file the candidate named so is skipped.
      const skipped = (ev.readBack?.skipped ?? []).map((s) => s.path);
      assert.deepEqual(skipped, c.run.includes(probe) ? ["/out/.dvergr\\room"] : [], c.run);
    }
  });

  Deno.test("commandCandidate() [bwrap] behind the gateway's forwarder holds none of the supervisor's descriptors", async () => {
    // Its helpers' pipe (5, 6), the saved stdin (4), the cgroup (7) and the marks (8).
    const { outcome, captured, world } = await attempt(
      // ls, a child, lists the shell's descriptors (a glob of its own would hold one open).
      "ls /proc/$$/fd > /out/fds; true",
      "bwrap",
      {},
      20_000,
      { gateway: commandGateway({ env }) },
    );
    await world.remove();
    assert.equal(outcome.status, "completed", outcome.message ?? "");
    const fds = captured.files["/out/fds"].trim().split("\n").map(Number);
    assert.ok(fds.includes(0) && fds.includes(1) && fds.includes(2), fds.join(" "));
    assert.deepEqual(fds.filter((fd) => fd >= 3 && fd <= 9), [], fds.join(" "));
  });

  Deno.test("commandCandidate() [bwrap] can write nothing but the sized tmpfs mounts", async () => {
    const { outcome, captured, world } = await attempt(
      "for p in /big /dev/big /usr/big /.dvergr/big; do echo x > $p 2>/dev/null && echo $p; done " +
        "> /out/wrote.txt; dd if=/dev/zero of=/dev/shm/big bs=1M count=50 2>/dev/null; " +
        "ls -l /dev/shm/big | awk '{print $5}' > /out/shm.txt; echo ok > /dev/null && echo ok >> /out/wrote.txt",
      "bwrap",
      { worldBytes: 4 * MIB },
    );
    await world.remove();
    assert.equal(outcome.status, "completed");
    assert.equal(captured.files["/out/wrote.txt"], "ok\n");
    assert.ok(Number(captured.files["/out/shm.txt"]) <= 4 * MIB, captured.files["/out/shm.txt"]);
  });

  Deno.test("commandCandidate() [bwrap] bounds memory: a 600 MiB buffer under a 128 MiB limit fails", async () => {
    // tail keeps a line without a newline whole in memory.
    const { outcome, captured, world, ev } = await attempt(
      "echo start > /out/a.txt; head -c 629145600 /dev/zero | tail -n 1 > /dev/null; " +
        "echo $? > /out/status.txt; exit 1",
      "bwrap",
      { memoryBytes: 128 * MIB },
    );
    await world.remove();
    assert.equal(outcome.status, "crashed");
    assert.equal(captured.files["/out/a.txt"], "start\n");
    if (cgroupEnforces(ev, "memory")) {
      assert.match(outcome.message ?? "", /memory limit/);
      assert.ok(ev.limits.exceeded.includes("memory"));
    } else {
      // RLIMIT_DATA: the allocation fails inside tail, which exits non-zero.
      assert.notEqual(captured.files["/out/status.txt"], "0\n", JSON.stringify(ev));
    }
  });

  Deno.test("commandCandidate() [bwrap] bounds processes and open files", async () => {
    const { outcome, captured, world, ev } = await attempt(
      "ulimit -n > /out/nofile.txt; n=0; for i in $(seq 64); do sleep 5 & n=$((n+1)); done; " +
        "echo $n > /out/forked.txt; true",
      "bwrap",
      { processes: 16, openFiles: 48 },
      15_000,
    );
    await world.remove();
    assert.equal(captured.files["/out/nofile.txt"], "48\n");
    if (cgroupEnforces(ev, "processes")) {
      assert.equal(outcome.status, "crashed");
      assert.match(outcome.message ?? "", /process limit/);
    }
  });

  Deno.test("commandCandidate() [bwrap] leaves no process behind, however it detached", async () => {
    const marker = await Deno.makeTempDir();
    const { outcome, world } = await attempt(
      `setsid sh -c 'sleep 1; echo late > ${marker}/late' & nohup sleep 30 >/dev/null 2>&1 & echo done`,
      "bwrap",
      {},
    );
    await world.remove();
    assert.equal(outcome.status, "completed");
    await new Promise((r) => setTimeout(r, 1800));
    await assert.rejects(() => Deno.stat(`${marker}/late`));
    await Deno.remove(marker, { recursive: true });
  });

  Deno.test("commandCandidate() [bwrap] enforces the time limit and still reads the world back", async () => {
    const started = performance.now();
    const { outcome, captured, world } = await attempt(
      "echo early > /out/early.txt; trap '' TERM; sleep 30",
      "bwrap",
      {},
      1000,
    );
    await world.remove();
    assert.equal(outcome.status, "timeout");
    assert.equal(captured.files["/out/early.txt"], "early\n");
    assert.ok(performance.now() - started < 10_000);
  });

  Deno.test("commandCandidate() [bwrap] cannot stop or kill its supervisor, the sandbox's init", async () => {
    // The kernel drops the SIGSTOP and SIGKILL a process of a PID namespace sends its init.
    const { outcome, captured, world } = await attempt(
      "echo x > /out/x; s=$(pgrep -o -f 'dvergr-[s]upervisor'); echo $s > /out/pid; " +
        "kill -STOP $s; kill -9 $s; sleep 0.2; echo after > /out/after",
      "bwrap",
      {},
    );
    await world.remove();
    assert.equal(outcome.status, "completed", outcome.message ?? "");
    assert.equal(captured.files["/out/pid"], "1\n");
    assert.equal(captured.files["/out/after"], "after\n");
  });

  Deno.test("commandCandidate() [bwrap] that empties or forges its pack and keeps the supervisor from writing it fails, never faults", async () => {
    // The pack is the candidate's uid's: it can spoil it, and take the supervisor's write away.
    for (
      const forge of [
        ": > /.dvergr/capture.tar",
        "head -c 700 /dev/urandom > /.dvergr/capture.tar",
        "cd /tmp && mkdir -p .dvergr/run && printf 'exit=125\\n' > .dvergr/run/status && " +
        "tar --format=posix -cf /.dvergr/capture.tar .dvergr/run/status",
      ]
    ) {
      const { outcome, world } = await attempt(
        `echo x > /out/x; ${forge}; chmod 000 /.dvergr/capture.tar`,
        "bwrap",
        {},
      );
      await world.remove();
      assert.equal(outcome.status, "crashed", `${forge}: ${outcome.message}`);
    }
  });

  Deno.test("commandCandidate() [bwrap] that spoils its pack and exits with the no-room status fails, never an IO error", async () => {
    // The supervisor cannot write the pack, and the candidate's exit is the status that says
    // the host's disk was full: with room on the host it stays the candidate's failure.
    for (
      const spoil of [
        "chmod 000 /.dvergr/capture.tar",
        "head -c 700 /dev/urandom > /.dvergr/capture.tar; chmod 000 /.dvergr/capture.tar",
      ]
    ) {
      const { outcome, world } = await attempt(
        `echo x > /out/x; ${spoil}; exit ${PACK_NO_ROOM}`,
        "bwrap",
        {},
      );
      await world.remove();
      assert.equal(outcome.status, "crashed", `${spoil}: ${outcome.message}`);
      assert.match(outcome.message ?? "", /supervisor/);
    }
  });

  Deno.test("commandCandidate() [bwrap] whose sandbox cannot be built is a fault", async () => {
    const { outcome, world } = await attempt("echo x > /out/x", "bwrap", {}, 20_000, {
      bwrapExtra: ["--ro-bind", "/no-such-dir-of-dvergr", "/nx"],
    });
    await world.remove();
    assert.equal(outcome.status, "fault");
    assert.match(outcome.message ?? "", /the sandbox did not start: bwrap: /);
  });

  Deno.test("commandCandidate() [bwrap] charges the candidate's own time only: a slow gateway start is not", async () => {
    // The real world gateway, whose in-sandbox forwarders here take 3 s to listen.
    const real = commandGateway({ env });
    const slow: GatewayFactory = async (ctx, transport) => {
      const g = await real(ctx, transport);
      const f = g.forwarders!;
      return { ...g, forwarders: { ...f, ready: `sleep 3\n${f.ready}` } };
    };
    const { outcome, captured, world } = await attempt(
      "echo done > /out/done.txt",
      "bwrap",
      {},
      2000,
      { gateway: slow },
    );
    await world.remove();
    assert.equal(outcome.status, "completed", outcome.message ?? "");
    assert.equal(captured.files["/out/done.txt"], "done\n");
    assert.ok((outcome.evidence.ranMs as number) < 2000, String(outcome.evidence.ranMs));
  });
}

Deno.test("commandCandidate() [none] ends detached processes with the attempt when a cgroup holds them", async () => {
  const marker = await Deno.makeTempDir();
  const { outcome, world, ev } = await attempt(
    `setsid sh -c 'sleep 1; echo late > ${marker}/late' > /dev/null 2>&1 & echo done`,
    "none",
    {},
  );
  await world.remove();
  assert.equal((outcome as CandidateOutcome).status, "completed");
  if (cgroupEnforces(ev, "processes")) {
    await new Promise((r) => setTimeout(r, 1800));
    await assert.rejects(() => Deno.stat(`${marker}/late`));
  } else {
    assert.match(ev.limits.enforcedBy.worldBytes, /per file only/);
  }
  await Deno.remove(marker, { recursive: true });
});

Deno.test("printfNuls(): the shell's printf gives the bytes back, NUL runs of any length before digits, letters and the end; the supervisor's script is short", () => {
  const texts: number[][] = [];
  for (const run of [1, 2, 63, 64, 65, 128, 129, 1024]) {
    for (const after of ["0", "7", "00644", "8", "a", " ", ""]) {
      texts.push([0x61, ...Array(run).fill(0), ...[...after].map((c) => c.charCodeAt(0))]);
    }
  }
  for (const t of texts) {
    const bytes = Uint8Array.from(t);
    const out = new Deno.Command("/bin/sh", {
      args: ["-c", `${NUL64_LINE}\nprintf '${printfNuls(bytes)}'`],
    }).outputSync().stdout;
    assert.deepEqual([...out], t);
  }
  // It was 10.6 KB, 5.8 of them NULs spelled \\000 one by one.
  assert.ok(SUPERVISOR.length < 6000, `${SUPERVISOR.length}`);
});
