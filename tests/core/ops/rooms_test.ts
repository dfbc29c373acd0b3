import assert from "node:assert/strict";
import { z } from "zod";
import type { Home } from "../../../core/ports/home.ts";
import type { OpContext } from "../../../core/ops/op.ts";
import { allOps, callOp } from "../../../core/ops/registry.ts";
import {
  ROOM_OPS,
  roomCreate,
  roomFiles,
  roomList,
  roomLog,
  roomRead,
  roomWrite,
} from "../../../core/ops/rooms.ts";
import { CATALOG_BUNDLE_OPS } from "../../../core/ops/catalog_bundles.ts";
import { DvergrError } from "../../../core/errors.ts";
import { withTempHome } from "../../helpers/op_context.ts";

const withHome = (f: (ctx: OpContext, home: Home) => Promise<void>) =>
  withTempHome("dvergr-rooms-", f);

async function rejects(p: Promise<unknown>, code: string, message?: RegExp): Promise<DvergrError> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof DvergrError)) throw e;
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    assert.ok(e.hint, "every refusal has a hint");
    return e;
  }
  assert.fail(`expected ${code}`);
}

Deno.test("room ops have tool names, flat closed schemas and roomScoped when they take a room", () => {
  for (const op of [...ROOM_OPS, ...CATALOG_BUNDLE_OPS]) {
    assert.match(op.name, /^[a-z][a-z0-9_]{0,39}$/);
    assert.ok(allOps().includes(op), `${op.name} is registered`);
    assert.ok(op.description.length > 40, `${op.name} says what it promises`);
    const shape = op.input.shape as Record<string, unknown>;
    assert.equal("room" in shape, op.roomScoped === true, `${op.name} roomScoped`);
    const strict = op.input.safeParse({ bogus: 1 });
    assert.equal(strict.success, false, `${op.name} refuses unknown keys`);
    const schema = z.toJSONSchema(op.input) as {
      additionalProperties: boolean;
      properties: Record<string, { type?: string }>;
    };
    assert.equal(schema.additionalProperties, false, `${op.name} is closed`);
    for (const [key, prop] of Object.entries(schema.properties)) {
      const nested = prop.type === "object";
      assert.ok(
        !nested || (op.name === "room_write" && key === "files"),
        `${op.name}.${key} is flat`,
      );
      assert.ok(!JSON.stringify(prop).match(/anyOf|oneOf|\$ref/), `${op.name}.${key}: no unions`);
    }
  }
  assert.deepEqual(
    ROOM_OPS.map((o) => [o.name, o.toolset]),
    [
      ["room_create", "rooms"],
      ["room_list", "rooms"],
      ["room_log", "rooms"],
      ["room_files", "files"],
      ["room_read", "files"],
      ["room_write", "files"],
    ],
  );
});

Deno.test("room_create creates a git room once; room_list lists rooms with their commits", async () => {
  await withHome(async (ctx, home) => {
    const first = await callOp(roomCreate, ctx, { room: "books" });
    assert.equal(first.created, true);
    assert.equal(first.head.message, "Create room books");
    assert.equal((await callOp(roomCreate, ctx, { room: "books" })).created, false);
    await callOp(roomCreate, ctx, { room: "alpha" });
    const { rooms } = await callOp(roomList, ctx, {});
    assert.deepEqual(rooms.map((r) => [r.room, r.commits]), [["alpha", 1], ["books", 1]]);
    // A real git repository: HEAD on disk.
    await Deno.stat(`${home.dir}/rooms/books/HEAD`);
    await rejects(callOp(roomCreate, ctx, { room: "Not A Slug" }), "ROOM_INVALID");
  });
});

Deno.test("room_write makes one commit of exactly the given paths; null removes; room_log shows it", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    const w1 = await callOp(roomWrite, ctx, {
      room: "r",
      files: { "tables/q3.csv": "a,b\n1,2\n", "notes/x.md": "x", "notes/y.md": "y" },
    });
    assert.equal(w1.changed, true);
    assert.deepEqual(w1.written, ["notes/x.md", "notes/y.md", "tables/q3.csv"]);
    const w2 = await callOp(roomWrite, ctx, {
      room: "r",
      files: { "notes/x.md": null, "notes/z.md": "z" },
      message: "Tidy notes",
    });
    assert.deepEqual(w2.deleted, ["notes/x.md"]);
    const files = await callOp(roomFiles, ctx, { room: "r" });
    assert.deepEqual(files.files.map((f) => f.path), ["notes/y.md", "notes/z.md", "tables/q3.csv"]);
    const log = await callOp(roomLog, ctx, { room: "r" });
    assert.equal(log.total, 3);
    assert.deepEqual(log.commits.map((c) => c.message), [
      "Tidy notes",
      "Write notes/x.md, notes/y.md, tables/q3.csv",
      "Create room r",
    ]);
    assert.equal(log.commits[0].id, w2.commit);
    assert.equal((await callOp(roomLog, ctx, { room: "r", limit: 1 })).commits.length, 1);

    // Writing what is already there changes nothing and makes no commit.
    const same = await callOp(roomWrite, ctx, { room: "r", files: { "notes/y.md": "y" } });
    assert.equal(same.changed, false);
    assert.equal(same.commit, w2.commit);
    assert.equal((await callOp(roomLog, ctx, { room: "r" })).total, 3);
  });
});

