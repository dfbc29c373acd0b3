import assert from "node:assert/strict";
import { gitRoomStore } from "../../../../adapters/rooms/git/room_store.ts";
import { bundleDir, type RoomStore, syncBundle } from "../../../../core/ports/room_store.ts";

async function gitStore(): Promise<{ rooms: RoomStore; dir: string }> {
  const dir = await Deno.makeTempDir();
  return { rooms: gitRoomStore(dir), dir };
}

// What every room store must do is the contract of tests/ports/room_store_contract.ts (run
// on this store and the memory one); here is what only the git store does.

/** Whether the real git binary is installed (the assertions that need it are skipped if not). */
const HAS_GIT = (() => {
  try {
    return new Deno.Command("git", { args: ["--version"], stdout: "null" }).outputSync().success;
  } catch {
    return false;
  }
})();
if (!HAS_GIT) {
  // deno-lint-ignore no-console -- say why checks are skipped
  console.warn("room_store_test: the git binary is absent: skipping what only real git checks");
}

/** Runs the real git in a room's repository; its stdout, or throws with its stderr. */
function git(gitdir: string, ...args: string[]): string {
  const out = new Deno.Command("git", { args: ["-C", gitdir, ...args] }).outputSync();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  if (!out.success) throw new Error(`git ${args.join(" ")} failed: ${text(out.stderr)}`);
  return text(out.stdout);
}

/** `git fsck --strict` passes (when git is installed). */
function assertFsck(gitdir: string): void {
  if (!HAS_GIT) return;
  const out = new Deno.Command("git", { args: ["-C", gitdir, "fsck", "--strict", "--no-dangling"] })
    .outputSync();
  assert.equal(out.success, true, new TextDecoder().decode(out.stderr));
}

/** The packs (by index file) and loose objects of a repository. */
async function objectFiles(gitdir: string): Promise<{ packs: string[]; loose: number }> {
  const packs: string[] = [];
  for await (const e of Deno.readDir(`${gitdir}/objects/pack`)) {
    if (e.name.endsWith(".idx")) packs.push(e.name);
  }
  let loose = 0;
  for await (const d of Deno.readDir(`${gitdir}/objects`)) {
    if (/^[0-9a-f]{2}$/.test(d.name)) {
      for await (const _ of Deno.readDir(`${gitdir}/objects/${d.name}`)) loose++;
    }
  }
  return { packs: packs.sort(), loose };
}

Deno.test("a room created holding a directory is one pack, its commits those createRoom() then syncBundle() make, git fsck --strict clean", async () => {
  const files = new Map([["workflow.edn", '{:task "t"}'], ["cases/c1/gold.edn", "{:w 1}"]]);
  const at = () => {
    let now = Date.parse("2026-01-02T03:04:05Z");
    return () => new Date(now += 1000);
  };
  const one = await Deno.makeTempDir();
  const two = await Deno.makeTempDir();
  try {
    const once = gitRoomStore(one, at());
    const twice = gitRoomStore(two, at());
    assert.equal(await once.createRoom("r", bundleDir("b", files)), true);
    await twice.createRoom("r");
    await syncBundle(twice, "r", "b", files);
    // The same commits (same trees, messages, parents and times): the same ids.
    assert.equal(await once.head("r"), await twice.head("r"));
    assert.deepEqual((await objectFiles(`${one}/r`)).packs.length, 1);
    assertFsck(`${one}/r`);
  } finally {
    await Deno.remove(one, { recursive: true });
    await Deno.remove(two, { recursive: true });
  }
});

