/**
 * The RoomStore contract (core/ports/room_store.ts): what every implementation must do, as
 * one suite run against each of them by tests/ports/room_store_test.ts.
 *
 * A new implementation plugs in with one line there:
 *
 * ```ts
 * roomStoreContract("myRooms", async () => ({ rooms: await openMyRooms(), close: async () => {} }));
 * ```
 *
 * The factory gives a fresh store without rooms per test and a `close` that removes what it
 * made; `{ ignore: true }` skips a store that cannot run on this host.
 *
 * Covered: rooms made once and listed sorted, slugs checked; commits of exactly the given
 * paths (null removes), none for a change that changes nothing; the log head first with
 * parents; reading at a commit of the history and under a prefix; paths refused (outside
 * the room, a path both file and directory, names git would alias); text kept byte for
 * byte (a leading BOM); a new room holding a directory from its start (createRoom() with
 * one, as syncBundle() after it); directories replaced whole (syncBundle), a file in the way refused
 * unless asked; forks (history and head shared, the base moved, a taken name refused);
 * unknown rooms and commits as NOT_FOUND; writes to one room at once all kept.
 */
import assert from "node:assert/strict";
import { isDvergrError } from "../../core/errors.ts";
import { bundleDir, type RoomStore, syncBundle } from "../../core/ports/room_store.ts";

export interface RoomStoreSubject {
  rooms: RoomStore;
  close(): Promise<void>;
}

export type RoomStoreFactory = () => Promise<RoomStoreSubject>;

const code = (c: string) => (e: unknown) => isDvergrError(e) && e.code === c;

