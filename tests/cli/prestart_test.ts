/**
 * dvergr benchmark's checker pool starts before the command's modules load (cli/prestart.ts):
 * a process worker for the bundle's checker, which the run then takes, and nothing for
 * --check, --enqueue or arguments that are not a bundle directory.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { prestartBenchmarkPool, takeBenchmarkPool } from "../../cli/prestart.ts";

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
