/**
 * generator.clj (the earlier system's generator file) in the Clojure sandbox: worlds with
 * their gold kept as EDN, `rand` started from the world's seed, faults naming generator.clj;
 * and the examples ledger-totals (generator.js) and ledger-totals-clj (generator.clj) making
 * the same worlds.
 */
import assert from "node:assert/strict";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import type { GeneratorRun } from "../../../core/checker.ts";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { withGeneratedCases } from "../../../core/bundle/generated_cases.ts";
import { checkerInputFor } from "../../../core/bundle/checker_input.ts";

/** One pool for the file (SCI boots once); its worker outlives each test. */
const pool = createCheckerPool({ workers: 1 });
globalThis.addEventListener("unload", () => pool.close());
const opts = { sanitizeOps: false, sanitizeResources: false };

const REQUEST = {
  seed: 5,
  split: "test" as const,
  index: 3,
  params: { unit: "kg" },
  clojure: {
    params: ["m", ["k", null, "unit"], "kg", ["k", null, "kinds"], ["s", ["k", null, "a"]]],
  },
};
const CLJ = { file: "generator.clj" as const };

function faultOf(run: GeneratorRun) {
  assert.equal(run.ok, false, "expected a fault");
  return run.ok ? { fault: "", message: "" } : run;
}

Deno.test(
  "generator.clj's generate: a world, its gold kept as EDN, rand from the seed",
  opts,
  async () => {
    const source = `(ns g)
(defn generate [{:keys [seed split index params]}]
  {:files {"/docs/a.md" (str (name split) " " index " " seed " " (:unit params) " "
                             (contains? (:kinds params) :a) " " (rand))}
   :gold {:expected {:n index} :tags #{:x}}
   :dropped true})`;
    const [a, b, other] = await Promise.all([
      pool.generate(source, REQUEST, CLJ),
      pool.generate(source, REQUEST, CLJ),
      pool.generate(source, { ...REQUEST, seed: 6 }, CLJ),
    ]);
    assert.equal(a.ok, true, a.ok ? "" : a.message);
    if (!a.ok || !other.ok) return;
    assert.match(a.world.files["/docs/a.md"], /^test 3 5 kg true 0\.\d+$/);
    assert.deepEqual(a.world.gold, { expected: { n: 3 }, tags: ["x"] });
    assert.deepEqual(a.world.goldEdn, [
      "m",
      ["k", null, "expected"],
      ["m", ["k", null, "n"], 3],
      ["k", null, "tags"],
      ["s", ["k", null, "x"]],
    ]);
    assert.deepEqual(b, { ...a, ms: b.ms });
    assert.notEqual(other.world.files["/docs/a.md"], a.world.files["/docs/a.md"]);
  },
);

Deno.test(
  "generator.clj faults name it: throw, syntax, no generate, timeout, bad world",
  opts,
  async () => {
    const cases: [string, string, RegExp][] = [
      [
        `(ns g)\n(defn generate [_]\n  (throw (ex-info "no ledger" {:why 1})))`,
        "threw",
        /^generator\.clj's generate threw: no ledger \{:why 1\} \(generator\.clj line 3, column \d+\)$/,
      ],
      ["(defn generate [_] (", "syntax", /^generator\.clj has a syntax error/],
      ["(defn check [_] 1)", "no-check", /^generator\.clj defines no `generate`/],
      [
        `(defn generate [_] {:files {"/a" 1} :gold 1})`,
        "invalid-verdict",
        /^generator\.clj's generate returned no world: files\.\/a: expected a string, got 1$/,
      ],
      [
        `(defn generate [_] {:files {"/a" "x"} :gold nil})`,
        "invalid-verdict",
        /gold: missing/,
      ],
      [`(defn generate [_] [1 2])`, "invalid-verdict", /expected a map \{:files \{…\} :gold …\}/],
    ];
    for (const [source, fault, message] of cases) {
      const f = faultOf(await pool.generate(source, REQUEST, CLJ));
      assert.equal(f.fault, fault, f.message);
      assert.match(f.message, message);
    }
    const loop = faultOf(
      await pool.generate("(defn generate [_] (loop [] (recur)))", REQUEST, {
        ...CLJ,
        timeoutMs: 500,
      }),
    );
    assert.equal(loop.fault, "timeout");
    assert.equal(loop.message, "generator.clj did not finish within 500ms");
  },
);

Deno.test(
  "ledger-totals-clj's generator.clj makes the worlds of ledger-totals' generator.js",
  opts,
  async () => {
    const examples = new URL("../../../examples/workflows/", import.meta.url).pathname;
    const js = parseBundle(await readBundleDir(examples + "ledger-totals"));
    const clj = parseBundle(await readBundleDir(examples + "ledger-totals-clj"));
    for (const split of ["train", "test"] as const) {
      const set = { split, count: 4, seed: 20261001 };
      const a = await withGeneratedCases(js, pool, set);
      const b = await withGeneratedCases(clj, pool, set);
      assert.deepEqual(
        b.cases.map((c) => [c.id, c.fixtures, c.gold]),
        a.cases.map((c) => [c.id, c.fixtures, c.gold]),
      );
      assert.equal(b.generated!.file, "generator.clj");
      assert.equal(b.generated!.worlds, a.generated!.worlds);
      assert.notEqual(b.generated!.generator, a.generated!.generator);
      // Its checker.clj gets the world's gold as generator.clj wrote it.
      const input = checkerInputFor(b, { files: {}, caseId: b.cases[0].id });
      assert.deepEqual(input.clojure!.gold, b.cases[0].goldEdn);
    }
  },
);