Deno.test("room_write refuses .., absolute paths, .git, NUL, backslashes and empty writes, committing nothing", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    for (
      const [path, why] of [
        ["../escape.txt", /leaves the room \("\.\."\)/],
        ["a/../../b", /leaves the room/],
        ["/etc/passwd", /is absolute/],
        [".git/config", /\.git/],
        ["sub/.GIT/hooks/post-commit", /\.git/],
        ["a\0b", /NUL/],
        ["a\\b", /backslash/],
        ["a//b", /empty segment/],
        ["", /is empty/],
        [`tables/${"t".repeat(256)}.csv`, /longer than 255 bytes/],
      ] as const
    ) {
      await rejects(
        callOp(roomWrite, ctx, { room: "r", files: { "ok.txt": "fine", [path]: "x" } }),
        "PATH_INVALID",
        why,
      );
    }
    await rejects(callOp(roomWrite, ctx, { room: "r", files: {} }), "USAGE", /no files given/);
    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "a.txt": "x" }, extra: 1 }),
      "USAGE",
      /unknown parameter extra/,
    );
    assert.equal((await callOp(roomLog, ctx, { room: "r" })).total, 1, "nothing committed");
    await rejects(
      callOp(roomWrite, ctx, { room: "nope", files: { "a.txt": "x" } }),
      "NOT_FOUND",
      /no such room/,
    );
  });
});

Deno.test("room_write refuses text and paths with an unpaired surrogate: rooms hold UTF-8", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "a.md": "half \ud83d of a smile" } }),
      "USAGE",
      /"a\.md".*unpaired surrogate/,
    );
    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "\udc00.md": "x" } }),
      "PATH_INVALID",
      /unpaired surrogate/,
    );
    assert.equal((await callOp(roomLog, ctx, { room: "r" })).total, 1, "nothing committed");
    // A whole pair is one character and is written as it is.
    await callOp(roomWrite, ctx, { room: "r", files: { "a.md": "\ud83d\ude42" } });
    assert.equal((await callOp(roomRead, ctx, { room: "r", path: "a.md" })).content, "\u{1F642}");
  });
});

Deno.test("room_write refuses a file where a directory is and a path below a file, unless the write removes it", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    await callOp(roomWrite, ctx, {
      room: "r",
      files: { "workflows/a/workflow.edn": "{}", "workflows/b/workflow.edn": "{}", "n.md": "n" },
    });
    const n = (await callOp(roomLog, ctx, { room: "r" })).total;
    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "workflows": "oops" } }),
      "PATH_INVALID",
      /"workflows".*is a directory of 2 files/,
    );
    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "n.md/x.md": "x" } }),
      "PATH_INVALID",
      /"n\.md\/x\.md".*n\.md is a file/,
    );
    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "workflows/a/workflow.edn/x": "x" } }),
      "PATH_INVALID",
      /workflows\/a\/workflow\.edn is a file/,
    );
    assert.equal((await callOp(roomLog, ctx, { room: "r" })).total, n, "nothing committed");
    assert.equal((await ctx.home.rooms.readFiles("r", "workflows")).size, 2, "bundles kept");

    // Removing the file in the same write makes room for the directory.
    await callOp(roomWrite, ctx, { room: "r", files: { "n.md": null, "n.md/x.md": "x" } });
    assert.deepEqual([...(await ctx.home.rooms.readFiles("r")).keys()], [
      "n.md/x.md",
      "workflows/a/workflow.edn",
      "workflows/b/workflow.edn",
    ]);
  });
});

Deno.test("room_write takes base64 of UTF-8 text; room_read gives text or base64", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    const text = "Zürich;1.234,56\r\nÅ;\u{1F642}\n";
    const b64 = btoa(String.fromCharCode(...new TextEncoder().encode(text)));
    await callOp(roomWrite, ctx, { room: "r", files: { "t/a.csv": b64 }, encoding: "base64" });
    const read = await callOp(roomRead, ctx, { room: "r", path: "t/a.csv" });
    assert.equal(read.content, text);
    assert.equal(read.bytes, new TextEncoder().encode(text).length);
    const raw = await callOp(roomRead, ctx, { room: "r", path: "t/a.csv", encoding: "base64" });
    assert.equal(raw.content, b64);

    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "b.bin": "//79/A==" }, encoding: "base64" }),
      "USAGE",
      /not UTF-8 text/,
    );
    await rejects(
      callOp(roomWrite, ctx, { room: "r", files: { "b.txt": "no*base64" }, encoding: "base64" }),
      "USAGE",
      /not valid base64/,
    );
  });
});

Deno.test("room_read and room_files: prefixes, a missing file, a directory", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    await callOp(roomWrite, ctx, {
      room: "r",
      files: { "top.md": "t", "w/a/x.txt": "ab", "w/b.txt": "c" },
    });
    assert.equal((await callOp(roomRead, ctx, { room: "r", path: "top.md" })).content, "t");
    const under = await callOp(roomFiles, ctx, { room: "r", prefix: "w/" });
    assert.deepEqual(under.files, [{ path: "w/a/x.txt", bytes: 2 }, { path: "w/b.txt", bytes: 1 }]);
    assert.equal((await callOp(roomFiles, ctx, { room: "r", prefix: "w/a" })).count, 1);
    await rejects(
      callOp(roomRead, ctx, { room: "r", path: "w/a" }),
      "NOT_FOUND",
      /it is a directory of 1 files/,
    );
    await rejects(
      callOp(roomRead, ctx, { room: "r", path: "nope.md" }),
      "NOT_FOUND",
      /no such file/,
    );
    await rejects(callOp(roomRead, ctx, { room: "r", path: "../x" }), "PATH_INVALID");
    await rejects(callOp(roomFiles, ctx, { room: "r", prefix: "/abs" }), "PATH_INVALID");
  });
});
