/** The seed's call shapes of the room ops: room_create {title, slug?}, room_write {files: {path: {text}|{base64}|null}}, paged reads, and fork/diff/merge. */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Home } from "../../../core/ports/home.ts";
import type { OpContext } from "../../../core/ops/op.ts";
import { callOp } from "../../../core/ops/registry.ts";
import {
  roomCreate,
  roomFiles,
  roomLog,
  roomRead,
  roomWrite,
  slugOf,
} from "../../../core/ops/rooms.ts";
import { roomDiff, roomFork, roomMerge } from "../../../core/ops/room_forks.ts";
import { DvergrError } from "../../../core/errors.ts";
import { withTempHome } from "../../helpers/op_context.ts";

const withHome = (f: (ctx: OpContext, home: Home) => Promise<void>) =>
  withTempHome("dvergr-shapes-", f);

async function refused(p: Promise<unknown>, code: string, text: RegExp): Promise<DvergrError> {
  const e = await p.then(() => null, (e) => e);
  assert.ok(e instanceof DvergrError, `expected a DvergrError, got ${e}`);
  assert.equal(e.code, code);
  assert.match(e.message, text);
  return e;
}

Deno.test("slugOf derives a slug from a title", () => {
  assert.equal(slugOf("Books"), "books");
  assert.equal(slugOf("  Invoice coding: Q3 2025! "), "invoice-coding-q3-2025");
  assert.equal(slugOf("Café Ölberg"), "cafe-olberg");
  assert.throws(() => slugOf("!!!"), /no letters or digits/);
});

Deno.test("room_create takes {title, slug?} as the seed writes it, and {room}", async () => {
  await withHome(async (ctx) => {
    const a = await callOp(roomCreate, ctx, { title: "Books", slug: "books" });
    assert.equal(a.room, "books");
    assert.equal(a.created, true);
    const b = await callOp(roomCreate, ctx, { title: "Invoice Coding" });
    assert.equal(b.room, "invoice-coding");
    const c = await callOp(roomCreate, ctx, { room: "books" });
    assert.equal(c.created, false);
    await refused(callOp(roomCreate, ctx, {}), "USAGE", /without a title or a slug/);
    await refused(callOp(roomCreate, ctx, { room: "a", slug: "b" }), "USAGE", /both/);
    await refused(callOp(roomCreate, ctx, { slug: "Not A Slug" }), "ROOM_INVALID", /slug/);
  });
});

Deno.test("room_write takes {text}, {base64}, plain strings and null in one commit", async () => {
  await withHome(async (ctx, home) => {
    await callOp(roomCreate, ctx, { title: "Books", slug: "books" });
    await callOp(roomWrite, ctx, {
      room: "books",
      files: { "old.txt": { text: "old" } },
      message: "first",
    });
    const r = await callOp(roomWrite, ctx, {
      room: "books",
      files: {
        "data/cases.csv": { text: "no;vendor\n1;A\n" },
        "data/inv1.txt": { base64: Buffer.from("Rechnung ü", "utf8").toString("base64") },
        "plain.txt": "plain",
        "old.txt": null,
      },
      message: "Cases from 2025",
    });
    assert.deepEqual(r.written, ["data/cases.csv", "data/inv1.txt", "plain.txt"]);
    assert.deepEqual(r.deleted, ["old.txt"]);
    const files = await home.rooms.readFiles("books");
    assert.deepEqual([...files], [
      ["data/cases.csv", "no;vendor\n1;A\n"],
      ["data/inv1.txt", "Rechnung ü"],
      ["plain.txt", "plain"],
    ]);
    assert.equal((await home.rooms.log("books"))[0].message, "Cases from 2025");
    for (const bad of [{ txt: "x" }, { text: 1 }, { text: "a", base64: "" }, 5, ["x"]]) {
      await refused(
        callOp(roomWrite, ctx, { room: "books", files: { "x.txt": bad } }),
        "USAGE",
        /not \{"text": string\}/,
      );
    }
    await refused(
      callOp(roomWrite, ctx, { room: "books", files: { "x.bin": { base64: "/w==" } } }),
      "USAGE",
      /not UTF-8/,
    );
    assert.equal((await home.rooms.log("books"))[0].message, "Cases from 2025");
  });
});

Deno.test("room_read reads a 150,000-character file back in pages that each fit a result", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "big" });
    // Quotes and newlines double in JSON; an astral character is two UTF-16 units.
    const unit = 'line "quoted"\n\u{1F600};';
    let text = "";
    while (text.length < 150_000) text += unit;
    await callOp(roomWrite, ctx, { room: "big", files: { "t.txt": { text } } });
    let got = "";
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const page: Awaited<ReturnType<typeof roomRead.handler>> = await callOp(roomRead, ctx, {
        room: "big",
        path: "t.txt",
        offset,
      });
      assert.ok(JSON.stringify(page).length < 60_000, "a page fits one result");
      assert.equal(page.offset, offset);
      assert.equal(page.totalChars, text.length);
      if (page.nextOffset !== null) {
        assert.match(page.note!, new RegExp(`call room_read with offset ${page.nextOffset}`));
      } else assert.equal(page.note, undefined);
      got += page.content;
      offset = page.nextOffset;
      pages++;
    }
    assert.equal(got, text);
    assert.ok(pages >= 4, `${pages} pages`);
    const b64 = Buffer.from(text, "utf8").toString("base64");
    let back = "";
    offset = 0;
    while (offset !== null) {
      const page: Awaited<ReturnType<typeof roomRead.handler>> = await callOp(roomRead, ctx, {
        room: "big",
        path: "t.txt",
        encoding: "base64",
        offset,
        limit: 10_001,
      });
      if (page.nextOffset !== null) assert.equal(page.content.length % 4, 0);
      back += page.content;
      offset = page.nextOffset;
    }
    assert.equal(back, b64);
    const short = await callOp(roomRead, ctx, { room: "big", path: "t.txt", offset: 5, limit: 3 });
    assert.equal(short.content, text.slice(5, 8));
    assert.equal(short.nextOffset, 8);
  });
});

