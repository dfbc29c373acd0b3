/**
 * What a sandboxed attempt makes on the host beside its world: its pack alone. The seccomp
 * filter and the supervisor's execute-only shell are made once per worlds directory and shared
 * (made again when they are gone); the candidate can neither read nor change that shell. A
 * capture directory with nothing to seed gets no seed mount, one with files is seeded.
 */
import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import { createWorld } from "../../../../adapters/world/world.ts";
import type { AttemptContext } from "../../../../core/bench/candidate.ts";

const env = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(env);
const why = hasBwrap ? "" : " [skipped: no bubblewrap]";

/** One sandboxed attempt of `command` in a world under `parent`: its status and /out. */
async function attempt(parent: string, command: string, fixtures: Record<string, string> = {}) {
  const world = await createWorld({ "/docs/a.md": "hello", ...fixtures }, {
    parent,
    mkdirs: ["/out"],
  });
  try {
    const ctx: AttemptContext = {
      task: "t",
      caseId: null,
      repetition: 0,
      world: world.files,
      worldDir: world.dir,
      reference: null,
      timeoutMs: 20_000,
      budgetMicros: 0,
      profile: "developer",
      writable: ["/out"],
      signal: new AbortController().signal,
    };
    const outcome = await commandCandidate({ name: "t", command }, { isolation: "bwrap", env })
      .run(ctx);
    const out = (await world.capture(["/out"])).files;
    return { status: `${outcome.status}${outcome.message ? `: ${outcome.message}` : ""}`, out };
  } finally {
    await world.remove();
  }
}

const names = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();

