import assert from "node:assert/strict";
import { readEdn } from "../../../core/edn/read.ts";
import {
  EdnSymbol,
  type EdnValue,
  isEdnMap,
  Keyword,
  kw,
  mapGet,
  sym,
} from "../../../core/edn/values.ts";

Deno.test("Keyword.of() interns and splits at the first slash", () => {
  assert.strictEqual(Keyword.of("a"), kw("a"));
  assert.strictEqual(kw(":a/b"), kw("a/b"), "a leading colon is dropped");
  assert.deepStrictEqual([kw("a/b").ns, kw("a/b").name], ["a", "b"]);
  assert.deepStrictEqual([kw("/").ns, kw("/").name], [null, "/"]);
  assert.strictEqual(kw("a/b").fullName, "a/b");
  assert.strictEqual(String(kw("dvergr/room-workflow")), ":dvergr/room-workflow");
  assert.strictEqual(sym("x/y"), EdnSymbol.of("x/y"));
  assert.strictEqual(String(sym("x/y")), "x/y");
  assert.notStrictEqual(kw("a") as unknown, sym("a") as unknown);
});

Deno.test("Keyword values work as Map keys across separate reads", () => {
  const a = readEdn("{:title 1}") as Map<EdnValue, EdnValue>;
  const b = readEdn("{:title 2}") as Map<EdnValue, EdnValue>;
  assert.strictEqual([...a.keys()][0], [...b.keys()][0]);
  assert.strictEqual(a.get(kw("title")), 1);
});

Deno.test("mapGet() looks up the keyword first, then the string", () => {
  const m = readEdn('{:a 1 "b" 2 "a" 3 :n nil}') as Map<EdnValue, EdnValue>;
  assert.strictEqual(mapGet(m, "a"), 1);
  assert.strictEqual(mapGet(m, "b"), 2);
  assert.strictEqual(mapGet(m, "n"), null, "a present nil is null");
  assert.strictEqual(mapGet(m, "missing"), undefined);
  assert.ok(isEdnMap(m));
  assert.ok(!isEdnMap([1]));
});