Deno.test("room_files and room_log page with offset and limit", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    const files: Record<string, { text: string }> = {};
    for (let i = 0; i < 12; i++) files[`f${String(i).padStart(2, "0")}.txt`] = { text: `${i}` };
    await callOp(roomWrite, ctx, { room: "r", files });
    const p = await callOp(roomFiles, ctx, { room: "r", offset: 10, limit: 5 });
    assert.deepEqual(p.files.map((f) => f.path), ["f10.txt", "f11.txt"]);
    assert.equal(p.count, 12);
    assert.equal(p.nextOffset, null);
    const q = await callOp(roomFiles, ctx, { room: "r", limit: 5 });
    assert.equal(q.nextOffset, 5);
    assert.match(q.note!, /room_files with offset 5/);
    const log = await callOp(roomLog, ctx, { room: "r", offset: 1, limit: 1 });
    assert.equal(log.commits[0].message, "Create room r");
    assert.equal(log.total, 2);
  });
});

Deno.test("room_fork, room_diff and room_merge adopt a fork's change pinned to its state", async () => {
  await withHome(async (ctx, home) => {
    await callOp(roomCreate, ctx, { room: "main" });
    await callOp(roomWrite, ctx, {
      room: "main",
      files: { "a.txt": { text: "a" }, "b.txt": { text: "b" }, "c.txt": { text: "c" } },
    });
    const fork = await callOp(roomFork, ctx, { room: "main" });
    assert.equal(fork.room, "main-fork-1");
    assert.equal(fork.parent, "main");
    // The fork holds the parent's history.
    assert.deepEqual(
      (await home.rooms.log("main-fork-1")).map((c) => c.id),
      (await home.rooms.log("main")).map((c) => c.id),
    );
    assert.equal((await callOp(roomFork, ctx, { room: "main" })).room, "main-fork-2");
    await callOp(roomWrite, ctx, {
      room: "main-fork-1",
      files: { "a.txt": { text: "A" }, "c.txt": null, "d.txt": { text: "d" } },
    });
    // The parent moves on meanwhile, on another path.
    await callOp(roomWrite, ctx, { room: "main", files: { "b.txt": { text: "B" } } });
    const diff = await callOp(roomDiff, ctx, { room: "main-fork-1" });
    assert.deepEqual(diff.changes.map((c) => [c.path, c.change]), [
      ["a.txt", "modified"],
      ["c.txt", "removed"],
      ["d.txt", "added"],
    ]);
    assert.deepEqual(diff.parentChanged, ["b.txt"]);
    assert.deepEqual(diff.conflicts, []);
    // The fork changes after its diff was read: the merge is refused.
    await callOp(roomWrite, ctx, { room: "main-fork-1", files: { "e.txt": { text: "e" } } });
    await refused(
      callOp(roomMerge, ctx, { room: "main-fork-1", expect_state: diff.state }),
      "CONFLICT",
      /changed since its diff was read/,
    );
    assert.equal((await home.rooms.readFiles("main")).get("a.txt"), "a");
    const again = await callOp(roomDiff, ctx, { room: "main-fork-1" });
    const merged = await callOp(roomMerge, ctx, {
      room: "main-fork-1",
      expect_state: again.state,
    });
    assert.equal(merged.merged, true);
    assert.deepEqual(Object.fromEntries(await home.rooms.readFiles("main")), {
      "a.txt": "A",
      "b.txt": "B",
      "d.txt": "d",
      "e.txt": "e",
    });
    // After the merge the fork equals its parent and shows no change.
    const after = await callOp(roomDiff, ctx, { room: "main-fork-1" });
    assert.deepEqual(after.changes, []);
    assert.deepEqual(after.parentChanged, []);
    // Both change one path differently: a conflict, nothing merged.
    await callOp(roomWrite, ctx, { room: "main-fork-1", files: { "a.txt": { text: "fork" } } });
    await callOp(roomWrite, ctx, { room: "main", files: { "a.txt": { text: "parent" } } });
    const d2 = await callOp(roomDiff, ctx, { room: "main-fork-1" });
    assert.deepEqual(d2.conflicts, ["a.txt"]);
    await refused(
      callOp(roomMerge, ctx, { room: "main-fork-1", expect_state: d2.state }),
      "CONFLICT",
      /both changed a\.txt/,
    );
    await refused(callOp(roomDiff, ctx, { room: "main" }), "USAGE", /is not a fork/);
    for (const slug of ["main", "main-fork-1"]) {
      const fsck = await new Deno.Command("git", {
        args: ["-C", `${home.dir}/rooms/${slug}`, "fsck", "--strict"],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(fsck.code, 0, new TextDecoder().decode(fsck.stderr));
    }
    await refused(
      callOp(roomFork, ctx, { room: "main", as: "main-fork-2" }),
      "CONFLICT",
      /exists already/,
    );
  });
});
