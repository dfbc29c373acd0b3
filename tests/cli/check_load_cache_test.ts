/**
 * `dvergr check` without an answer asks the sandbox only whether the checker loads, and keeps
 * the loads that succeeded (sandbox/load_cache.ts): a checker that throws at load or whose top
 * level never ends is a problem every time, never a kept record.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { dvergrWithPath, tempDirWith } from "../helpers/cli.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { loadCachingRunner } from "../../sandbox/load_cache.ts";
import { checkerLoadProblems } from "../../core/bundle/checker_loads.ts";
import { parseBundle } from "../../core/bundle/parse.ts";
import type { CheckerRunner } from "../../core/checker.ts";

const GOOD = `export function check({ files }) {
  const ok = (files["/out/a.txt"] ?? "") === "a";
  return { checks: { ok }, reward: ok ? 1 : 0 };
}`;
const THROWS = `throw new Error("no");\n${GOOD}`;
const NEVER_ENDS = `for (;;) {}\n${GOOD}`;

function bundleFiles(checker: string): Record<string, string> {
  return {
    "workflow.edn": '{:title "Loads" :task "Write a to /out/a.txt."}',
    "checker.js": checker,
    "gold.edn": "{:a 1}",
    "fixtures/docs/a.md": "a",
  };
}

function bundleOf(checker: string) {
  return parseBundle({ name: "loads", files: new Map(Object.entries(bundleFiles(checker))) });
}

/** A runner that counts the calls that reach `inner`. */
function counting(inner: CheckerRunner): CheckerRunner & { calls: number } {
  const r: CheckerRunner & { calls: number } = {
    calls: 0,
    check: (...a: Parameters<CheckerRunner["check"]>) => {
      r.calls++;
      return inner.check(...a);
    },
    judgeRequests: inner.judgeRequests,
    generate: inner.generate,
    close: () => inner.close(),
  };
  return r;
}

Deno.test("checkerLoadProblems() names a throw at load and a top level that never ends", async () => {
  const pool = createCheckerPool({ workers: 1, defaultTimeoutMs: 400 });
  try {
    assert.deepEqual(await checkerLoadProblems(bundleOf(GOOD), pool), []);
    const threw = await checkerLoadProblems(bundleOf(THROWS), pool);
    assert.equal(threw.length, 1);
    assert.match(threw[0].message, /^threw while loading Error: no/);
    assert.equal(threw[0].line, 1);
    const hung = await checkerLoadProblems(bundleOf(NEVER_ENDS), pool);
    assert.equal(hung.length, 1);
    assert.equal(hung[0].file, "checker.js");
    assert.match(hung[0].message, /^did not finish loading within 400ms: its top level never ends/);
  } finally {
    pool.close();
  }
});

Deno.test("loadCachingRunner() keeps verdicts, never faults: a checker that does not load is asked again", async () => {
  const dir = await Deno.makeTempDir();
  const pool = counting(createCheckerPool({ workers: 1, defaultTimeoutMs: 400 }));
  try {
    const cached = loadCachingRunner(pool, join(dir, "loads"));
    assert.deepEqual(await checkerLoadProblems(bundleOf(GOOD), cached), []);
    assert.deepEqual(await checkerLoadProblems(bundleOf(GOOD), cached), []);
    assert.equal(pool.calls, 1, "the second load of the same checker was asked again");
    assert.equal([...Deno.readDirSync(join(dir, "loads"))].length, 1);
    for (const bad of [THROWS, NEVER_ENDS]) {
      const before: number = pool.calls;
      assert.equal((await checkerLoadProblems(bundleOf(bad), cached)).length, 1);
      assert.equal((await checkerLoadProblems(bundleOf(bad), cached)).length, 1);
      assert.equal(pool.calls, before + 2);
    }
    assert.equal([...Deno.readDirSync(join(dir, "loads"))].length, 1);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr check keeps a checker's successful load in the cache directory, and refuses a throwing one every time", async () => {
  const cache = await Deno.makeTempDir();
  const good = await tempDirWith(bundleFiles(GOOD));
  const bad = await tempDirWith(bundleFiles(THROWS));
  try {
    const env = { XDG_CACHE_HOME: cache };
    for (let i = 0; i < 2; i++) {
      const r = await dvergrWithPath(["check", good], env);
      assert.equal(r.code, 0, r.out + r.err);
      assert.match(r.out, /Problems {2}none/);
    }
    assert.equal([...Deno.readDirSync(join(cache, "dvergr", "checker-loads"))].length, 1);
    for (let i = 0; i < 2; i++) {
      const r = await dvergrWithPath(["check", bad], env);
      assert.equal(r.code, 2, r.out + r.err);
      assert.match(r.out, /checker\.js line 1, column \d+: threw while loading Error: no/);
    }
    assert.equal([...Deno.readDirSync(join(cache, "dvergr", "checker-loads"))].length, 1);
  } finally {
    for (const d of [cache, good, bad]) await Deno.remove(d, { recursive: true });
  }
});
