/**
 * Kept world directories (adapters/world/kept_worlds.ts): a world removed as reusable is
 * emptied and taken by the next world of its parent, under a new name, holding only that
 * world's own seeding; one removed otherwise is gone.
 */
import assert from "node:assert/strict";
import { createWorld } from "../../../adapters/world/world.ts";
import { keptWorlds } from "../../../adapters/world/kept_worlds.ts";

function tree(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(`${dir}${rel}`)) {
    const path = `${rel}/${e.name}`;
    out.push(e.isSymlink ? `${path}@` : e.isDirectory ? `${path}/` : path);
    if (e.isDirectory && !e.isSymlink) out.push(...tree(dir, path));
  }
  return out.sort();
}

Deno.test("a world removed as reusable is taken by the next world of its parent: a new name, only its own files, 0700", async () => {
  const parent = await Deno.makeTempDir({ prefix: "dvergr-kept-" });
  const outside = await Deno.makeTempDir({ prefix: "dvergr-kept-target-" });
  try {
    Deno.writeTextFileSync(`${outside}/keep.txt`, "not the world's");
    const first = await createWorld({ "/docs/case.txt": "one", "/docs/a/b.txt": "deep" }, {
      parent,
      mkdirs: ["/out"],
    });
    // What an attempt may leave: an answer, a deeper tree, a top-level file, links.
    Deno.writeTextFileSync(`${first.dir}/out/answer.edn`, '{:word "one"}');
    Deno.mkdirSync(`${first.dir}/out/x/y`, { recursive: true });
    Deno.writeTextFileSync(`${first.dir}/out/x/y/z.txt`, "z");
    Deno.writeTextFileSync(`${first.dir}/stray.txt`, "stray");
    Deno.symlinkSync(outside, `${first.dir}/out/link`);
    Deno.symlinkSync(outside, `${first.dir}/toplink`);
    Deno.chmodSync(first.dir, 0o710);
    await first.remove({ reusable: true });
    assert.equal(keptWorlds(parent), 1);
    assert.throws(() => Deno.lstatSync(first.dir), Deno.errors.NotFound, "kept under its own name");

    const next = await createWorld({ "/docs/case.txt": "two" }, { parent, mkdirs: ["/out"] });
    assert.equal(keptWorlds(parent), 0);
    assert.notEqual(next.dir, first.dir);
    assert.match(next.dir, /\/world-[0-9a-f]{16}$/);
    assert.deepEqual(tree(next.dir), ["/docs/", "/docs/case.txt", "/out/"]);
    assert.equal(await next.files.read("/docs/case.txt"), "two");
    assert.equal(Deno.statSync(next.dir).mode! & 0o777, 0o700);
    // Links were removed, never followed.
    assert.deepEqual(tree(outside), ["/keep.txt"]);
    await next.remove();
    assert.throws(() => Deno.lstatSync(next.dir), Deno.errors.NotFound);
    assert.equal(keptWorlds(parent), 0);
  } finally {
    await Deno.remove(parent, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("a kept world's top-level directories the next world has none of are removed, even one it has a file of", async () => {
  const parent = await Deno.makeTempDir({ prefix: "dvergr-kept-" });
  try {
    const first = await createWorld({ "/docs/case.txt": "one", "/notes/n.txt": "n" }, {
      parent,
      mkdirs: ["/out"],
    });
    await first.remove({ reusable: true });
    const next = await createWorld({ "/notes": "a file now", "/in/q.txt": "q" }, {
      parent,
      mkdirs: ["/result"],
    });
    try {
      assert.deepEqual(tree(next.dir), ["/in/", "/in/q.txt", "/notes", "/result/"]);
      assert.equal(await next.files.read("/notes"), "a file now");
    } finally {
      await next.remove();
    }
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("a world removed without reusable, or made without a parent, is not kept", async () => {
  const parent = await Deno.makeTempDir({ prefix: "dvergr-kept-" });
  try {
    const w = await createWorld({ "/docs/case.txt": "one" }, { parent });
    await w.remove();
    assert.equal(keptWorlds(parent), 0);
    assert.deepEqual([...Deno.readDirSync(parent)], []);
    const loose = await createWorld({ "/docs/case.txt": "one" });
    await loose.remove({ reusable: true });
    assert.throws(() => Deno.lstatSync(loose.dir), Deno.errors.NotFound);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("a world something wrote to through its files (the model loop, the MCP tools) is never kept", async () => {
  const parent = await Deno.makeTempDir({ prefix: "dvergr-kept-" });
  try {
    const w = await createWorld({ "/docs/case.txt": "one" }, { parent, mkdirs: ["/out"] });
    await w.files.write("/out/answer.edn", '{:word "one"}');
    await w.remove({ reusable: true });
    assert.equal(keptWorlds(parent), 0);
    assert.deepEqual([...Deno.readDirSync(parent)], []);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
