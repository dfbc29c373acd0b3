import assert from "node:assert/strict";
import {
  gitRoomStore,
  memoryRoomStore,
  type RoomStore,
  syncBundle,
} from "../../../core/io/room_store.ts";

async function gitStore(): Promise<{ rooms: RoomStore; dir: string }> {
  const dir = await Deno.makeTempDir();
  return { rooms: gitRoomStore(dir), dir };
}

for (
  const [kind, make] of [
    ["gitRoomStore()", gitStore],
    ["memoryRoomStore()", () => Promise.resolve({ rooms: memoryRoomStore(), dir: "" })],
  ] as const
) {
  Deno.test(`${kind} creates a room once and lists rooms sorted`, async () => {
    const { rooms } = await make();
    assert.equal(await rooms.createRoom("books"), true);
    assert.equal(await rooms.createRoom("books"), false);
    assert.equal(await rooms.createRoom("alpha"), true);
    assert.deepEqual(await rooms.listRooms(), ["alpha", "books"]);
    assert.equal((await rooms.log("books")).length, 1);
    await assert.rejects(
      () => rooms.createRoom("Not A Slug"),
      /lowercase letters, digits and dashes/,
    );
  });

  Deno.test(`${kind} writeFiles() makes one commit of exactly the given paths; null removes`, async () => {
    const { rooms } = await make();
    await rooms.createRoom("r");
    const c1 = await rooms.writeFiles(
      "r",
      new Map([["a/b.txt", "1"], ["a/c.txt", "2"], ["top.md", "t"]]),
      "first",
    );
    const c2 = await rooms.writeFiles(
      "r",
      new Map([["a/b.txt", null], ["d/e/f.txt", "3"]]),
      "second",
    );
    assert.notEqual(c1, c2);
    assert.deepEqual([...await rooms.readFiles("r")], [["a/c.txt", "2"], ["d/e/f.txt", "3"], [
      "top.md",
      "t",
    ]]);
    assert.deepEqual([...await rooms.readFiles("r", "a")], [["a/c.txt", "2"]]);
    const log = await rooms.log("r");
    assert.deepEqual(log.map((c) => c.message), ["second", "first", "Create room r"]);
    assert.deepEqual(log[0].parents, [c1]);
    // Changes that leave the workspace as it is make no commit.
    assert.equal(await rooms.writeFiles("r", new Map([["top.md", "t"]]), "same"), c2);
    assert.equal((await rooms.log("r")).length, 3);
    await assert.rejects(
      () => rooms.writeFiles("r", new Map([["../x", "1"]]), "bad"),
      /leaves the bundle/,
    );
    await assert.rejects(() => rooms.readFiles("nope"), /no such room/);
  });

  Deno.test(`${kind} syncBundle() writes a bundle once and removes files it no longer has`, async () => {
    const { rooms } = await make();
    await rooms.createRoom("b");
    const files = new Map([["workflow.edn", "{}"], ["checker.js", "x"], [
      "cases/c1/gold.edn",
      "1",
    ]]);
    const first = await syncBundle(rooms, "b", "b", files);
    assert.ok(first);
    assert.equal(await syncBundle(rooms, "b", "b", files), null);
    files.delete("cases/c1/gold.edn");
    files.set("checker.js", "y");
    const third = await syncBundle(rooms, "b", "b", files);
    assert.ok(third);
    assert.deepEqual([...await rooms.readFiles("b", "workflows/b")], [
      ["workflows/b/checker.js", "y"],
      ["workflows/b/workflow.edn", "{}"],
    ]);
    assert.equal((await rooms.log("b")).length, 3);
  });
}

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
