/**
 * No silent loss in rooms: a write that would make a path both a file and a directory is
 * refused, and after any sequence of accepted writes the repository passes
 * `git fsck --strict` and holds exactly what was accepted.
 */
import assert from "node:assert/strict";
import { gitRoomStore } from "../../../../adapters/rooms/git/room_store.ts";
import { isDvergrError } from "../../../../core/errors.ts";
import { seededRandom } from "../../../../core/seeded_random.ts";

const HAS_GIT = (() => {
  try {
    return new Deno.Command("git", { args: ["--version"] }).outputSync().success;
  } catch {
    return false;
  }
})();

// The refusal of a path both a file and a directory, for every room store, is in
// tests/ports/room_store_contract.ts.

const SEGMENTS = ["a", "b", "c", ".git.", "git~1", ".GIT", "x y", "é", ".gitkeep", "a.b"];

Deno.test("gitRoomStore() passes git fsck --strict after any sequence of accepted writes", async () => {
  const dir = await Deno.makeTempDir();
  const rooms = gitRoomStore(dir);
  await rooms.createRoom("r");
  const next = seededRandom(20261201);
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
  const model = new Map<string, string>();
  let accepted = 0;
  let refused = 0;
  for (let step = 0; step < 120; step++) {
    const changes = new Map<string, string | null>();
    const n = 1 + Math.floor(next() * 3);
    for (let i = 0; i < n; i++) {
      const depth = 1 + Math.floor(next() * 3);
      const path = Array.from({ length: depth }, () => pick(SEGMENTS)).join("/");
      changes.set(path, next() < 0.2 ? null : `v${step}.${i}`);
    }
    try {
      await rooms.writeFiles("r", changes, `step ${step}`);
      accepted++;
      for (const [p, t] of changes) t === null ? model.delete(p) : model.set(p, t);
    } catch (e) {
      assert.ok(isDvergrError(e), `step ${step}: ${e}`);
      refused++;
    }
    // What the room holds is exactly what was accepted: nothing silently lost.
    if (step % 20 === 19) {
      assert.deepEqual(
        await rooms.readFiles("r"),
        new Map([...model].sort(([x], [y]) => (x < y ? -1 : 1))),
      );
    }
  }
  assert.ok(accepted > 20 && refused > 20, `accepted ${accepted}, refused ${refused}`);
  if (HAS_GIT) {
    const out = new Deno.Command("git", {
      args: ["-C", `${dir}/r`, "fsck", "--strict", "--no-dangling"],
    }).outputSync();
    assert.equal(out.success, true, new TextDecoder().decode(out.stderr));
  }
  await Deno.remove(dir, { recursive: true });
});
