/** readBundleDir(): what a directory on disk becomes as a file map, and what it refuses. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { contentId } from "../../../core/bundle/content_id.ts";
import { DvergrError } from "../../../core/errors.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-bundle-dir-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("readBundleDir() keeps a leading byte order mark, so the content id covers the file's real text", async () => {
  await withDir(async (dir) => {
    const bundle = join(dir, "b");
    await Deno.mkdir(join(bundle, "fixtures"), { recursive: true });
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const body = new TextEncoder().encode('{:title "T" :task "x"}');
    await Deno.writeFile(join(bundle, "workflow.edn"), new Uint8Array([...bom, ...body]));
    await Deno.writeTextFile(join(bundle, "fixtures", "a.md"), "x");
    const fb = await readBundleDir(bundle);
    assert.equal(fb.files.get("workflow.edn"), '\ufeff{:title "T" :task "x"}');
    assert.notEqual(
      contentId(fb.files),
      contentId(new Map([["fixtures/a.md", "x"], ["workflow.edn", '{:title "T" :task "x"}']])),
    );
  });
});

Deno.test("readBundleDir() refuses a symbolic link that loops back into the bundle, naming the link once", async () => {
  await withDir(async (dir) => {
    for (const [name, link, target] of [["self", "loop", "."], ["parent", "d/up", ".."]]) {
      const bundle = join(dir, name);
      await Deno.mkdir(join(bundle, "d"), { recursive: true });
      await Deno.writeTextFile(join(bundle, "workflow.edn"), "{}");
      await Deno.symlink(target, join(bundle, link));
      await assert.rejects(() => readBundleDir(bundle), (e: unknown) => {
        assert.ok(e instanceof DvergrError);
        assert.equal(e.code, "PATH_INVALID");
        assert.match(e.message, new RegExp(`: ${link} is a symbolic link that loops back to `));
        assert.ok(e.hint);
        return true;
      });
    }
  });
});

Deno.test("readBundleDir() follows a symbolic link to a directory elsewhere in the bundle", async () => {
  await withDir(async (dir) => {
    const bundle = join(dir, "b");
    await Deno.mkdir(join(bundle, "fixtures", "docs"), { recursive: true });
    await Deno.writeTextFile(join(bundle, "fixtures", "docs", "a.md"), "x");
    await Deno.mkdir(join(bundle, "cases", "c1"), { recursive: true });
    await Deno.symlink("../../fixtures", join(bundle, "cases", "c1", "fixtures"));
    const fb = await readBundleDir(bundle);
    assert.deepEqual([...fb.files.keys()], ["cases/c1/fixtures/docs/a.md", "fixtures/docs/a.md"]);
  });
});
