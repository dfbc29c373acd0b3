import assert from "node:assert/strict";
import { readJsonLines } from "../../../sandbox/json_lines.ts";
import {
  createMemoryWorld,
  createWorld,
  worldPathSegments,
} from "../../../adapters/world/world.ts";

Deno.test("worldPathSegments() refuses relative, .., backslash and NUL paths", () => {
  assert.deepEqual(worldPathSegments("/out/answer.edn"), ["out", "answer.edn"]);
  assert.deepEqual(worldPathSegments("/"), []);
  for (const bad of ["out/x", "/out/../etc", "/a//b", "/a\\b", "/a\0b", "/./a"]) {
    assert.throws(() => worldPathSegments(bad), /Cannot use world path/, bad);
  }
});

Deno.test("createWorld() seeds fixtures at their world paths and makes the capture dirs", async () => {
  const world = await createWorld({ "/docs/a.md": "A", "/docs/sub/b.md": "B" }, {
    mkdirs: ["/out"],
  });
  assert.equal(await Deno.readTextFile(`${world.dir}/docs/a.md`), "A");
  assert.deepEqual(await world.files.list("/docs"), ["/docs/a.md", "/docs/sub/b.md"]);
  assert.deepEqual(await world.files.list("/out"), []);
  assert.equal(await world.files.read("/docs/sub/b.md"), "B");
  await assert.rejects(() => world.files.read("/docs/none.md"), /no such file/);
  await world.remove();
  await assert.rejects(() => Deno.lstat(world.dir), Deno.errors.NotFound);
});

Deno.test("seeding, files.write on disk and in memory refuse a path with the same words", async () => {
  // [a fixture already there, the path then written, what every writer says]
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ "/a": "x" }, "/a/b", /: Cannot use world path "\/a\/b": "\/a" is not a directory$/],
    [{ "/a/b/c": "x" }, "/a/b/c/d", /: Cannot use world path "\/a\/b\/c\/d": "\/a\/b\/c" is not/],
    [{ "/a/b": "x" }, "/a", /: Cannot use world path "\/a": it is not a regular file$/],
    [{}, "/", /: Cannot use world path "\/": it is not a regular file$/],
    [{}, "/a/../b", /: Cannot use world path "\/a\/..\/b": it is not normalised/],
  ];
  for (const [there, path, said] of cases) {
    const disk = await createWorld(there);
    const memory = createMemoryWorld(there);
    try {
      await assert.rejects(disk.files.write(path, "y"), said, `disk ${path}`);
      await assert.rejects(memory.files.write(path, "y"), said, `memory ${path}`);
      // Fixtures are seeded in sorted order: the path is refused when it comes last.
      if (Object.keys(there).every((k) => k < path)) {
        const seeds = { ...there, [path]: "y" };
        assert.throws(() => createMemoryWorld(seeds), said, `memory seed ${path}`);
        await assert.rejects(createWorld(seeds), said, `seed ${path}`);
      }
    } finally {
      await disk.remove();
    }
  }
  // Nothing refused is left half-written: what was there stays, nothing was added.
  const world = await createWorld({ "/a": "x" });
  await assert.rejects(world.files.write("/a/b", "y"));
  assert.deepEqual(await world.files.list("/"), ["/a"]);
  await world.remove();
});

Deno.test("worldFiles reads only files and lists only directories, whatever a path names", async () => {
  const world = await createWorld({ "/docs/a.md": "A" });
  try {
    for (const path of ["/", "/docs", "/none", "/none/deeper/a.md"]) {
      await assert.rejects(world.files.read(path), /no such file/, path);
    }
    assert.deepEqual(await world.files.list("/"), ["/docs/a.md"]);
    for (const path of ["/docs/a.md", "/none", "/none/deeper"]) {
      assert.deepEqual(await world.files.list(path), [], path);
    }
    await assert.rejects(world.files.read("/docs/a.md/x"), /"\/docs\/a\.md" is not a directory/);
  } finally {
    await world.remove();
  }
});

Deno.test("worldFiles refuses paths through symbolic links that leave the world", async () => {
  const outside = await Deno.makeTempDir();
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret");
  const world = await createWorld({}, { mkdirs: ["/out"] });
  await Deno.symlink(outside, `${world.dir}/out/link`);
  await Deno.symlink(`${outside}/secret.txt`, `${world.dir}/out/file-link`);
  await assert.rejects(() => world.files.read("/out/link/secret.txt"), /symbolic link/);
  await assert.rejects(() => world.files.write("/out/link/new.txt", "x"), /symbolic link/);
  await assert.rejects(() => world.files.read("/out/file-link"), /symbolic link/);
  await assert.rejects(() => world.files.write("/out/file-link", "x"), /symbolic link/);
  assert.equal(await Deno.readTextFile(`${outside}/secret.txt`), "secret");
  await world.remove();
  assert.equal(await Deno.readTextFile(`${outside}/secret.txt`), "secret");
  await Deno.remove(outside, { recursive: true });
});

