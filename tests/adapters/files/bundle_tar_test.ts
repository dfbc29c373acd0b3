/**
 * Reading a bundle directory through tar (adapters/files/bundle_tar.ts): the same file map as
 * the walk of readBundleDir(), or null for whatever the walk must judge, and a stream parsed
 * the same wherever its chunks are cut.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { readTreeByTar, TarFiles } from "../../../adapters/files/bundle_tar.ts";
import { DvergrError } from "../../../core/errors.ts";

const tarHere = ["/usr/bin/tar", "/bin/tar"].some((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "dvergr-bundle-tar-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function write(root: string, rel: string, data: string | Uint8Array): Promise<void> {
  await Deno.mkdir(join(root, rel, ".."), { recursive: true });
  if (typeof data === "string") await Deno.writeTextFile(join(root, rel), data);
  else await Deno.writeFile(join(root, rel), data);
}

/** A bundle with what tar writes in more than one way: long and UTF-8 names, a BOM, links. */
async function variedBundle(root: string): Promise<void> {
  await write(root, "workflow.edn", '{:title "T" :task "x"}');
  await write(root, ".hidden", "h");
  await write(root, "empty.txt", "");
  await write(root, "bom.txt", new Uint8Array([0xef, 0xbb, 0xbf, 0x78]));
  await write(root, `fixtures/${"d".repeat(90)}/${"é".repeat(60)}.md`, "long ✓");
  await write(root, "cases/c1/gold.edn", '{:word "w1"}');
  await write(root, "big.txt", "0123456789abcdef".repeat(40_000));
  // A file linked twice is two files, as the walk reads it.
  await Deno.link(join(root, "cases/c1/gold.edn"), join(root, "cases/gold-copy.edn"));
  await Deno.mkdir(join(root, "cases", "empty-dir"));
}

Deno.test({
  name: "readTreeByTar() reads what the walk of readBundleDir() reads, names and texts alike",
  ignore: !tarHere,
  fn: async () => {
    await withDir(async (dir) => {
      await variedBundle(dir);
      const walked = await readBundleDir(dir); // fewer than 64 cases: the walk
      const tarred = await readTreeByTar(dir);
      assert.ok(tarred !== null);
      assert.deepEqual(new Map([...tarred].sort()), new Map([...walked.files].sort()));
      assert.equal(tarred.get("bom.txt"), "\ufeffx");
      assert.equal(tarred.get("cases/gold-copy.edn"), '{:word "w1"}');
    });
  },
});

Deno.test({
  name:
    "readTreeByTar() answers null for what the walk must judge: a link, a FIFO, a socket, a text or a name it refuses",
  ignore: !tarHere,
  fn: async () => {
    // Each adds what the walk must judge; a socket stays open while the tree is read (Deno
    // removes its file when it closes).
    const cases: [string, (root: string) => Promise<void | (() => void)>][] = [
      ["symlink", (root) => Deno.symlink("workflow.edn", join(root, "link.edn"))],
      ["fifo", async (root) => {
        const made = await new Deno.Command("mkfifo", { args: [join(root, "pipe")] }).output();
        assert.ok(made.success);
      }],
      ["socket", (root) => {
        const listener = Deno.listen({ transport: "unix", path: join(root, "sock") });
        return Promise.resolve(() => listener.close());
      }],
      ["latin-1 text", (root) => write(root, "fixtures/a.txt", new Uint8Array([0x63, 0xe9]))],
      ["git alias", (root) => write(root, "fixtures/.GIT/config", "x")],
    ];
    for (const [what, add] of cases) {
      await withDir(async (dir) => {
        await write(dir, "workflow.edn", "{}");
        const done = await add(dir);
        try {
          assert.equal(await readTreeByTar(dir), null, what);
        } finally {
          done?.();
        }
      });
    }
  },
});

Deno.test({
  name: "TarFiles parses GNU tar's stream the same wherever its chunks are cut",
  ignore: !tarHere,
  fn: async () => {
    await withDir(async (dir) => {
      await variedBundle(dir);
      const out = await new Deno.Command("tar", {
        args: [
          "--create",
          "--format=gnu",
          "--hard-dereference",
          "--file=-",
          "--directory",
          dir,
          ".",
        ],
        stdout: "piped",
      }).output();
      assert.ok(out.success);
      const whole = new TarFiles();
      assert.ok(whole.push(out.stdout));
      const expected = whole.end();
      assert.ok(expected !== null && expected.size === 8);
      for (const size of [1, 7, 511, 512, 513, 4096]) {
        const parser = new TarFiles();
        for (let at = 0; at < out.stdout.byteLength; at += size) {
          assert.ok(parser.push(out.stdout.subarray(at, at + size)));
        }
        assert.deepEqual(parser.end(), expected, `chunks of ${size}`);
      }
      // Cut short of its end blocks, a stream is not an archive.
      const short = new TarFiles();
      short.push(out.stdout.subarray(0, 4096));
      assert.equal(short.end(), null);
    });
  },
});

/** A bundle of `n` cases, enough that readBundleDir() reads it through tar. */
async function manyCases(root: string, n = 64): Promise<void> {
  await write(root, "workflow.edn", "{}");
  for (let i = 0; i < n; i++) await write(root, `cases/c${i}/gold.edn`, `{:i ${i}}`);
}

Deno.test({
  name:
    "readBundleDir() of many cases reads them all, and refuses what the walk refuses in the walk's words",
  ignore: !tarHere,
  fn: async () => {
    await withDir(async (dir) => {
      const ok = join(dir, "ok");
      await manyCases(ok);
      const fb = await readBundleDir(ok);
      assert.equal(fb.name, "ok");
      assert.equal(fb.files.size, 65);
      assert.equal(fb.files.get("cases/c63/gold.edn"), "{:i 63}");
      assert.deepEqual([...fb.files.keys()], [...fb.files.keys()].sort());

      const latin = join(dir, "latin");
      await manyCases(latin);
      await write(latin, "cases/c5/q.txt", new Uint8Array([0xe9]));
      await assert.rejects(() => readBundleDir(latin), (e: unknown) => {
        assert.ok(e instanceof DvergrError);
        assert.equal(e.code, "BUNDLE_INVALID");
        assert.match(e.message, /cases\/c5\/q\.txt is not UTF-8 text/);
        return true;
      });

      const loop = join(dir, "loop");
      await manyCases(loop);
      await Deno.symlink("..", join(loop, "cases", "c3", "up"));
      await assert.rejects(() => readBundleDir(loop), (e: unknown) => {
        assert.ok(e instanceof DvergrError);
        assert.match(e.message, /cases\/c3\/up is a symbolic link that loops back to /);
        return true;
      });
    });
  },
});