Deno.test("gitRoomStore() writes each commit as one pack that git fsck --strict, log and show accept", async () => {
  const dir = await Deno.makeTempDir();
  let now = Date.parse("2026-01-02T03:04:05Z");
  const rooms = gitRoomStore(dir, () => new Date(now += 1000));
  await rooms.createRoom("r");
  const gitdir = `${dir}/r`;
  assert.deepEqual((await objectFiles(gitdir)).packs.length, 1);
  const big = "line of text\n".repeat(500); // deflated, where small files are stored
  await rooms.writeFiles(
    "r",
    new Map([["a/b.txt", "1"], ["a/c d.txt", "ünïcödé ✓"], ["big.txt", big], ["é/x", "2"]]),
    "first\r\n\nwith a body\n\n",
  );
  await rooms.writeFiles("r", new Map([["a/b.txt", null], ["a-b", "3"]]), "second");
  const files = await objectFiles(gitdir);
  assert.equal(files.packs.length, 3);
  assert.equal(files.loose, 0);
  assertFsck(gitdir);
  const log = await rooms.log("r");
  assert.deepEqual(log.map((c) => c.message), ["second", "first\n\nwith a body", "Create room r"]);
  assert.deepEqual(log.map((c) => c.at), [
    "2026-01-02T03:04:08.000Z",
    "2026-01-02T03:04:07.000Z",
    "2026-01-02T03:04:06.000Z",
  ]);
  if (!HAS_GIT) return;
  assert.equal(
    git(gitdir, "log", "--format=%H %s", "main"),
    log.map((c) => `${c.id} ${c.message.split("\n")[0]}\n`).join(""),
  );
  assert.equal(git(gitdir, "show", "main:big.txt"), big);
  assert.equal(git(gitdir, "show", "main:a/c d.txt"), "ünïcödé ✓");
  assert.equal(
    git(gitdir, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "main"),
    "a-b\na/c d.txt\nbig.txt\né/x\n",
  );
  assert.equal(
    git(gitdir, "show", "-s", "--format=%an <%ae> %cI", "main"),
    "dvergr <dvergr@localhost> 2026-01-02T03:04:08+00:00\n",
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() rooms are read by isomorphic-git", async () => {
  const { rooms, dir } = await gitStore();
  await rooms.createRoom("r");
  const id = await rooms.writeFiles(
    "r",
    new Map([["w/x/workflow.edn", '{:title "x"}'], ["w/x/big.js", "x;\n".repeat(1000)]]),
    "w",
  );
  // A second git implementation, only a test oracle: pinned here, not in deno.json, so no
  // module of the program can import it.
  // deno-lint-ignore no-import-prefix
  const git = await import("npm:isomorphic-git@1.44.19");
  const fs = await import("node:fs");
  const gitdir = `${dir}/r`;
  const [head] = await git.log({ fs, gitdir, ref: "main" });
  assert.equal(head.oid, id);
  assert.equal(head.commit.message, "w\n");
  const { blob } = await git.readBlob({ fs, gitdir, oid: id, filepath: "w/x/big.js" });
  assert.equal(new TextDecoder().decode(blob), "x;\n".repeat(1000));
  const small = await git.readBlob({ fs, gitdir, oid: id, filepath: "w/x/workflow.edn" });
  assert.equal(new TextDecoder().decode(small.blob), '{:title "x"}');
  assert.equal((await git.log({ fs, gitdir, ref: "main" })).length, 2);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() many commits in a row: packs are merged beyond maxPacks, history and files kept", async () => {
  const dir = await Deno.makeTempDir();
  const rooms = gitRoomStore(dir, undefined, { maxPacks: 4 });
  await rooms.createRoom("r");
  const expected = new Map<string, string>();
  for (let i = 0; i < 30; i++) {
    const changes = new Map<string, string | null>([[`c/${i % 5}.txt`, `v${i}`], [`n/${i}`, "x"]]);
    if (i % 3 === 0 && i > 0) changes.set(`n/${i - 1}`, null);
    await rooms.writeFiles("r", changes, `commit ${i}`);
    for (const [p, t] of changes) t === null ? expected.delete(p) : expected.set(p, t);
    assert.ok((await objectFiles(`${dir}/r`)).packs.length <= 5);
  }
  assert.deepEqual(
    await rooms.readFiles("r"),
    new Map([...expected].sort(([a], [b]) => a < b ? -1 : 1)),
  );
  const log = await rooms.log("r");
  assert.equal(log.length, 31);
  assert.deepEqual(log.slice(0, 2).map((c) => c.message), ["commit 29", "commit 28"]);
  log.slice(0, -1).forEach((c, i) => assert.deepEqual(c.parents, [log[i + 1].id]));
  assertFsck(`${dir}/r`);
  // A fresh store (its own caches aside, the same process) reads the same.
  assert.deepEqual(await gitRoomStore(dir).readFiles("r", "c"), await rooms.readFiles("r", "c"));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() identical content makes no commit and no pack", async () => {
  const { rooms, dir } = await gitStore();
  await rooms.createRoom("r");
  const files = new Map([["a/b", "1"], ["c", "2"]]);
  const first = await rooms.writeFiles("r", files, "one");
  const before = await objectFiles(`${dir}/r`);
  assert.equal(await rooms.writeFiles("r", files, "again"), first);
  assert.equal(await rooms.writeFiles("r", new Map([["nope/x", null], ["c", "2"]]), "none"), first);
  assert.equal(await rooms.replaceDir("r", "a", new Map([["b", "1"]]), "same"), null);
  assert.deepEqual(await objectFiles(`${dir}/r`), before);
  assert.equal((await rooms.log("r")).length, 2);
  // The same content again after a change: only the commit and the changed trees are new.
  await rooms.writeFiles("r", new Map([["c", "3"]]), "three");
  await rooms.writeFiles("r", new Map([["c", "2"]]), "back");
  assertFsck(`${dir}/r`);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() deletes files and the directories they leave empty, down to an empty room", async () => {
  const { rooms, dir } = await gitStore();
  await rooms.createRoom("r");
  await rooms.writeFiles("r", new Map([["a/b/c", "1"], ["a/d", "2"], ["e", "3"]]), "w");
  await rooms.writeFiles("r", new Map([["a/b/c", null]]), "rm c");
  assert.deepEqual([...(await rooms.readFiles("r")).keys()], ["a/d", "e"]);
  if (HAS_GIT) {
    assert.equal(git(`${dir}/r`, "ls-tree", "-r", "-t", "--name-only", "main"), "a\na/d\ne\n");
  }
  // A file given where a directory is (and the reverse) is refused: one would be lost.
  await assert.rejects(
    () => rooms.writeFiles("r", new Map([["e/f", "4"]]), "dir over file"),
    /"e" is a file and also the directory of "e\/f"/,
  );
  // Removing the file in the same change set makes the replacement explicit.
  await rooms.writeFiles("r", new Map([["e", null], ["e/f", "4"]]), "dir over file");
  assert.deepEqual([...(await rooms.readFiles("r")).keys()], ["a/d", "e/f"]);
  assert.equal(await rooms.replaceDir("r", "a", new Map(), "empty a"), await headOf(rooms));
  await rooms.writeFiles("r", new Map([["e/f", null]]), "rm all");
  assert.deepEqual(await rooms.readFiles("r"), new Map());
  assertFsck(`${dir}/r`);
  if (HAS_GIT) assert.equal(git(`${dir}/r`, "ls-tree", "-r", "main"), "");
  await Deno.remove(dir, { recursive: true });
});

async function headOf(rooms: RoomStore): Promise<string> {
  return (await rooms.log("r"))[0].id;
}

Deno.test("gitRoomStore() commits 20,000 files at once and reads them back", async () => {
  const { rooms, dir } = await gitStore();
  await rooms.createRoom("r");
  const files = new Map<string, string>();
  for (let i = 0; i < 10_000; i++) {
    files.set(`cases/c${i}/gold.edn`, `{:answer ${i}}`);
    files.set(`cases/c${i}/fixtures/docs/case.md`, `# Case ${i}\n\n${"text ".repeat(i % 200)}`);
  }
  await rooms.writeFiles("r", files, "20k");
  const back = await rooms.readFiles("r");
  assert.equal(back.size, 20_000);
  for (const [p, t] of files) assert.equal(back.get(p), t, p);
  const { packs, loose } = await objectFiles(`${dir}/r`);
  assert.deepEqual([packs.length, loose], [2, 0]);
  assert.equal(
    await rooms.replaceDir(
      "r",
      "cases",
      new Map([...files].map(([p, t]) => [p.slice("cases/".length), t])),
      "same",
    ),
    null,
  );
  assertFsck(`${dir}/r`);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() a crash between pack and branch leaves the old head readable and writable", async () => {
  const dir = await Deno.makeTempDir();
  let crash = false;
  const rooms = gitRoomStore(dir, undefined, {
    beforeBranchMove: () => {
      if (crash) throw new Error("simulated crash");
    },
  });
  await rooms.createRoom("r");
  const old = await rooms.writeFiles("r", new Map([["a", "old"]]), "old");
  crash = true;
  await assert.rejects(
    () => rooms.writeFiles("r", new Map([["a", "new"], ["b", "new"]]), "new"),
    /simulated crash/,
  );
  // The new commit's pack is there, unreferenced; the branch did not move.
  assert.equal((await objectFiles(`${dir}/r`)).packs.length, 3);
  const fresh = gitRoomStore(dir);
  assert.deepEqual([...await fresh.readFiles("r")], [["a", "old"]]);
  assert.equal(await headOf(fresh), old);
  assertFsck(`${dir}/r`);
  if (HAS_GIT) assert.equal(git(`${dir}/r`, "rev-parse", "main").trim(), old);
  crash = false;
  const next = await rooms.writeFiles("r", new Map([["a", "new"]]), "after");
  assert.deepEqual((await rooms.log("r")).map((c) => c.id).slice(0, 2), [next, old]);
  assertFsck(`${dir}/r`);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() a branch lock left by a dead writer is taken over once stale; a live one is waited for", async () => {
  const { rooms, dir } = await gitStore();
  await rooms.createRoom("r");
  const lock = `${dir}/r/refs/heads/main.lock`;
  await Deno.writeTextFile(lock, "");
  await Deno.utime(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  await rooms.writeFiles("r", new Map([["a", "1"]]), "stale lock");
  await Deno.writeTextFile(lock, "");
  const release = new Promise((r) => setTimeout(r, 300)).then(() => Deno.remove(lock));
  const t = performance.now();
  await rooms.writeFiles("r", new Map([["a", "2"]]), "live lock");
  assert.ok(performance.now() - t >= 250, "the write waited for the lock");
  await release;
  assert.deepEqual([...await rooms.readFiles("r")], [["a", "2"]]);
  assert.equal((await rooms.log("r")).length, 3);
  await assert.rejects(() => Deno.lstat(lock), Deno.errors.NotFound);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() two stores writing one room at once both land (the branch moves compare-and-swap)", async () => {
  const dir = await Deno.makeTempDir();
  const a = gitRoomStore(dir);
  const b = gitRoomStore(dir);
  await a.createRoom("r");
  await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) => (i % 2 ? a : b).writeFiles("r", new Map([[`f${i}`, String(i)]]), `w${i}`),
    ),
  );
  assert.deepEqual([...(await a.readFiles("r")).keys()], [
    "f0",
    "f1",
    "f2",
    "f3",
    "f4",
    "f5",
    "f6",
    "f7",
  ]);
  assert.equal((await b.log("r")).length, 9);
  assertFsck(`${dir}/r`);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() processes committing to one room at once, merging packs meanwhile, lose nothing", async () => {
  const dir = await Deno.makeTempDir();
  await gitRoomStore(dir).createRoom("r");
  const module = JSON.stringify(
    import.meta.resolve("../../../../adapters/rooms/git/room_store.ts"),
  );
  const writer = (who: string) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { gitRoomStore } from ${module};
         const rooms = gitRoomStore(${JSON.stringify(dir)}, undefined, { maxPacks: 2 });
         for (let i = 0; i < 15; i++) {
           await rooms.writeFiles("r", new Map([["${who}/" + i, "x"], ["shared", "${who}" + i]]), "${who}" + i);
           if (i % 3 === 0) await rooms.readFiles("r");
         }`,
      ],
    }).output();
  const runs = await Promise.all(["a", "b", "c"].map(writer));
  for (const run of runs) assert.ok(run.success, new TextDecoder().decode(run.stderr));
  const rooms = gitRoomStore(dir);
  assert.equal((await rooms.readFiles("r")).size, 46);
  assert.equal((await rooms.log("r")).length, 46);
  assert.deepEqual([...Deno.readDirSync(`${dir}/r/refs/heads`)].map((e) => e.name), ["main"]);
  assertFsck(`${dir}/r`);
  await Deno.remove(dir, { recursive: true });
});

for (const deltas of ["OFS_DELTA", "REF_DELTA"]) {
  Deno.test({
    name:
      `gitRoomStore() reads and extends a room git repacked (${deltas}, packed refs), merging duplicate packs`,
    ignore: !HAS_GIT,
    fn: async () => {
      const dir = await Deno.makeTempDir();
      const gitdir = `${dir}/r`;
      const text = (n: number) =>
        Array.from({ length: 400 }, (_, i) => `line ${i} ${i === n ? "changed" : ""}`).join("\n");
      await gitRoomStore(dir).createRoom("r");
      const ours = await gitRoomStore(dir).writeFiles("r", new Map([["doc.txt", text(0)]]), "v0");
      const before = (await objectFiles(gitdir)).packs;
      await gitRoomStore(dir).writeFiles("r", new Map([["doc.txt", text(1)]]), "v1");
      const v1Pack = (await objectFiles(gitdir)).packs.find((p) => !before.includes(p))!;
      for (let n = 2; n < 4; n++) {
        await gitRoomStore(dir).writeFiles("r", new Map([["doc.txt", text(n)]]), `v${n}`);
      }
      const saved = await Deno.makeTempDir();
      for (const ext of [".idx", ".pack"]) {
        const name = v1Pack.replace(".idx", ext);
        await Deno.copyFile(`${gitdir}/objects/pack/${name}`, `${saved}/${name}`);
      }
      const offsets = `repack.useDeltaBaseOffset=${deltas === "OFS_DELTA"}`;
      git(gitdir, "-c", offsets, "repack", "-a", "-d", "-f", "--depth=10");
      git(gitdir, "pack-refs", "--all");
      await assert.rejects(() => Deno.lstat(`${gitdir}/refs/heads/main`), Deno.errors.NotFound);
      const [gitPack] = (await objectFiles(gitdir)).packs;
      assert.match(
        git(gitdir, "verify-pack", "-v", `${gitdir}/objects/pack/${gitPack}`),
        /chain length = [1-9]/,
      );
      // maxPacks 1: every commit merges all packs.
      const rooms = gitRoomStore(dir, undefined, { maxPacks: 1 });
      assert.deepEqual([...await rooms.readFiles("r")], [["doc.txt", text(3)]]);
      assert.deepEqual((await rooms.log("r")).map((c) => c.message).slice(-2), [
        "v0",
        "Create room r",
      ]);
      // v1's pack back beside git's: its objects twice. Merging keeps one copy of each, so
      // git's deltas move relative to their bases (with git 2.39, v1's tree lies between
      // v3's blob and the blobs stored as deltas of it).
      for await (const f of Deno.readDir(saved)) {
        await Deno.copyFile(`${saved}/${f.name}`, `${gitdir}/objects/pack/${f.name}`);
      }
      assert.equal((await objectFiles(gitdir)).packs.length, 2);
      for (let n = 4; n < 6; n++) {
        await rooms.writeFiles("r", new Map([["doc.txt", text(n)]]), `v${n}`);
      }
      const [merged] = (await objectFiles(gitdir)).packs;
      const verified = git(gitdir, "verify-pack", "-v", `${gitdir}/objects/pack/${merged}`);
      // OFS_DELTA entries are copied (moved relative to their bases); REF_DELTA ones are stored
      // whole (their base might be in a pack left out of a merge).
      if (deltas === "OFS_DELTA") assert.match(verified, /chain length = 1/);
      else assert.doesNotMatch(verified, /chain length/);
      assertFsck(gitdir);
      assert.equal(git(gitdir, "rev-parse", "main~5").trim(), ours);
      for (let n = 0; n < 6; n++) {
        assert.equal(git(gitdir, "show", `main~${5 - n}:doc.txt`), text(n));
      }
      assert.deepEqual([...await gitRoomStore(dir).readFiles("r")], [["doc.txt", text(5)]]);
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(saved, { recursive: true });
    },
  });
}

Deno.test("gitRoomStore() reads a room of loose objects (as isomorphic-git wrote them) and packs them", async () => {
  const dir = await Deno.makeTempDir();
  // The same test oracle as above.
  // deno-lint-ignore no-import-prefix
  const git = await import("npm:isomorphic-git@1.44.19");
  const fs = await import("node:fs");
  const gitdir = `${dir}/old`;
  await git.init({ fs, gitdir, bare: true, defaultBranch: "main" });
  const author = {
    name: "dvergr",
    email: "dvergr@localhost",
    timestamp: 1_700_000_000,
    timezoneOffset: 0,
  };
  const blob = await git.writeBlob({ fs, gitdir, blob: new TextEncoder().encode("kept") });
  const sub = await git.writeTree({
    fs,
    gitdir,
    tree: [{ mode: "100644", path: "f.txt", oid: blob, type: "blob" }],
  });
  const tree = await git.writeTree({
    fs,
    gitdir,
    tree: [{ mode: "040000", path: "d", oid: sub, type: "tree" }],
  });
  const first = await git.commit({
    fs,
    gitdir,
    message: "old commit",
    author,
    tree,
    parent: [],
    ref: "refs/heads/main",
  });
  const rooms = gitRoomStore(dir, undefined, { maxLoose: 3 });
  assert.deepEqual([...await rooms.readFiles("old")], [["d/f.txt", "kept"]]);
  assert.deepEqual((await rooms.log("old")).map((c) => [c.id, c.message]), [[first, "old commit"]]);
  assert.equal((await objectFiles(gitdir)).loose, 4);
  await rooms.writeFiles("old", new Map([["d/g.txt", "new"]]), "new commit");
  // More loose objects than maxLoose: they were merged into a pack and removed.
  assert.deepEqual((await objectFiles(gitdir)).loose, 0);
  assert.deepEqual([...await rooms.readFiles("old")], [["d/f.txt", "kept"], ["d/g.txt", "new"]]);
  assertFsck(gitdir);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() keeps rooms as bare repositories that git itself reads", async () => {
  const { rooms, dir } = await gitStore();
  await rooms.createRoom("r");
  await rooms.writeFiles(
    "r",
    new Map([["workflows/x/a-b/c", "1"], ["workflows/x/a.txt", "2"], ["workflows/x/a/d", "3"]]),
    "w",
  );
  const git = (...args: string[]) =>
    new Deno.Command("git", { args: ["-C", `${dir}/r`, ...args] }).outputSync();
  const fsck = git("fsck", "--strict");
  assert.equal(fsck.success, true, new TextDecoder().decode(fsck.stderr));
  const ls = new TextDecoder().decode(git("ls-tree", "-r", "--name-only", "main").stdout);
  assert.equal(ls, "workflows/x/a-b/c\nworkflows/x/a.txt\nworkflows/x/a/d\n");
  const show = new TextDecoder().decode(git("show", "main:workflows/x/a.txt").stdout);
  assert.equal(show, "2");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gitRoomStore() keeps a run's branch and a fast-forward to it fsck-clean", async () => {
  const { rooms, dir } = await gitStore();
  await rooms.createRoom("r");
  const base = await rooms.writeFiles("r", new Map([["wiki/a.md", "a"]]), "base");
  const fork = await rooms.commitOn("r", {
    on: base,
    changes: new Map([["wiki/a.md", "a2"], ["wiki/n/b.md", "b"]]),
    message: "Run r1",
    branch: "runs/r1",
  });
  assertFsck(`${dir}/r`);
  if (HAS_GIT) {
    assert.equal(git(`${dir}/r`, "rev-parse", "runs/r1").trim(), fork);
    assert.equal(git(`${dir}/r`, "show", "runs/r1:wiki/n/b.md"), "b");
  }
  assert.equal(await rooms.moveHead("r", base, fork), true);
  assert.equal(await rooms.moveHead("r", base, fork), false);
  assertFsck(`${dir}/r`);
  if (HAS_GIT) assert.equal(git(`${dir}/r`, "rev-parse", "main").trim(), fork);
  await Deno.remove(dir, { recursive: true });
});
