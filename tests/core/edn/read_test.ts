import assert from "node:assert/strict";
import { DvergrError } from "../../../core/errors.ts";
import { readEdn, readEdnAll } from "../../../core/edn/read.ts";
import {
  EdnChar,
  EdnFloat,
  EdnList,
  EdnSet,
  EdnTagged,
  EdnUuid,
  type EdnValue,
  kw,
  sym,
} from "../../../core/edn/values.ts";

/** The DvergrError that reading `text` throws. */
function readError(text: string, file?: string): DvergrError {
  try {
    readEdn(text, file === undefined ? {} : { file });
  } catch (e) {
    assert.ok(e instanceof DvergrError, `expected a DvergrError, got ${e}`);
    return e;
  }
  throw new Error(`readEdn accepted ${JSON.stringify(text)}`);
}

Deno.test("readEdn() reads maps, vectors, lists, sets, keywords and symbols", () => {
  const v = readEdn('{:title "T", :ns/k [1 -2 +3] :l (a ns/b + - . /) :s #{:x "y" 3}}');
  assert.deepStrictEqual(
    v,
    new Map<EdnValue, EdnValue>([
      [kw("title"), "T"],
      [kw("ns/k"), [1, -2, 3]],
      [kw("l"), new EdnList([sym("a"), sym("ns/b"), sym("+"), sym("-"), sym("."), sym("/")])],
      [kw("s"), new EdnSet([kw("x"), "y", 3])],
    ]),
  );
  const m = v as Map<EdnValue, EdnValue>;
  assert.strictEqual([...m.keys()][1], kw("ns/k"), "keywords are interned");
  assert.strictEqual(kw("ns/k").ns, "ns");
  assert.strictEqual(kw("ns/k").name, "k");
});

Deno.test("readEdn() reads nil, booleans and keyword names that start with digits", () => {
  assert.deepStrictEqual(readEdn("[nil true false :1 :a.b/c-d? nil?]"), [
    null,
    true,
    false,
    kw("1"),
    kw("a.b/c-d?"),
    sym("nil?"),
  ]);
});

Deno.test("readEdn() reads strings with every escape", () => {
  assert.strictEqual(
    readEdn('"a\\nb\\tc\\rd\\"e\\\\f\\bg\\fh\\u00e9\\u2603 raw\nline"'),
    'a\nb\tc\rd"e\\f\bg\fh\u00e9\u2603 raw\nline',
  );
  assert.strictEqual(readEdn('"\\ud83d\\ude00"'), "😀");
  assert.strictEqual(readEdn('""'), "");
});

Deno.test("readEdn() reads characters, named and \\uXXXX", () => {
  assert.deepStrictEqual(
    readEdn("[\\a \\newline \\space \\tab \\return \\backspace \\formfeed \\u00e9 \\( \\\\ \\é]"),
    [
      new EdnChar("a"),
      new EdnChar("\n"),
      new EdnChar(" "),
      new EdnChar("\t"),
      new EdnChar("\r"),
      new EdnChar("\b"),
      new EdnChar("\f"),
      new EdnChar("é"),
      new EdnChar("("),
      new EdnChar("\\"),
      new EdnChar("é"),
    ],
  );
});

Deno.test("readEdn() reads integers as numbers and big or N integers as bigints", () => {
  assert.deepStrictEqual(readEdn("[0 -0 +7 -42 9007199254740991 -9007199254740991]"), [
    0,
    0,
    7,
    -42,
    9007199254740991,
    -9007199254740991,
  ]);
  assert.ok(!Object.is(readEdn("-0"), -0), "an integer is never -0");
  assert.deepStrictEqual(readEdn("[9007199254740992 -12345678901234567890 42N -0N]"), [
    9007199254740992n,
    -12345678901234567890n,
    42n,
    0n,
  ]);
});