Deno.test("capture() reads text under the capture dirs, never follows links, flags binary and huge files", async () => {
  const outside = await Deno.makeTempDir();
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret");
  const world = await createWorld({ "/docs/in.md": "not captured" }, { mkdirs: ["/out"] });
  await world.files.write("/out/answer.edn", '{"a" 1}');
  await world.files.write("/out/deep/x.txt", "deep");
  await Deno.writeFile(`${world.dir}/out/bin.dat`, new Uint8Array([0xff, 0xfe, 0x00, 0x01]));
  await Deno.writeTextFile(`${world.dir}/out/nul.txt`, "a\0b");
  await Deno.writeTextFile(`${world.dir}/out/huge.txt`, "x".repeat(2000));
  await Deno.symlink(`${outside}/secret.txt`, `${world.dir}/out/leak.txt`);
  await Deno.symlink(outside, `${world.dir}/out/leakdir`);
  const cap = await world.capture(["/out"], { maxFileBytes: 1000 });
  assert.deepEqual(cap.files, { "/out/answer.edn": '{"a" 1}', "/out/deep/x.txt": "deep" });
  assert.deepEqual(cap.skipped.map((s) => [s.path, s.reason]), [
    ["/out/bin.dat", "binary"],
    ["/out/huge.txt", "too-large"],
    ["/out/leak.txt", "symlink"],
    ["/out/leakdir", "symlink"],
    ["/out/nul.txt", "binary"],
  ]);
  await world.remove();
  await Deno.remove(outside, { recursive: true });
});

Deno.test("capture() caps the number of files and the total size", async () => {
  const world = await createWorld({}, { mkdirs: ["/out"] });
  for (let i = 0; i < 5; i++) await world.files.write(`/out/f${i}.txt`, "12345");
  const byCount = await world.capture(["/out"], { maxFiles: 3 });
  assert.deepEqual(Object.keys(byCount.files), ["/out/f0.txt", "/out/f1.txt", "/out/f2.txt"]);
  assert.deepEqual(byCount.skipped.map((s) => s.reason), ["too-many", "too-many"]);
  const bySize = await world.capture(["/out"], { maxTotalBytes: 12 });
  assert.equal(Object.keys(bySize.files).length, 2);
  assert.equal(bySize.bytes, 10);
  // A capture dir that is a link to elsewhere is not read at all.
  const other = await createWorld({}, {});
  await Deno.symlink(world.dir + "/out", `${other.dir}/out`);
  const linked = await other.capture(["/out"]);
  assert.deepEqual(linked.files, {});
  assert.deepEqual(linked.skipped.map((s) => s.reason), ["symlink"]);
  await world.remove();
  await other.remove();
});

Deno.test("capture() says when it stopped at its entry limit, so nothing is lost silently", async () => {
  const world = await createWorld({}, { mkdirs: ["/out"] });
  for (let i = 0; i < 5; i++) await world.files.write(`/out/f${i}.txt`, "x");
  const over = await world.capture(["/out"], { maxEntries: 3 });
  assert.equal(over.overEntries, 3);
  const within = await world.capture(["/out"], { maxEntries: 5 });
  assert.equal(within.overEntries, undefined);
  assert.equal(Object.keys(within.files).length, 5);
  await world.remove();
});

/**
 * Captures of a world, one JSON line each (its files' texts), until it is killed: in a
 * process of its own, since a capture reads synchronously and a swapper in the same process
 * would only run between captures, never within one.
 */
const CAPTURE_LOOP = `
import { createWorld } from ${
  JSON.stringify(new URL("../../../adapters/world/world.ts", import.meta.url).href)
};
const world = await createWorld({}, { mkdirs: ["/out", "/spare"] });
const out = Deno.stdout.writable.getWriter();
const enc = new TextEncoder();
await out.write(enc.encode(JSON.stringify({ dir: world.dir }) + "\\n"));
for (;;) {
  const cap = await world.capture(["/out"]);
  await out.write(enc.encode(JSON.stringify({ files: Object.values(cap.files) }) + "\\n"));
}
`;

