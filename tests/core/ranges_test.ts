import assert from "node:assert/strict";
import { checkRange, describeRange, inRange, RANGES } from "../../core/ranges.ts";
import { isDvergrError } from "../../core/errors.ts";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { planExperiment } from "../../core/bench/experiment.ts";
import { builtinCandidate } from "../../adapters/candidates/builtin/builtin.ts";
import { wordBundle, wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { parseBundle } from "../../core/bundle/parse.ts";

Deno.test("checkRange() refuses a timeout beyond a day, which a timer would overflow", () => {
  assert.equal(checkRange("timeoutMs", 86_400_000, "--timeout-ms"), 86_400_000);
  for (const bad of [2 ** 31, 3_000_000_000, 999, 1.5e3 + 0.5, NaN, Infinity]) {
    assert.throws(() => checkRange("timeoutMs", bad, "--timeout-ms"), (e) => {
      assert.ok(isDvergrError(e));
      assert.equal(e.code, "USAGE");
      assert.match(e.message, /--timeout-ms/);
      return true;
    });
  }
});

Deno.test("inRange() and describeRange() agree with every range's ends", () => {
  for (const [name, r] of Object.entries(RANGES)) {
    assert.ok(inRange(r.min, r), name);
    assert.ok(inRange(r.max, r), name);
    assert.ok(!inRange(r.max + 1, r), name);
    assert.ok(!inRange(r.min - 1, r), name);
    assert.match(describeRange(r), new RegExp(String(r.max)));
  }
});

Deno.test("planExperiment() refuses repetitions, cases and timeouts out of range", () => {
  const bundle = wordBundle(2);
  const cands = [builtinCandidate("noop", bundle)];
  assert.throws(() => planExperiment(bundle, cands, { repetitions: 1e9 }), /repetitions/);
  assert.throws(() => planExperiment(bundle, cands, { timeoutMs: 2 ** 31 }), /timeout-ms/);
  assert.throws(() => planExperiment(bundle, cands, { cases: 0 }), /cases/);
  assert.throws(() => planExperiment(bundle, cands, { budgetMicros: -1 }), /budget/);
});

Deno.test("parseBundle() refuses a :timeout-ms beyond a day", () => {
  assert.throws(
    () =>
      parseBundle({
        name: "words",
        files: wordDataset(1, {
          "workflow.edn": '{:title "W" :task "t" :timeout-ms 3000000000}',
        }),
      }),
    /timeout-ms/,
  );
});

Deno.test("dvergr benchmark exits 2 naming the flag for values out of range", async () => {
  const dir = await writeBundleTo(wordDataset(1));
  const home = await Deno.makeTempDir();
  for (
    const [flag, value] of [
      ["--timeout-ms", "3000000000"],
      ["--parallel", "0"],
      ["--parallel", "100000"],
      ["--repetitions", "99999999999"],
      ["--cases", "-1"],
      ["--budget-dollars", "1e9"],
      ["--budget-dollars", "99999999"],
    ]
  ) {
    const ctx = memoryContext({ env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } });
    const code = await runMain(
      ["benchmark", dir, "--candidate", "builtin:noop", "--home", home, flag, value],
      ctx,
    );
    assert.equal(code, 2, `${flag} ${value}: ${ctx.err.join("")}`);
    assert.match(ctx.err.join(""), new RegExp(flag));
  }
  await Deno.remove(home, { recursive: true });
});
