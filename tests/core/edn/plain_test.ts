import assert from "node:assert/strict";
import { readEdn } from "../../../core/edn/read.ts";
import { toPlain } from "../../../core/edn/plain.ts";
import { EdnFloat, type EdnValue, kw } from "../../../core/edn/values.ts";

const plainOf = (text: string) => toPlain(readEdn(text));

Deno.test("toPlain() maps every EDN kind as its table says", () => {
  assert.deepStrictEqual(
    plainOf(`{:nil nil :t true :int -7 :big 42N :huge 12345678901234567890 :float 1.5
              :integral 2.0 :str "s" :kw :a :nskw :ns/a :sym ns/s :char \\x
              :vec [1] :list (1 2) :set #{3 4}
              :inst #inst "2026-01-31T12:00:00Z"
              :uuid #uuid "0A0E8E35-4b5a-5dde-a9e3-7b9ac47f137d"
              :tagged #my/point [1 2]}`),
    {
      nil: null,
      t: true,
      int: -7,
      big: 42,
      huge: "12345678901234567890",
      float: 1.5,
      integral: 2,
      str: "s",
      kw: "a",
      nskw: "ns/a",
      sym: "ns/s",
      char: "x",
      vec: [1],
      list: [1, 2],
      set: [3, 4],
      inst: "2026-01-31T12:00:00.000Z",
      uuid: "0a0e8e35-4b5a-5dde-a9e3-7b9ac47f137d",
      tagged: { tag: "my/point", value: [1, 2] },
    },
  );
  assert.ok(Number.isNaN(plainOf("##NaN")));
  assert.strictEqual(plainOf("##-Inf"), -Infinity);
});

Deno.test("toPlain() turns map keys into strings: keyword names, strings, EDN text", () => {
  assert.deepStrictEqual(
    plainOf('{:a 1 :ns/b 2 "c d" 3 4 5 [1 2] 6 nil 7 #{:x} 8 \\z 9}'),
    { a: 1, "ns/b": 2, "c d": 3, "4": 5, "[1 2]": 6, nil: 7, "#{:x}": 8, "\\z": 9 },
  );
});

Deno.test("toPlain() keeps the first of two keys that map to the same string", () => {
  assert.deepStrictEqual(plainOf('{:a 1 "a" 2 a 3}'), { a: 1 });
  assert.deepStrictEqual(plainOf('{"a" 2 :a 1}'), { a: 2 });
});

Deno.test("toPlain() makes a __proto__ key plain data, not a prototype", () => {
  const o = plainOf('{"__proto__" {:polluted true} :ok 1}') as Record<string, unknown>;
  assert.strictEqual(Object.getPrototypeOf(o), Object.prototype);
  assert.deepStrictEqual(Object.keys(o), ["__proto__", "ok"]);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(o, "__proto__")?.value, {
    polluted: true,
  });
  assert.strictEqual(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("toPlain() converts values nested as deep as the reader allows", () => {
  let v: unknown = toPlain(readEdn("{:a ".repeat(499) + "[1.0]" + "}".repeat(499)));
  for (let i = 0; i < 499; i++) v = (v as Record<string, unknown>).a;
  assert.deepStrictEqual(v, [1]);
  // With a raised cap, depth is bounded by memory, not by the call stack.
  let deep: EdnValue = [new EdnFloat(3)];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  let p = toPlain(deep);
  for (let i = 0; i < 100_000; i++) p = (p as unknown[])[0];
  assert.deepStrictEqual(p, [3]);
});

Deno.test("toPlain() keeps set and map order as read", () => {
  assert.deepStrictEqual(plainOf("#{3 1 2}"), [3, 1, 2]);
  assert.deepStrictEqual(Object.keys(plainOf("{:z 1 :a 2}") as object), ["z", "a"]);
  assert.strictEqual(toPlain(kw("x")), "x");
});

Deno.test("toPlain() stops with an EdnDeadlineError once expired() answers true", () => {
  const v = readEdn("[" + "{:a 1} ".repeat(20_000) + "]");
  assert.throws(() => toPlain(v, () => true), { name: "EdnDeadlineError" });
  assert.equal((toPlain(v, () => false) as unknown[]).length, 20_000);
});