Deno.test("readEdn() reads integral floats as EdnFloat and others as numbers", () => {
  assert.deepStrictEqual(readEdn("[1.0 2e3 -0.0 1. 1.5 -2.5e-3 1E2 1.25M 2M 1e400]"), [
    new EdnFloat(1),
    new EdnFloat(2000),
    new EdnFloat(-0),
    new EdnFloat(1),
    1.5,
    -0.0025,
    new EdnFloat(100),
    1.25,
    new EdnFloat(2),
    Infinity,
  ]);
  const [inf, negInf, nan] = readEdn("[##Inf ##-Inf ##NaN]") as number[];
  assert.strictEqual(inf, Infinity);
  assert.strictEqual(negInf, -Infinity);
  assert.ok(Number.isNaN(nan));
});

Deno.test("readEdn() reads #inst as a Date, honouring offsets and partial forms", () => {
  assert.deepStrictEqual(
    readEdn('#inst "2026-01-31T12:30:05.123Z"'),
    new Date(Date.UTC(2026, 0, 31, 12, 30, 5, 123)),
  );
  assert.deepStrictEqual(
    readEdn('#inst "2026-01-31T12:30:05.123-00:00"'),
    new Date("2026-01-31T12:30:05.123Z"),
  );
  assert.deepStrictEqual(
    readEdn('#inst "2026-01-31T12:30:00+01:30"'),
    new Date("2026-01-31T11:00:00Z"),
  );
  assert.deepStrictEqual(readEdn('#inst "2026"'), new Date("2026-01-01T00:00:00Z"));
  assert.deepStrictEqual(readEdn('#inst "2024-02-29"'), new Date("2024-02-29T00:00:00Z"));
  const early = new Date(0);
  early.setUTCFullYear(42, 2, 4);
  assert.deepStrictEqual(readEdn('#inst "0042-03-04"'), early, "years below 100 stay as written");
  assert.deepStrictEqual(
    readEdn('#inst "2026-01-31T12:30:05.123456789Z"'),
    new Date("2026-01-31T12:30:05.123Z"),
    "digits beyond milliseconds are dropped",
  );
});

