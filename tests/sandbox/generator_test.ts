/**
 * generator.js in the checker's sandbox (CheckerRunner.generate): worlds as values, every
 * failure a fault naming generator.js, the same limits as a checker, and determinism.
 */
import assert from "node:assert/strict";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import type { GeneratorRun } from "../../core/checker.ts";
import { generateRequest, worldSeed } from "../../core/bundle/generator.ts";

const REQUEST = { seed: 7, split: "test" as const, index: 3, params: { n: 2 } };

function worldOf(run: GeneratorRun) {
  assert.equal(run.ok, true, run.ok ? "" : `${run.fault}: ${run.message}`);
  return run.ok ? run.world : undefined;
}

function faultOf(run: GeneratorRun) {
  assert.equal(run.ok, false, "expected a fault");
  return run.ok ? { fault: "", message: "" } : run;
}

Deno.test("generate() gives the world generator.js makes from its request", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const run = await pool.generate(
      `export function generate({ seed, split, index, params }) {
        return { files: { "/docs/a.md": split + " " + index + " " + seed + " " + params.n },
                 gold: { expected: { n: index * params.n } }, note: "dropped" };
      }`,
      REQUEST,
    );
    assert.deepEqual(worldOf(run), {
      files: { "/docs/a.md": "test 3 7 2" },
      gold: { expected: { n: 6 } },
    });
  } finally {
    pool.close();
  }
});

Deno.test("generate() is deterministic: Math.random starts from the world's seed", async () => {
  const pool = createCheckerPool({ workers: 1 });
  const source = `let calls = 0;
    export function generate({ seed }) {
      calls++; // module state: restored before every call
      return { files: { "/docs/r.txt": String(Math.random()) + " " + calls }, gold: seed };
    }`;
  try {
    const [a, b, other] = await Promise.all([
      pool.generate(source, REQUEST),
      pool.generate(source, REQUEST),
      pool.generate(source, { ...REQUEST, seed: 8 }),
    ]);
    assert.deepEqual(worldOf(a), worldOf(b));
    assert.match(worldOf(a)!.files["/docs/r.txt"], / 1$/);
    assert.notEqual(worldOf(a)!.files["/docs/r.txt"], worldOf(other)!.files["/docs/r.txt"]);
  } finally {
    pool.close();
  }
});

Deno.test("world seeds differ by split and index and stay the same for the same world", () => {
  const seeds = new Set<number>();
  for (const split of ["train", "test"] as const) {
    for (let i = 0; i < 50; i++) seeds.add(worldSeed(20261001, split, i));
  }
  assert.equal(seeds.size, 100);
  assert.equal(worldSeed(20261001, "test", 7), worldSeed(20261001, "test", 7));
  assert.notEqual(worldSeed(1, "test", 7), worldSeed(2, "test", 7));
  const r = generateRequest({ split: "train", seed: 5 }, 2, { a: 1 });
  assert.deepEqual(r, {
    seed: worldSeed(5, "train", 2),
    split: "train",
    index: 2,
    params: { a: 1 },
  });
  assert.ok(Number.isInteger(r.seed) && r.seed >= 0 && r.seed < 2 ** 32);
});

Deno.test("generate() faults name generator.js: throw, syntax, import, no export, bad world", async () => {
  const pool = createCheckerPool({ workers: 1 });
  const cases: [string, string, RegExp][] = [
    [
      `export function generate() {\n  throw new Error("no ledger");\n}`,
      "threw",
      /^generator\.js's generate threw Error: no ledger \(generator\.js line 2, column \d+\)$/,
    ],
    ["export function generate( {", "syntax", /^generator\.js has a syntax error/],
    [
      `import x from "./data.js"; export function generate() { return x; }`,
      "syntax",
      /^generator\.js cannot import "(\.\/)?data\.js": a generator must be self-contained/,
    ],
    ["export function check() {}", "no-check", /^generator\.js exports no `generate` function$/],
    [
      `export function generate() { return { files: { "/docs/a": 1 }, gold: 1 }; }`,
      "invalid-verdict",
      /^generator\.js's generate returned no world: files\.\/docs\/a: expected a string, got 1$/,
    ],
    [
      `export function generate() { return { files: {} }; }`,
      "invalid-verdict",
      /gold: missing/,
    ],
    [
      `export function generate() { return { files: {}, gold: { n: NaN } }; }`,
      "invalid-verdict",
      /gold\.n: NaN cannot be gold/,
    ],
    [
      `export function generate() { return "a world"; }`,
      "invalid-verdict",
      /returned no world: expected an object with `files` and `gold`/,
    ],
  ];
  try {
    for (const [source, fault, message] of cases) {
      const f = faultOf(await pool.generate(source, REQUEST));
      assert.equal(f.fault, fault, f.message);
      assert.match(f.message, message);
    }
  } finally {
    pool.close();
  }
});

Deno.test("generate() is bounded like a checker: time, memory, no Deno", async () => {
  const pool = createCheckerPool({ workers: 1, memoryBytes: 64 * 1024 * 1024 });
  try {
    const loop = faultOf(
      await pool.generate("export function generate() { for (;;) {} }", REQUEST, {
        timeoutMs: 300,
      }),
    );
    assert.equal(loop.fault, "timeout");
    assert.equal(loop.message, "generator.js did not finish within 300ms");
    const hog = faultOf(
      await pool.generate(
        `export function generate() { const a = []; for (;;) a.push("x".repeat(1 << 16) + a.length); }`,
        REQUEST,
        { timeoutMs: 60_000 },
      ),
    );
    assert.equal(hog.fault, "memory", hog.message);
    assert.match(hog.message, /^generator\.js's generate ran out of memory/);
    // The pool goes on: the next world is made.
    const world = worldOf(
      await pool.generate(
        `export function generate() {
          return { files: { "/docs/env.txt": typeof Deno + " " + typeof fetch }, gold: 1 };
        }`,
        REQUEST,
      ),
    );
    assert.equal(world!.files["/docs/env.txt"], "undefined undefined");
  } finally {
    pool.close();
  }
});