Deno.test("capture() neither follows a link nor blocks on a FIFO that replaces a file after the walk", async () => {
  // A candidate's process that outlives it (possible without bubblewrap) can swap
  // /out/answer.edn between the capture's directory walk and its read.
  const outside = await Deno.makeTempDir();
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", CAPTURE_LOOP],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = readJsonLines<{ dir?: string; files?: string[] }>(child.stdout);
  const dir = (await lines.next()).value!.dir!;
  const answer = `${dir}/out/answer.edn`;
  const spare = `${dir}/spare`;
  const rounds = 500;
  const fifos = Array.from({ length: rounds }, (_, i) => `${spare}/fifo-${i}`);
  const made = await new Deno.Command("mkfifo", { args: fifos }).output();
  assert.ok(made.success, "mkfifo");
  let running = true;
  const swapper = (async () => {
    for (let i = 0; running && i < rounds; i++) {
      await Deno.writeTextFile(`${spare}/file`, "{}");
      await Deno.rename(`${spare}/file`, answer);
      await Deno.symlink(`${outside}/secret.txt`, `${spare}/link`);
      await Deno.rename(`${spare}/link`, answer);
      await Deno.writeTextFile(`${spare}/file`, "{}");
      await Deno.rename(`${spare}/file`, answer);
      await Deno.rename(fifos[i], answer);
    }
    running = false;
  })();
  const seen: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    while (running) {
      const line = await Promise.race([
        lines.next(),
        new Promise<null>((r) => timer = setTimeout(() => r(null), 5000)),
      ]);
      clearTimeout(timer);
      assert.ok(line !== null, "a capture blocked on a FIFO");
      assert.ok(!line.done, "the capturing process ended early");
      seen.push(...line.value.files!);
    }
  } finally {
    running = false;
    await swapper;
    child.kill("SIGKILL");
    while (!(await lines.next()).done);
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
  assert.ok(seen.length > 0);
  assert.ok(!seen.includes("secret"), "a capture followed a link out of the world");
  await Deno.remove(outside, { recursive: true });
});

Deno.test("createMemoryWorld() captures what createWorld() captures for the same writes, writing nothing to disk", async () => {
  const fixtures = { "/docs/q.txt": "w1", "/docs/deep/a.md": "# a" };
  const limits = { maxFileBytes: 8, maxFiles: 3 };
  const disk = await createWorld(fixtures, { mkdirs: ["/out"] });
  const memory = createMemoryWorld(fixtures, { mkdirs: ["/out"] });
  try {
    assert.equal(memory.dir, "");
    for (const w of [disk, memory]) {
      await w.files.write("/out/answer.txt", "right");
      await w.files.write("/out/sub/b.txt", "b");
      await w.files.write("/out/big.txt", "x".repeat(20));
      await w.files.write("/out/z1.txt", "1");
      await w.files.write("/out/z2.txt", "2");
      await assert.rejects(w.files.write("/out/answer.txt/x", "no"), /not a directory/);
      await assert.rejects(w.files.read("/out/none.txt"), /no such file/);
    }
    assert.deepEqual(await memory.files.list("/docs"), await disk.files.list("/docs"));
    assert.equal(await memory.files.read("/docs/q.txt"), "w1");
    assert.deepEqual(await memory.capture(["/out"], limits), await disk.capture(["/out"], limits));
  } finally {
    await disk.remove();
    await memory.remove();
  }
});

const asRoot = Deno.uid() === 0;
Deno.test({
  name: "worldFiles() names the world path of a file it may not read or write, not the host's" +
    (asRoot ? " (skipped: root reads and writes whatever the modes say)" : ""),
  ignore: asRoot,
  async fn() {
    const world = await createWorld({ "/docs/a.md": "alpha" }, { mkdirs: ["/out"] });
    try {
      await Deno.chmod(`${world.dir}/docs/a.md`, 0o000);
      await Deno.chmod(`${world.dir}/out`, 0o500);
      for (
        const [f, expected] of [
          [
            () => world.files.read("/docs/a.md"),
            /^Cannot read world path "\/docs\/a\.md": Permission denied/,
          ],
          [
            () => world.files.write("/out/b.md", "x"),
            /^Cannot write world path "\/out\/b\.md": Permission denied/,
          ],
          [
            () => world.files.write("/out/d/b.md", "x"),
            /^Cannot write world path "\/out\/d\/b\.md": Permission denied/,
          ],
        ] as const
      ) {
        const e = await f().then(() => null, (e: Error) => e);
        assert.ok(e);
        assert.match(e.message, expected);
        assert.ok(!e.message.includes(world.dir), e.message);
      }
    } finally {
      await Deno.chmod(`${world.dir}/out`, 0o700);
      await world.remove();
    }
  },
});
