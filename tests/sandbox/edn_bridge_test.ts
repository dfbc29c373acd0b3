import assert from "node:assert/strict";
import { ednBridge } from "../../sandbox/edn_bridge.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";

const INPUT = { files: {}, params: {}, gold: null, fetched: {}, judgements: {} };

Deno.test("ednBridge() parses to plain JSON and names line and column of bad EDN", () => {
  assert.deepEqual(JSON.parse(ednBridge("parse", '{:a [1 #{:b}] "k" nil}', "")), {
    ok: { a: [1, ["b"]], k: null },
  });
  const bad = JSON.parse(ednBridge("parse", "{:a\n [1 2}", "answer.edn")).error;
  assert.equal(bad.name, "EdnSyntaxError");
  assert.equal(bad.line, 2);
  assert.match(bad.message, /^answer\.edn line 2, column \d+: /);
  assert.deepEqual(JSON.parse(ednBridge("stringify", '{"a":[1,"x"]}', "")), {
    ok: '{:a [1 "x"]}',
  });
  assert.equal(JSON.parse(ednBridge("eval", "x", "")).error.name, "TypeError");
});

Deno.test("edn in the sandbox parses, stringifies and refuses what is not a string", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const source = `export function check() {
      const v = edn.parse('{:total 12.5 :tags #{"x"}}');
      let bad = null;
      try { edn.parse("[1 2", "answer.edn"); } catch (e) { bad = e; }
      let typed = null;
      try { edn.parse({ toString() { throw new Error("hostile"); } }); } catch (e) { typed = e; }
      return {
        checks: {
          parsed: v.total === 12.5 && v.tags[0] === "x",
          located: bad.name === "EdnSyntaxError" && bad.line === 1 && bad.column > 1,
          typed: typed instanceof TypeError,
          written: edn.stringify({ total: 1 }) === "{:total 1}",
          frozen: Object.isFrozen(edn),
        },
        reward: 1,
      };
    }`;
    const run = await pool.check(source, INPUT);
    assert.ok(run.ok, JSON.stringify(run));
    assert.deepEqual(run.verdict.checks, {
      parsed: true,
      located: true,
      typed: true,
      written: true,
      frozen: true,
    });
  } finally {
    pool.close();
  }
});

Deno.test("ednBridge() answers an error instead of working once the call's deadline has passed", () => {
  const big = "[" + '{:a [1 2.5 "x"]} '.repeat(200_000) + "]";
  const t0 = Date.now();
  const late = JSON.parse(ednBridge("parse", big, "", t0 - 1)).error;
  assert.match(late.message, /^edn\.parse stopped: the checker's time limit has passed$/);
  // A deadline that passes while reading stops the reader within a few milliseconds.
  const during = JSON.parse(ednBridge("parse", big, "", Date.now() + 5)).error;
  assert.match(during.message, /^edn\.parse stopped/);
  assert.ok(Date.now() - t0 < 200, `took ${Date.now() - t0} ms`);
  assert.match(
    JSON.parse(ednBridge("stringify", "[1]", "", t0 - 1)).error.message,
    /^edn\.stringify stopped/,
  );
  assert.deepEqual(JSON.parse(ednBridge("ready", "", "", Date.now() + 60_000)), { ok: true });
  assert.equal(JSON.parse(ednBridge("parse", "[1]", "", Date.now() + 60_000)).ok[0], 1);
});
