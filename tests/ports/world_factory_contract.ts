/**
 * The WorldFactory contract (core/ports/world_factory.ts): what every world it makes must
 * do, whichever way it is made, as one suite run by tests/ports/world_factory_test.ts on
 * the directory worlds and the memory worlds of adapters/world/world.ts.
 *
 * A new kind of world plugs in with one line there:
 *
 * ```ts
 * worldContract("myWorld", (fixtures, mkdirs) => makeMyWorld(fixtures, { mkdirs }));
 * ```
 *
 * Covered: fixtures seeded at their world paths, capture directories made, files written
 * (parents created), read and listed sorted, a missing file NOT_FOUND, paths that leave the
 * world and a file below a file refused, capture of the capture directories only, sorted,
 * with its limits, and removal.
 */
import assert from "node:assert/strict";
import { isDvergrError } from "../../core/errors.ts";
import type { World } from "../../core/ports/world_factory.ts";

export type WorldMaker = (fixtures: Record<string, string>, mkdirs: string[]) => Promise<World>;

/** Registers the contract's tests for one way of making worlds. */
export function worldContract(name: string, make: WorldMaker): void {
  const test = (what: string, fn: (w: World) => Promise<void>) =>
    Deno.test(`World contract [${name}]: ${what}`, async () => {
      const world = await make(
        { "/docs/q.txt": "question", "/docs/deep/a.md": "# a", "/gold.edn": "{}" },
        ["/out"],
      );
      try {
        await fn(world);
      } finally {
        await world.remove();
      }
    });

  test("fixtures are at their world paths; the capture directories exist, empty", async (w) => {
    assert.equal(await w.files.read("/docs/q.txt"), "question");
    assert.deepEqual(await w.files.list("/docs"), ["/docs/deep/a.md", "/docs/q.txt"]);
    assert.deepEqual(await w.files.list("/out"), []);
    assert.deepEqual(await w.files.list("/"), ["/docs/deep/a.md", "/docs/q.txt", "/gold.edn"]);
  });

  test("write() creates parents; read() and list() see it; a missing file is NOT_FOUND", async (w) => {
    await w.files.write("/out/sub/dir/answer.txt", "right");
    await w.files.write("/out/sub/dir/answer.txt", "righter");
    assert.equal(await w.files.read("/out/sub/dir/answer.txt"), "righter");
    assert.deepEqual(await w.files.list("/out"), ["/out/sub/dir/answer.txt"]);
    await assert.rejects(
      w.files.read("/out/none.txt"),
      (e) => isDvergrError(e) && e.code === "NOT_FOUND",
    );
  });

  test("paths that leave the world, and a file below a file, are refused", async (w) => {
    for (const bad of ["/../etc/passwd", "relative.txt", "/out/a\\b", "/out/nul\0"]) {
      await assert.rejects(w.files.write(bad, "x"), isDvergrError, bad);
    }
    await w.files.write("/out/answer.txt", "a");
    await assert.rejects(w.files.write("/out/answer.txt/x", "no"), /not a directory/);
    assert.deepEqual(await w.files.list("/out"), ["/out/answer.txt"]);
  });

  test("capture() reads the capture directories only, sorted, within its limits", async (w) => {
    await w.files.write("/out/b.txt", "b");
    await w.files.write("/out/a/deep.txt", "deep");
    await w.files.write("/out/big.txt", "x".repeat(50));
    await w.files.write("/elsewhere.txt", "not captured");
    const all = await w.capture(["/out"]);
    assert.deepEqual(Object.keys(all.files), ["/out/a/deep.txt", "/out/b.txt", "/out/big.txt"]);
    assert.equal(all.files["/out/b.txt"], "b");
    assert.deepEqual(all.skipped, []);
    const bounded = await w.capture(["/out"], { maxFileBytes: 10 });
    assert.deepEqual(Object.keys(bounded.files), ["/out/a/deep.txt", "/out/b.txt"]);
    assert.deepEqual(bounded.skipped.map((s) => [s.path, s.reason]), [[
      "/out/big.txt",
      "too-large",
    ]]);
    assert.equal(bounded.bytes, 5);
  });
}
