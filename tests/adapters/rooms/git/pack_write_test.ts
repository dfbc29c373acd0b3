import assert from "node:assert/strict";
import { join } from "node:path";
import {
  commitObject,
  encodeTree,
  type GitObject,
  gitObject,
} from "../../../../core/codecs/git/objects.ts";
import {
  installPack,
  ofsBytes,
  PackBuilder,
  settled,
  writeAllDurable,
} from "../../../../adapters/rooms/git/pack_write.ts";
import { packIndexes, readPackIndex } from "../../../../adapters/rooms/git/pack_read.ts";
import { withObjects } from "../../../../adapters/rooms/git/object_reader.ts";
import { initBare } from "../../../../adapters/rooms/git/repository.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);

/** A blob stored (small), a blob deflated (large), a tree of both and a commit of the tree. */
function someObjects(): GitObject[] {
  const small = gitObject("blob", utf8("hello\n"));
  const large = gitObject("blob", utf8("line of text\n".repeat(500)));
  const tree = gitObject(
    "tree",
    encodeTree([
      { mode: "100644", name: "small.txt", oid: small.oid, isTree: false },
      { mode: "100644", name: "large.txt", oid: large.oid, isTree: false },
    ]),
  );
  const commit = commitObject(tree.oid, [], "first", new Date("2026-01-02T03:04:05Z"));
  return [small, large, tree, commit];
}

async function withRepo(f: (gitdir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    const gitdir = join(dir, "room");
    await initBare(gitdir);
    await f(gitdir);
  } finally {
    packIndexes.delete(join(dir, "room"));
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("ofsBytes() encodes a delta's distance to its base as git does", () => {
  assert.deepEqual([...ofsBytes(0)], [0x00]);
  assert.deepEqual([...ofsBytes(127)], [0x7f]);
  assert.deepEqual([...ofsBytes(128)], [0x80, 0x00]);
  assert.deepEqual([...ofsBytes(16_511)], [0xff, 0x7f]);
  assert.deepEqual([...ofsBytes(16_512)], [0x80, 0x80, 0x00]);
});

Deno.test("PackBuilder.finish() makes a pack and index that git verify-pack accepts", async () => {
  await withRepo(async (gitdir) => {
    const objects = someObjects();
    const builder = new PackBuilder();
    for (const o of objects) builder.addObject(o);
    assert.equal(builder.count, 4);
    const built = builder.finish();
    assert.deepEqual(built.entries.map((e) => e.oid), objects.map((o) => o.oid));
    assert.deepEqual([...built.pack.subarray(0, 4)], [...utf8("PACK")]);
    await installPack(gitdir, built);
    const idx = join(gitdir, "objects", "pack", `pack-${built.name}.idx`);
    const out = new Deno.Command("git", { args: ["verify-pack", "-v", idx] }).outputSync();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const listed = new TextDecoder().decode(out.stdout);
    for (const o of objects) assert.match(listed, new RegExp(`^${o.oid} ${o.type} `, "m"));
  });
});

Deno.test("readPackIndex() reads back where PackBuilder put each entry of the pack", async () => {
  await withRepo(async (gitdir) => {
    const builder = new PackBuilder();
    for (const o of someObjects()) builder.addObject(o);
    const built = builder.finish();
    await installPack(gitdir, built);
    const index = readPackIndex(gitdir, built.name);
    assert.ok(index);
    assert.deepEqual(
      [...index.starts].sort((a, b) => a[1] - b[1]),
      built.entries.map((e) => [e.oid, e.offset]),
    );
    const ends = built.entries.map((_, i) =>
      built.entries[i + 1]?.offset ?? built.pack.length - 20
    );
    assert.deepEqual(built.entries.map((e) => index.ends.get(e.offset)), ends);
  });
});

Deno.test("ObjectReader reads back each object PackBuilder wrote, stored or deflated", async () => {
  await withRepo(async (gitdir) => {
    const objects = someObjects();
    const builder = new PackBuilder();
    for (const o of objects) builder.addObject(o);
    await installPack(gitdir, builder.finish());
    packIndexes.delete(gitdir); // read the index from disk, not what installPack remembered
    const read = await withObjects(gitdir, (db) => objects.map((o) => db.read(o.oid)));
    assert.deepEqual(
      read.map(({ type, content }) => ({ type, content: new Uint8Array(content) })),
      objects.map(({ type, content }) => ({ type, content })),
    );
    const [, , tree, commit] = objects;
    const names = await withObjects(gitdir, (db) => db.tree(tree.oid).map((e) => e.name));
    assert.deepEqual(names, ["large.txt", "small.txt"]);
    assert.equal(await withObjects(gitdir, (db) => db.commit(commit.oid).tree), tree.oid);
  });
});

Deno.test("writeAllDurable() writes every file, and refuses one that exists, leaving it as it was", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const big = new Uint8Array(200_000).map((_, i) => i % 251);
    await writeAllDurable([
      { path: join(dir, "a"), data: utf8("first") },
      { path: join(dir, "b"), data: big },
    ]);
    assert.equal(await Deno.readTextFile(join(dir, "a")), "first");
    assert.deepEqual(await Deno.readFile(join(dir, "b")), big);
    await assert.rejects(
      writeAllDurable([
        { path: join(dir, "c"), data: utf8("new") },
        { path: join(dir, "a"), data: utf8("again") },
      ]),
      Deno.errors.AlreadyExists,
    );
    assert.equal(await Deno.readTextFile(join(dir, "a")), "first");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("settled() waits for every promise before it throws the first rejection", async () => {
  let lateDone = false;
  const late = new Promise<void>((resolve) =>
    setTimeout(() => {
      lateDone = true;
      resolve();
    }, 20)
  );
  await assert.rejects(
    settled([Promise.reject(new Error("first")), late, Promise.reject(new Error("second"))]),
    /first/,
  );
  assert.equal(lateDone, true);
});
