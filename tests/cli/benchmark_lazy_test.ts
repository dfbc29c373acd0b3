/**
 * `dvergr benchmark` of a well-formed bundle with built-in candidates and no candidates.edn
 * never evaluates zod (~20 ms of its start): its flags come from the benchmark's table of
 * fields without the MCP schema (core/ops/benchmark_args.ts), the bundle is parsed by
 * parseBundleLazily (core/bundle/parse_lazily.ts) and candidates.edn's schema loads only with
 * the file. A bundle with a schema problem still gets zod's problems (the zod path).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeSideBySideBundle } from "../../bench/side_by_side_bundle.ts";
import { DVERGR_PERMISSIONS } from "../../core/permissions.ts";

async function probe(bundle: string, home: string) {
  const file = new URL("../helpers/benchmark_zod_probe.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_PERMISSIONS, file, bundle, home],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, stderr);
  const last = new TextDecoder().decode(out.stdout).trim().split("\n").pop()!;
  return JSON.parse(last) as { code: number; zod: boolean; out: string; err: string };
}

Deno.test("dvergr benchmark of built-ins on a well-formed bundle runs without loading zod", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-lazy-" });
  try {
    await writeSideBySideBundle(join(dir, "bundle"), 3);
    const seen = await probe(join(dir, "bundle"), join(dir, "home"));
    assert.equal(seen.code, 0, seen.err);
    // The reference answer is the first case's (bench/side_by_side_bundle.ts): one passes.
    assert.match(seen.out, /builtin:reference\s+reward 0\.333\s+passed 1\/3/);
    assert.equal(seen.zod, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr benchmark of a bundle with a schema problem reports zod's problems", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-lazy-" });
  try {
    await writeSideBySideBundle(join(dir, "bundle"), 2);
    await Deno.writeTextFile(join(dir, "bundle/workflow.edn"), '{:task "t" :timeout-ms "soon"}');
    const seen = await probe(join(dir, "bundle"), join(dir, "home"));
    assert.equal(seen.code, 2, seen.err);
    assert.match(seen.err, /workflow\.edn/);
    assert.match(seen.err, /timeout-ms/);
    assert.equal(seen.zod, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