Deno.test("readEdn() refuses an invalid #inst", () => {
  for (
    const bad of [
      '#inst "2026-13-01"',
      '#inst "2025-02-29"',
      '#inst "2026-01-31T24:00:00Z"',
      '#inst "2026-01-31T12:60:00Z"',
      '#inst "yesterday"',
      '#inst "2026-1-5"',
      "#inst 1700000000000",
    ]
  ) {
    const e = readError(bad);
    assert.strictEqual(e.code, "EDN_SYNTAX");
    assert.match(e.message, /^line 1, column 7: (bad )?#inst/, bad);
  }
});

Deno.test("readEdn() reads #uuid in lower case and other tags as EdnTagged", () => {
  assert.deepStrictEqual(
    readEdn('#uuid "0A0E8E35-4B5A-5DDE-A9E3-7B9AC47F137D"'),
    new EdnUuid("0a0e8e35-4b5a-5dde-a9e3-7b9ac47f137d"),
  );
  assert.deepStrictEqual(
    readEdn("#my/point [1 2]"),
    new EdnTagged("my/point", [1, 2]),
  );
  assert.deepStrictEqual(
    readEdn("#a #b {:x 1}"),
    new EdnTagged("a", new EdnTagged("b", new Map([[kw("x"), 1]]))),
  );
  assert.match(readError('#uuid "1234"').message, /bad #uuid "1234"/);
});

Deno.test("readEdn() skips comments, commas and #_ discards", () => {
  const text = `; a comment
{:a 1, ;; trailing comment
 #_ :ignored #_ #_ [1 2] (3) :b 2} ; comment at end without newline`;
  assert.deepStrictEqual(readEdn(text), new Map([[kw("a"), 1], [kw("b"), 2]]));
  assert.deepStrictEqual(readEdn("#_ 1 2"), 2);
  assert.match(
    readError("[1 #_ #{1 1}]").message,
    /duplicate set element/,
    "a discarded form must still be valid EDN",
  );
  assert.strictEqual(readEdn("\ufeff:a"), kw("a"), "a byte order mark is skipped");
});

Deno.test("readEdn() names line and column of an unclosed map", () => {
  const text = ';; calibration\n{:reference\n {"/out/answer.edn" "x"}\n:damaged {}';
  const e = readError(text, "calibration.edn");
  assert.strictEqual(e.code, "EDN_SYNTAX");
  assert.strictEqual(
    e.message,
    "calibration.edn line 4, column 12: unclosed map (opened at line 2, column 1)",
  );
  assert.deepStrictEqual(e.details, { file: "calibration.edn", line: 4, column: 12 });
  assert.ok(e.hint && e.hint.includes('"}"'));
  assert.strictEqual(e.result, false);
});

Deno.test("readEdn() refuses mismatched and stray brackets", () => {
  assert.strictEqual(
    readError("{:a [1 2}\n", "x.edn").message,
    'x.edn line 1, column 9: mismatched "}": expected "]" to close the vector ' +
      "(opened at line 1, column 5)",
  );
  assert.strictEqual(
    readError("[1 2]]").message,
    'line 1, column 6: unexpected "]": nothing is open',
  );
  assert.strictEqual(
    readError("(1\n  2").message,
    "line 2, column 4: unclosed list (opened at line 1, column 1)",
  );
  assert.strictEqual(
    readError("#{1").message,
    "line 1, column 4: unclosed set (opened at line 1, column 1)",
  );
});

Deno.test("readEdn() refuses odd map entries and duplicate keys or elements", () => {
  assert.strictEqual(
    readError("{:a 1\n :b}").message,
    "line 2, column 2: map key :b has no value (odd number of forms in the map)",
  );
  assert.strictEqual(
    readError('{:a 1\n "b" 2 :a 3}').message,
    "line 2, column 8: duplicate map key :a (first at line 1, column 2)",
  );
  assert.strictEqual(
    readError("#{1 1}").message,
    "line 1, column 5: duplicate set element 1 (first at line 1, column 3)",
  );
  // Clojure equality: a vector equals a list with the same items, 1 equals 1N, 0.0 -0.0.
  assert.match(readError("{[1 2] :x (1 2) :y}").message, /duplicate map key \(1 2\)/);
  assert.match(readError("#{1 1N}").message, /duplicate set element 1N/);
  assert.match(readError("#{0.0 -0.0}").message, /duplicate set element -0.0/);
  assert.match(readError("#{{:a 1 :b 2} {:b 2 :a 1}}").message, /duplicate set element/);
  assert.match(readError("#{#{1 2} #{2 1}}").message, /duplicate set element/);
  // Distinct values of different kinds are fine.
  assert.deepStrictEqual(
    readEdn('#{1 1.0 "1" :1 \\1 [1] nil}'),
    new EdnSet([1, new EdnFloat(1), "1", kw("1"), new EdnChar("1"), [1], null]),
  );
  assert.strictEqual((readEdn('{:a 1 "a" 2 a 3}') as Map<EdnValue, EdnValue>).size, 3);
});

Deno.test("readEdn() refuses bad escapes, characters, numbers and tokens", () => {
  const cases: [string, RegExp][] = [
    ['"a\\qb"', /^line 1, column 3: bad escape "\\q" in string$/],
    ['"\\u12"', /bad escape "\\u12"/],
    ['"abc', /^line 1, column 1: unclosed string$/],
    ["\\", /backslash without a character/],
    ["\\ab", /bad character literal "\\ab"/],
    ["\\u12", /bad character literal/],
    ["007", /bad number "007": leading zeros/],
    ["1.2.3", /bad number "1.2.3"/],
    ["12abc", /bad number "12abc"/],
    ["0x1F", /bad number "0x1F"/],
    ["1/2", /unsupported ratio "1\/2"/],
    ["-1e", /bad number "-1e"/],
    [".5", /bad number ".5"/],
    ["::a", /bad keyword "::a"/],
    [":", /bad keyword ":"/],
    [":a/", /bad keyword ":a\/"/],
    [":a/b/c", /bad keyword/],
    ["a/", /bad token "a\/"/],
    ["a:", /bad token "a:"/],
    ["a\u0000b", /bad token/],
    ["'a", /reader macros are not EDN/],
    ["@a", /reader macros are not EDN/],
    ["#(inc %)", /unknown dispatch "#\("/],
    ['#"re"', /unknown dispatch/],
    ["#:ns{:a 1}", /namespaced map syntax/],
    ["##Infinity", /unknown symbolic value "##Infinity"/],
    ["#_", /#_ is not followed by a value/],
    ["[#_]", /#_ is not followed by a value/],
    ["#foo", /#foo is not followed by a value/],
    ["[#foo]", /#foo is not followed by a value/],
  ];
  for (const [text, re] of cases) {
    const e = readError(text);
    assert.strictEqual(e.code, "EDN_SYNTAX");
    assert.match(e.message, re, JSON.stringify(text));
    assert.ok(e.hint, `a hint for ${JSON.stringify(text)}`);
    assert.deepStrictEqual(Object.keys(e.details ?? {}), ["file", "line", "column"]);
  }
});

Deno.test("readEdn() wants exactly one value", () => {
  assert.strictEqual(
    readError("", "answer.edn").message,
    "answer.edn line 1, column 1: no value: the text is empty or holds only whitespace and comments",
  );
  assert.match(readError("  ; only a comment\n\n").message, /^line 3, column 1: no value/);
  assert.match(readError("#_ {:a 1}").message, /no value/);
  assert.strictEqual(
    readError("{:a 1}\n{:b 2}").message,
    "line 2, column 1: a second value after the first: this text must hold exactly one EDN value",
  );
});

Deno.test("readEdn() counts columns in characters, not UTF-16 units", () => {
  // 12 characters in, 14 UTF-16 units
  assert.strictEqual(readError('["😀😀" :a :a}').details?.column, 12);
  assert.strictEqual(readError("\r\n  }").details?.line, 2);
  assert.strictEqual(readError("\r\n  }").details?.column, 3);
});

Deno.test("readEdn() caps nesting depth with a clear error and never overflows the stack", () => {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  let v = readEdn(deep(500));
  for (let i = 0; i < 499; i++) v = (v as EdnValue[])[0];
  assert.deepStrictEqual(v, []);
  const e = readError(deep(501));
  assert.strictEqual(e.message, "line 1, column 501: nesting deeper than 500 levels");
  assert.match(readError("#_".repeat(600) + "1").message, /nesting deeper than 500 levels/);
  assert.match(readError("#a ".repeat(600) + "1").message, /nesting deeper than 500 levels/);
  // The reader keeps its own stack: depth is a policy, not a limit of the call stack.
  const huge = readEdn(deep(200_000), { maxDepth: 200_000 });
  assert.ok(Array.isArray(huge));
  assert.match(
    readError("{".repeat(1_000_000)).message,
    /nesting deeper than 500 levels/,
  );
});

Deno.test("readEdnAll() reads every top-level value in order", () => {
  assert.deepStrictEqual(readEdnAll('1 :a\n[2] ; c\n #_ 3 "s"'), [1, kw("a"), [2], "s"]);
  assert.deepStrictEqual(readEdnAll(" ; nothing\n"), []);
  assert.throws(() => readEdnAll("1 (", { file: "f.edn" }), (e: unknown) => {
    assert.ok(e instanceof DvergrError);
    assert.strictEqual(
      e.message,
      "f.edn line 1, column 4: unclosed list (opened at line 1, column 3)",
    );
    return true;
  });
});

Deno.test("readEdn() keeps map and set order as read", () => {
  const m = readEdn("{:z 1 :a 2 :m 3}") as Map<EdnValue, EdnValue>;
  assert.deepStrictEqual([...m.keys()], [kw("z"), kw("a"), kw("m")]);
  assert.deepStrictEqual((readEdn("#{3 1 2}") as EdnSet).items, [3, 1, 2]);
});

Deno.test("readEdn() stops with an EdnDeadlineError naming its position once expired() answers true", () => {
  const text = "[" + "1 ".repeat(100_000) + "]";
  assert.throws(
    () => readEdn(text, { expired: () => true }),
    (e: Error) =>
      e.name === "EdnDeadlineError" && /^reading stopped at line 1, column \d+: /.test(e.message),
  );
  assert.throws(() => readEdnAll(text, { expired: () => true }), { name: "EdnDeadlineError" });
  assert.equal((readEdn(text, { expired: () => false }) as number[]).length, 100_000);
});
