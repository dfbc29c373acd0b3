import assert from "node:assert/strict";
import { join } from "node:path";
import { readBundleDir, writeBundleDir, writeTree } from "../../../adapters/files/bundle_dir.ts";
import { DvergrError } from "../../../core/errors.ts";
import type { FileMap } from "../../../core/bundle/file_map.ts";

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

// A case pack's shape: directories that hold only directories, and many of them.
function casesMap(n: number): FileMap {
  const files: FileMap = new Map([["workflow.edn", '{:title "t"}\n'], ["checker.js", "ü €\n"]]);
  for (let i = 0; i < n; i++) {
    files.set(`cases/C${i}/fixtures/docs/case.edn`, `{"text" "Fall ${i} – Müller"}\n`);
    files.set(`cases/C${i}/gold.edn`, `{:expected {"a" "${i}"}}\n`);
  }
  return files;
}

Deno.test("writeTree() writes every file as UTF-8, creating directories that hold only directories", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-bundle-dir-" });
  try {
    const files = casesMap(300);
    files.set("a/b/c/d/deep.txt", "deep");
    await writeTree(join(dir, "b"), files);
    const back = await readBundleDir(join(dir, "b"));
    assert.equal(back.files.size, files.size);
    for (const [p, t] of files) assert.equal(back.files.get(p), t, p);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeTree() writes into an existing directory and beside existing subdirectories", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-bundle-dir-" });
  try {
    await Deno.mkdir(join(dir, "out", "x"), { recursive: true });
    await writeTree(dir, new Map([["out/x/a.txt", "a"], ["out/y/b.txt", "b"], ["c.txt", "c"]]));
    assert.equal(await Deno.readTextFile(join(dir, "out", "x", "a.txt")), "a");
    assert.equal(await Deno.readTextFile(join(dir, "out", "y", "b.txt")), "b");
    assert.equal(await Deno.readTextFile(join(dir, "c.txt")), "c");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeBundleDir() refuses a non-empty directory unless force, then replaces it whole", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-bundle-dir-" });
  try {
    const out = join(dir, "pack");
    await writeBundleDir(out, casesMap(50));
    await assert.rejects(
      () => writeBundleDir(out, casesMap(2)),
      (e: unknown) => e instanceof DvergrError && e.code === "TARGET_EXISTS",
    );
    await writeBundleDir(out, casesMap(2), { force: true });
    assert.deepEqual(await names(join(out, "cases")), ["C0", "C1"]);
    assert.deepEqual(await names(dir), ["pack"]); // no temporary or old directory is left
    assert.equal((await readBundleDir(out)).files.size, 6);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeBundleDir() leaves the old directory when writing the new one fails", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-bundle-dir-" });
  try {
    const out = join(dir, "pack");
    await writeBundleDir(out, casesMap(3));
    // A file and a directory of the same path cannot both be written.
    const bad: FileMap = new Map([["a", "file"], ["a/b.txt", "under a file"]]);
    await assert.rejects(() => writeBundleDir(out, bad, { force: true }));
    assert.deepEqual(await names(dir), ["pack"]);
    assert.equal((await readBundleDir(out)).files.size, 8);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
