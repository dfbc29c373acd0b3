import assert from "node:assert/strict";
import { join } from "node:path";
import { DvergrError } from "../../../../core/errors.ts";
import { gitObject } from "../../../../core/codecs/git/objects.ts";
import { installPack, PackBuilder } from "../../../../adapters/rooms/git/pack_write.ts";
import {
  applyDelta,
  packIndexes,
  readPackIndex,
} from "../../../../adapters/rooms/git/pack_read.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const roomInvalid = (e: unknown) => e instanceof DvergrError && e.code === "ROOM_INVALID";

Deno.test("applyDelta() copies from the base and inserts new bytes", () => {
  const base = utf8("hello world");
  const delta = Uint8Array.from([
    11, // base size
    18, // result size
    0x80 | 0x10, // copy, offset 0 (no offset bytes), one size byte
    6,
    7, // insert 7 bytes
    ...utf8("there, "),
    0x80 | 0x01 | 0x10, // copy, one offset byte, one size byte
    6,
    5,
  ]);
  assert.equal(text(applyDelta("/rooms/r", base, delta)), "hello there, world");
});

Deno.test("applyDelta() refuses a delta made for another base, naming the room", () => {
  const delta = Uint8Array.from([12, 1, 1, 0x41]);
  assert.throws(
    () => applyDelta("/rooms/books", utf8("hello world"), delta),
    (e) => roomInvalid(e) && /room "books".*does not fit its base/.test((e as Error).message),
  );
});

Deno.test("applyDelta() refuses a copy beyond its base", () => {
  const delta = Uint8Array.from([5, 4, 0x80 | 0x01 | 0x10, 3, 4]);
  assert.throws(() => applyDelta("/rooms/r", utf8("hello"), delta), roomInvalid);
});

Deno.test("readPackIndex() is null for a pack that is gone and refuses an index of another pack", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const packDir = join(dir, "objects", "pack");
    const names: string[] = [];
    for (const t of ["one", "two"]) {
      const builder = new PackBuilder();
      builder.addObject(gitObject("blob", utf8(t)));
      const built = builder.finish();
      await installPack(dir, built);
      names.push(built.name);
    }
    assert.equal(readPackIndex(dir, "0".repeat(40)), null);
    await Deno.copyFile(
      join(packDir, `pack-${names[1]}.idx`),
      join(packDir, `pack-${names[0]}.idx`),
    );
    assert.throws(
      () => readPackIndex(dir, names[0]),
      (e) => roomInvalid(e) && /is not a version-2 index of its pack/.test((e as Error).message),
    );
  } finally {
    packIndexes.delete(dir);
    await Deno.remove(dir, { recursive: true });
  }
});
