/**
 * dvergr benchmark's checker pool starts before the command's modules load (cli/prestart.ts):
 * a process worker for the bundle's checker, which the run then takes, and nothing for
 * --check, --enqueue or arguments that are not a bundle directory.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  BENCHMARK_WORKERS,
  benchmarkPoolOptions,
  prestartBenchmarkPool,
  takeBenchmarkPool,
} from "../../cli/prestart.ts";
import { sandboxIdentity } from "../../sandbox/load_cache.ts";
import { layoutStore } from "../../sandbox/layout_cache.ts";
import { quickjsImageStore } from "../../sandbox/quickjs_image_cache.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { removeSettled } from "../helpers/image_cache.ts";

async function bundleDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-prestart-" });
  await Deno.writeTextFile(join(dir, "workflow.edn"), '{:title "t" :task "t"}');
  await Deno.writeTextFile(
    join(dir, "checker.js"),
    "export function check() { return { checks: { ok: true }, reward: 1 }; }",
  );
  return dir;
}

Deno.test("benchmark prestart: a process worker starts for the bundle directory's checker.js and the run takes the pool", async () => {
  const dir = await bundleDir();
  try {
    const release = await prestartBenchmarkPool(["--candidate", "builtin:reference", dir]);
    const pool = takeBenchmarkPool();
    assert.ok(pool !== undefined);
    try {
      assert.equal(pool.stats().workersStarted, 1);
      assert.equal(pool.stats().workerKind, "process");
      // Taken: the release left at the command's end does not close it.
      release();
      const run = await pool.check(
        await Deno.readTextFile(join(dir, "checker.js")),
        { files: {}, gold: null, params: {}, fetched: {}, judgements: {} },
      );
      assert.ok(run.ok, run.ok ? "" : run.message);
      assert.equal(takeBenchmarkPool(), undefined);
    } finally {
      pool.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("benchmark prestart: nothing starts for --check, --enqueue or no bundle directory", async () => {
  const dir = await bundleDir();
  try {
    for (const args of [[dir, "--check"], [dir, "--enqueue"], ["--home", "/nonexistent"]]) {
      const release = await prestartBenchmarkPool(args);
      assert.equal(takeBenchmarkPool(), undefined, args.join(" "));
      release();
    }
    // Not taken (the command failed first): the release closes it.
    await prestartBenchmarkPool([dir]);
    const release = await prestartBenchmarkPool([dir]);
    release();
    assert.equal(takeBenchmarkPool(), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("benchmark prestart: the workers get the QuickJS layout kept in the cache directory, and the first that finds it keeps it there (a kept file that does not fit)", async () => {
  const dir = await bundleDir();
  const cache = await Deno.makeTempDir({ prefix: "dvergr-prestart-cache-" });
  try {
    const layouts = join(cache, "dvergr", "sandbox-layouts");
    const files = async () => {
      try {
        return await Array.fromAsync(Deno.readDir(layouts), (e) => e.name);
      } catch {
        return [];
      }
    };
    assert.deepEqual(await files(), []);
    // Nothing kept, a worker takes the pinned module's layout (sandbox/known_layout.ts) and
    // finds none; a kept file that does not fit makes the first worker find it and keep it.
    await Deno.mkdir(layouts, { recursive: true });
    await Deno.writeTextFile(join(layouts, `${sandboxIdentity()}.json`), '{"gapStart": 1}');
    // The process's environment is shared with the test modules running beside: the cache
    // is set only while the pool is made (it takes the layout file's path then).
    const before = Deno.env.get("XDG_CACHE_HOME");
    Deno.env.set("XDG_CACHE_HOME", cache);
    let release: () => void;
    try {
      release = await prestartBenchmarkPool([dir]);
    } finally {
      if (before === undefined) Deno.env.delete("XDG_CACHE_HOME");
      else Deno.env.set("XDG_CACHE_HOME", before);
    }
    const pool = takeBenchmarkPool()!;
    release();
    try {
      const run = await pool.check(
        await Deno.readTextFile(join(dir, "checker.js")),
        { files: {}, gold: null, params: {}, fetched: {}, judgements: {} },
      );
      assert.ok(run.ok, run.ok ? "" : run.message);
    } finally {
      pool.close();
    }
    // Found by the first worker (none that fits was kept) and kept under the sandbox's identity.
    const kept = await files();
    assert.deepEqual(kept, [`${sandboxIdentity()}.json`]);
    const layout = JSON.parse(await Deno.readTextFile(join(layouts, kept[0])));
    assert.equal(typeof layout.lowSha256, "string");
    assert.ok(layout.gapStart > 0 && layout.gapEnd > layout.gapStart);
  } finally {
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("benchmark pool options: the workers restore the boot image kept in the cache directory, which the first keeps there", async () => {
  const dir = await bundleDir();
  const cache = await Deno.makeTempDir({ prefix: "dvergr-prestart-cache-" });
  try {
    const images = join(cache, "sandbox-images");
    const file = join(images, `${sandboxIdentity()}.img`);
    const source = await Deno.readTextFile(join(dir, "checker.js"));
    const input = { files: {}, gold: null, params: {}, fetched: {}, judgements: {} };
    const restored: boolean[] = [];
    for (let round = 0; round < 2; round++) {
      const opts = benchmarkPoolOptions({
        keptLayouts: () => layoutStore(null),
        keptImages: () => quickjsImageStore(images),
      });
      assert.equal(opts.workers, BENCHMARK_WORKERS);
      const pool = createCheckerPool(opts);
      try {
        const run = await pool.check(source, input);
        assert.ok(run.ok, run.ok ? "" : run.message);
        assert.equal(pool.stats().workerKind, "process");
        restored.push(pool.stats().lastBootRestored === true);
      } finally {
        pool.close();
      }
      // The first worker ran the prelude; its image is written after its ready.
      while (!(await Deno.stat(file).then(() => true, () => false))) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    assert.deepEqual(restored, [false, true]);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await removeSettled(cache);
  }
});