/** Registers the contract's tests for one implementation. */
export function roomStoreContract(
  name: string,
  open: RoomStoreFactory,
  opts: { ignore?: boolean } = {},
): void {
  const test = (what: string, fn: (r: RoomStore) => Promise<void>) =>
    Deno.test({
      name: `RoomStore contract [${name}]: ${what}`,
      ignore: opts.ignore,
      async fn() {
        const subject = await open();
        try {
          await fn(subject.rooms);
        } finally {
          await subject.close();
        }
      },
    });

  test("createRoom() makes a room once; listRooms() is sorted; slugs are checked", async (rooms) => {
    assert.deepEqual(await rooms.listRooms(), []);
    assert.equal(await rooms.hasRoom("books"), false);
    assert.equal(await rooms.createRoom("books"), true);
    assert.equal(await rooms.createRoom("books"), false);
    assert.equal(await rooms.createRoom("alpha"), true);
    assert.equal(await rooms.hasRoom("books"), true);
    assert.deepEqual(await rooms.listRooms(), ["alpha", "books"]);
    const log = await rooms.log("books");
    assert.equal(log.length, 1);
    assert.equal(await rooms.head("books"), log[0].id);
    assert.deepEqual(await rooms.readFiles("books"), new Map());
    await assert.rejects(
      () => rooms.createRoom("Not A Slug"),
      /lowercase letters, digits and dashes/,
    );
  });

  test("createRoom() with a directory: the new room holds it, as createRoom() then syncBundle() would", async (rooms) => {
    const files = new Map([["workflow.edn", '{:task "t"}'], ["cases/c1/gold.edn", "{:w 1}"]]);
    assert.equal(await rooms.createRoom("a", bundleDir("b", files)), true);
    await rooms.createRoom("two");
    await syncBundle(rooms, "two", "b", files);
    assert.deepEqual(await rooms.readFiles("a"), await rooms.readFiles("two"));
    assert.deepEqual(
      (await rooms.readFiles("a", "workflows/b")).get("workflows/b/cases/c1/gold.edn"),
      "{:w 1}",
    );
    const log = await rooms.log("a");
    assert.deepEqual(log.map((c) => c.message), ["Write bundle b (2 files)", "Create room a"]);
    assert.deepEqual(log[0].parents, [log[1].id]);
    assert.equal(await rooms.head("a"), log[0].id);
    // Installed already: syncing the same files again makes no commit.
    assert.equal(await syncBundle(rooms, "a", "b", files), null);
    // An existing room is left as it was.
    assert.equal(await rooms.createRoom("a", bundleDir("b", new Map([["x.txt", "x"]]))), false);
    assert.equal(await rooms.head("a"), log[0].id);
    // A directory whose paths are refused makes no room at all.
    await assert.rejects(() => rooms.createRoom("bad", bundleDir("b", new Map([["../x", "x"]]))));
    assert.equal(await rooms.hasRoom("bad"), false);
  });

  test("writeFiles() makes one commit of exactly the given paths; null removes", async (rooms) => {
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
    assert.equal(await rooms.head("r"), c2);
    assert.deepEqual(
      [...await rooms.readFiles("r")],
      [["a/c.txt", "2"], ["d/e/f.txt", "3"], ["top.md", "t"]],
    );
    assert.deepEqual([...await rooms.readFiles("r", "a")], [["a/c.txt", "2"]]);
    const log = await rooms.log("r");
    assert.deepEqual(log.map((c) => c.message), ["second", "first", "Create room r"]);
    assert.deepEqual(log.map((c) => c.id), [c2, c1, log[2].id]);
    assert.deepEqual(log[0].parents, [c1]);
    assert.deepEqual(log[2].parents, []);
    assert.ok(log.every((c) => !Number.isNaN(Date.parse(c.at))));
    // Changes that leave the workspace as it is make no commit.
    assert.equal(
      await rooms.writeFiles("r", new Map([["top.md", "t"], ["gone", null]]), "same"),
      c2,
    );
    assert.equal((await rooms.log("r")).length, 3);
  });

  test("readFiles() at a commit gives the workspace as it was then", async (rooms) => {
    await rooms.createRoom("r");
    const c1 = await rooms.writeFiles("r", new Map([["x.txt", "one"]]), "one");
    await rooms.writeFiles("r", new Map([["x.txt", "two"], ["y.txt", "new"]]), "two");
    assert.deepEqual(await rooms.readFiles("r", undefined, c1), new Map([["x.txt", "one"]]));
    assert.deepEqual(await rooms.readFiles("r"), new Map([["x.txt", "two"], ["y.txt", "new"]]));
    await assert.rejects(() => rooms.readFiles("r", undefined, "0".repeat(40)), code("NOT_FOUND"));
    await assert.rejects(() => rooms.readFiles("r", undefined, "not-a-commit"), code("NOT_FOUND"));
  });

  test("keeps text byte for byte: a leading byte order mark, non-ASCII, CRLF", async (rooms) => {
    await rooms.createRoom("r");
    const files = new Map([["w/workflow.edn", '\uFEFF{:title "T"}'], ["é/ü.txt", "a\r\nb\r\n"]]);
    await rooms.writeFiles("r", files, "texts");
    assert.deepEqual(await rooms.readFiles("r"), new Map([...files].sort()));
  });

  test("refuses paths outside the room and writes that make a path both a file and a directory", async (rooms) => {
    await rooms.createRoom("r");
    await assert.rejects(
      () => rooms.writeFiles("r", new Map([["../x", "1"]]), "bad"),
      /leaves the room/,
    );
    const refused = code("PATH_INVALID");
    await assert.rejects(() => rooms.writeFiles("r", new Map([["/abs", "1"]]), "abs"), refused);
    await assert.rejects(
      () => rooms.writeFiles("r", new Map([["c/x", "1"], ["c/x/y", "2"]]), "both"),
      refused,
    );
    await rooms.writeFiles("r", new Map([["c/x", "1"], ["d/e/f", "2"]]), "base");
    await assert.rejects(() => rooms.writeFiles("r", new Map([["c/x/y", "2"]]), "below"), refused);
    await assert.rejects(() => rooms.writeFiles("r", new Map([["d/e", "3"]]), "over"), refused);
    await assert.rejects(
      () => rooms.writeFiles("r", new Map([["w/.git./config", "x"]]), "alias"),
      refused,
    );
    assert.deepEqual(await rooms.readFiles("r"), new Map([["c/x", "1"], ["d/e/f", "2"]]));
    // Replacing a file by a directory in one change set is allowed: the removal is explicit.
    await rooms.writeFiles("r", new Map([["c/x", null], ["c/x/y", "2"]]), "replace");
    assert.deepEqual(await rooms.readFiles("r", "c"), new Map([["c/x/y", "2"]]));
  });

  test("syncBundle() writes a bundle once and removes files it no longer has", async (rooms) => {
    await rooms.createRoom("b");
    const files = new Map([["workflow.edn", "{}"], ["checker.js", "x"], [
      "cases/c1/gold.edn",
      "1",
    ]]);
    assert.ok(await syncBundle(rooms, "b", "b", files));
    assert.equal(await syncBundle(rooms, "b", "b", files), null);
    files.delete("cases/c1/gold.edn");
    files.set("checker.js", "y");
    const third = await syncBundle(rooms, "b", "b", files);
    assert.equal(third, await rooms.head("b"));
    assert.deepEqual([...await rooms.readFiles("b", "workflows/b")], [
      ["workflows/b/checker.js", "y"],
      ["workflows/b/workflow.edn", "{}"],
    ]);
    assert.equal((await rooms.log("b")).length, 3);
  });

  test("replaceDir() refuses a file where the directory goes unless asked to remove it", async (rooms) => {
    await rooms.createRoom("r");
    await rooms.writeFiles("r", new Map([["workflows/x", "a file"], ["keep.txt", "k"]]), "file");
    const files = new Map([["workflow.edn", "{}"]]);
    await assert.rejects(
      () => rooms.replaceDir("r", "workflows/x", files, "dir"),
      code("PATH_INVALID"),
    );
    const c = await rooms.replaceDir("r", "workflows/x", files, "dir", {
      removeFilesInTheWay: true,
    });
    assert.equal(c, await rooms.head("r"));
    assert.deepEqual(
      await rooms.readFiles("r"),
      new Map([["keep.txt", "k"], ["workflows/x/workflow.edn", "{}"]]),
    );
  });

  test("forkRoom() shares the parent's history and head; setForkBase() moves the base", async (rooms) => {
    await rooms.createRoom("main-room");
    const head = await rooms.writeFiles("main-room", new Map([["a.txt", "1"]]), "a");
    assert.equal(await rooms.forkOf("main-room"), null);
    const info = await rooms.forkRoom("main-room", "fork-1");
    assert.deepEqual(info, { parent: "main-room", base: head });
    assert.deepEqual(await rooms.forkOf("fork-1"), info);
    assert.equal(await rooms.head("fork-1"), head);
    assert.deepEqual(await rooms.log("fork-1"), await rooms.log("main-room"));
    assert.deepEqual(await rooms.readFiles("fork-1"), new Map([["a.txt", "1"]]));
    // The fork and its parent move on apart.
    const mine = await rooms.writeFiles("fork-1", new Map([["b.txt", "2"]]), "b");
    const theirs = await rooms.writeFiles("main-room", new Map([["c.txt", "3"]]), "c");
    assert.deepEqual(await rooms.readFiles("main-room"), new Map([["a.txt", "1"], ["c.txt", "3"]]));
    assert.deepEqual((await rooms.log("fork-1")).map((c) => c.id).slice(0, 2), [mine, head]);
    await rooms.setForkBase("fork-1", theirs);
    assert.deepEqual(await rooms.forkOf("fork-1"), { parent: "main-room", base: theirs });
    assert.deepEqual(await rooms.listRooms(), ["fork-1", "main-room"]);
    await assert.rejects(() => rooms.forkRoom("main-room", "fork-1"), code("CONFLICT"));
    await assert.rejects(() => rooms.forkRoom("no-room", "fork-2"), code("NOT_FOUND"));
  });

  test("a room that does not exist is NOT_FOUND for every read and write", async (rooms) => {
    const missing = code("NOT_FOUND");
    await assert.rejects(() => rooms.readFiles("nope"), /no such room/);
    await assert.rejects(() => rooms.log("nope"), missing);
    await assert.rejects(() => rooms.head("nope"), missing);
    await assert.rejects(() => rooms.writeFiles("nope", new Map([["a", "1"]]), "m"), missing);
    await assert.rejects(() => rooms.replaceDir("nope", "d", new Map([["a", "1"]]), "m"), missing);
    await assert.rejects(() => rooms.forkOf("nope"), missing);
    assert.equal(await rooms.hasRoom("nope"), false);
  });

  test("writes to one room at once are all kept, each its own commit", async (rooms) => {
    await rooms.createRoom("r");
    await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) => rooms.writeFiles("r", new Map([[`f${i}.txt`, `${i}`]]), `w${i}`),
      ),
    );
    assert.equal((await rooms.readFiles("r")).size, 8);
    const log = await rooms.log("r");
    assert.equal(log.length, 9);
    assert.deepEqual(
      log.map((c) => c.message).slice(0, 8).sort(),
      Array.from({ length: 8 }, (_, i) => `w${i}`),
    );
  });

  test("commitOn() makes a branch beside the head; moveHead() moves it once from the state seen", async (rooms) => {
    await rooms.createRoom("r");
    const base = await rooms.writeFiles(
      "r",
      new Map([["wiki/a.md", "a"], ["docs/d.txt", "d"]]),
      "base",
    );
    const fork = await rooms.commitOn("r", {
      on: base,
      changes: new Map([["wiki/a.md", "a2"], ["wiki/b.md", "b"]]),
      message: "run",
      branch: "runs/r1",
    });
    assert.notEqual(fork, base);
    assert.equal(await rooms.head("r"), base, "the head does not move");
    assert.equal(await rooms.branchHead("r", "runs/r1"), fork);
    assert.equal(await rooms.branchHead("r", "runs/none"), null);
    assert.deepEqual(
      [...await rooms.readFiles("r", "wiki", fork)],
      [["wiki/a.md", "a2"], ["wiki/b.md", "b"]],
    );
    await assert.rejects(
      () => rooms.commitOn("r", { on: base, changes: new Map(), message: "x", branch: "runs/r1" }),
      code("CONFLICT"),
    );
    await assert.rejects(
      () => rooms.commitOn("r", { on: base, changes: new Map(), message: "x", branch: "main" }),
      code("USAGE"),
    );
    await assert.rejects(
      () => rooms.commitOn("r", { on: "0".repeat(40), changes: new Map(), message: "x" }),
      code("NOT_FOUND"),
    );
    // Another writer moved the head: the move from the state seen is refused.
    const other = await rooms.writeFiles("r", new Map([["docs/e.txt", "e"]]), "other");
    assert.equal(await rooms.moveHead("r", base, fork), false);
    assert.equal(await rooms.head("r"), other);
    // A merge commit on the new head with the fork as second parent, then moved to.
    const merge = await rooms.commitOn("r", {
      on: other,
      changes: new Map([["wiki/a.md", "a2"], ["wiki/b.md", "b"]]),
      message: "merge",
      also: [fork],
    });
    assert.equal(await rooms.moveHead("r", other, merge), true);
    assert.equal(await rooms.head("r"), merge);
    assert.deepEqual(
      [...await rooms.readFiles("r")],
      [["docs/d.txt", "d"], ["docs/e.txt", "e"], ["wiki/a.md", "a2"], ["wiki/b.md", "b"]],
    );
    assert.deepEqual((await rooms.log("r"))[0].parents, [other, fork]);
  });
}