Deno.test({
  name:
    `commandCandidate() [bwrap] attempts share one execute-only shell and filter beside their worlds${why}`,
  ignore: !hasBwrap,
  async fn() {
    const parent = await Deno.makeTempDir({ prefix: "dvergr-shared-" });
    try {
      const write = "cat /docs/a.md > /out/a";
      const runs = await Promise.all([attempt(parent, write), attempt(parent, write)]);
      for (const r of runs) {
        assert.equal(r.status, "completed");
        assert.equal(r.out["/out/a"], "hello");
      }
      // One shared directory for both; an attempt's own directory is kept for a later one,
      // its pack empty: nothing the candidate wrote is left.
      const left = names(parent);
      const shared = `${parent}/${left.find((n) => n.startsWith(`sandbox-${Deno.pid}-`))}`;
      const kept = left.filter((n) => n.startsWith("attempt-"));
      assert.equal(left.length, 1 + kept.length, left.join(" "));
      assert.ok(kept.length >= 1 && kept.length <= 2, left.join(" "));
      for (const k of kept) {
        assert.deepEqual(names(`${parent}/${k}`), ["capture.tar"]);
        assert.equal((await Deno.stat(`${parent}/${k}/capture.tar`)).size, 0);
      }
      assert.deepEqual(names(shared), Deno.build.arch === "x86_64" ? ["bin", "seccomp"] : ["bin"]);
      assert.deepEqual(names(`${shared}/bin`), ["sh"]);
      assert.equal((await Deno.stat(`${shared}/bin`)).mode! & 0o7777, 0o711);
      assert.equal((await Deno.stat(`${shared}/bin/sh`)).mode! & 0o7777, 0o111);
      assert.equal((await Deno.stat(`${shared}/bin/sh`)).size, (await Deno.stat("/bin/sh")).size);
      // Gone (a temp cleaner, a closed home): the next attempt makes them again.
      for (const n of names(parent)) await Deno.remove(`${parent}/${n}`, { recursive: true });
      assert.equal((await attempt(parent, write)).status, "completed");
      assert.equal(names(parent).filter((n) => n.startsWith("sandbox-")).length, 1);
      assert.equal(names(parent).filter((n) => n.startsWith("attempt-")).length, 1);
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  },
});

Deno.test({
  name:
    `commandCandidate() [bwrap] cannot read, list or change the supervisor's shell, nor look into the supervisor${why}`,
  ignore: !hasBwrap,
  async fn() {
    const parent = await Deno.makeTempDir({ prefix: "dvergr-shared-" });
    try {
      const probe =
        `r() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "$n=allowed"; else echo "$n=refused"; fi; }
{
  r read cat /.dvergr/bin/sh
  r list ls /.dvergr/bin
  r write sh -c 'echo x >> /.dvergr/bin/sh'
  r replace sh -c 'echo x > /.dvergr/bin/x'
  r chmod chmod 755 /.dvergr/bin/sh
  r environ cat /proc/1/environ
  r maps cat /proc/1/maps
  r exec /.dvergr/bin/sh -c true
} > /out/probe.txt 2>&1`;
      const r = await attempt(parent, probe);
      assert.equal(r.status, "completed");
      assert.equal(
        r.out["/out/probe.txt"],
        [
          "read=refused",
          "list=refused",
          "write=refused",
          "replace=refused",
          "chmod=refused",
          "environ=refused",
          "maps=refused",
          "exec=allowed",
          "",
        ].join("\n"),
      );
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  },
});

Deno.test({
  name:
    `commandCandidate() [bwrap] seeds a capture directory that has files and starts an empty one empty${why}`,
  ignore: !hasBwrap,
  async fn() {
    const parent = await Deno.makeTempDir({ prefix: "dvergr-shared-" });
    try {
      const seeded = await attempt(
        parent,
        "cat /out/seed.txt > /out/copy; ls -A /out > /out/ls; ls -A /.dvergr > /out/dvergr",
        {
          "/out/seed.txt": "s",
        },
      );
      assert.equal(seeded.status, "completed");
      assert.equal(seeded.out["/out/copy"], "s");
      assert.equal(seeded.out["/out/ls"], "copy\nls\nseed.txt\n");
      assert.ok(/seed/.test(seeded.out["/out/dvergr"] ?? ""), seeded.out["/out/dvergr"]);
      const empty = await attempt(parent, "ls -A /out > /out/ls; ls -A /.dvergr > /out/dvergr");
      assert.equal(empty.status, "completed");
      assert.equal(empty.out["/out/ls"], "ls\n");
      // Nothing to seed: no seed mount.
      assert.ok(!/seed/.test(empty.out["/out/dvergr"] ?? "x"), empty.out["/out/dvergr"]);
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  },
});

Deno.test({
  name:
    `commandCandidate() [bwrap] reuses an ended attempt's directory with its pack empty and 0600, whatever the candidate did to it${why}`,
  ignore: !hasBwrap,
  async fn() {
    const parent = await Deno.makeTempDir({ prefix: "dvergr-shared-" });
    try {
      // The candidate owns its pack: it fills it and opens its mode to all.
      const spoil =
        "head -c 5000 /dev/zero > /.dvergr/capture.tar; chmod 777 /.dvergr/capture.tar; " +
        "echo a > /out/a";
      const first = await attempt(parent, spoil);
      assert.equal(first.out["/out/a"], "a\n");
      const kept = names(parent).filter((n) => n.startsWith("attempt-"));
      assert.equal(kept.length, 1);
      const pack = `${parent}/${kept[0]}/capture.tar`;
      assert.equal((await Deno.stat(pack)).size, 0, "the kept pack was not emptied");
      // The next attempt takes that directory: its pack 0600 and empty when the sandbox starts.
      const probe =
        "stat -c %a /.dvergr/capture.tar > /out/mode; wc -c < /.dvergr/capture.tar > /out/size";
      const second = await attempt(parent, probe);
      assert.equal(second.status, "completed");
      assert.deepEqual(names(parent).filter((n) => n.startsWith("attempt-")), kept);
      assert.equal(second.out["/out/mode"], "600\n");
      assert.equal(second.out["/out/size"], "0\n");
      // A kept directory whose pack is gone is replaced, not used.
      await Deno.remove(pack);
      assert.equal((await attempt(parent, "echo b > /out/b")).out["/out/b"], "b\n");
      const now = names(parent).filter((n) => n.startsWith("attempt-"));
      assert.equal(now.length, 1);
      assert.notEqual(now[0], kept[0]);
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  },
});
