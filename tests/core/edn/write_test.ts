import assert from "node:assert/strict";
import { readEdn } from "../../../core/edn/read.ts";
import { writeEdn } from "../../../core/edn/write.ts";
import {
  EdnChar,
  EdnFloat,
  EdnList,
  EdnSet,
  EdnSymbol,
  EdnTagged,
  EdnUuid,
  type EdnValue,
  kw,
  sym,
} from "../../../core/edn/values.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

const TRICKY_STRINGS = [
  "",
  '"',
  "\\",
  '\\"',
  "\\n",
  "a\nb\r\nc\td",
  "\u0000\u0001\u001f\u007f",
  "\b\f",
  "é ß 小鳩ちゃん",
  "😀 👍🏽",
  "\ud800",
  "x\udc00y",
  "\udbff\udfff",
  "\u2028\u2029",
  "#_ ; {:not [a map",
  "\\u0041",
  "  leading and trailing  ",
  "\uFEFFbom",
];

/** Random EDN values of every kind the reader produces. */
function generator(rand: () => number) {
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const nameChars = "abcxyz-_?!*+<>=.'$%&#:0123456789éλ";
  const name = (): string => {
    let s = pick(["a", "b", "z", "é", "x-y", "?", "*", "λ"]);
    for (let i = int(6); i > 0; i--) s += pick([...nameChars]);
    s = s.replace(/:+/g, ":"); // no "::" inside a name, and none at its end
    return s.endsWith(":") ? s + "a" : s;
  };
  const fullName = () => (rand() < 0.3 ? name() + "/" + name() : name());
  const string = (): string => {
    if (rand() < 0.4) return pick(TRICKY_STRINGS);
    let s = "";
    for (let i = int(12); i > 0; i--) {
      s += String.fromCodePoint(
        pick([int(0x80), int(0x800), int(0xd800), 0x10000 + int(0x1000), 0x20 + int(0x5f)]),
      );
    }
    return s;
  };
  // As the reader gives floats back: integral ones as EdnFloat.
  const asRead = (v: number): EdnValue => Number.isInteger(v) ? new EdnFloat(v) : v;
  const float = (): EdnValue => asRead((rand() - 0.5) * Math.pow(10, int(40) - 20));
  const scalar = (): EdnValue => {
    switch (int(16)) {
      case 0:
        return null;
      case 1:
        return rand() < 0.5;
      case 2:
        return int(2000) - 1000;
      case 3:
        return pick([
          Number.MAX_SAFE_INTEGER,
          -Number.MAX_SAFE_INTEGER,
          0,
          2 ** 31,
          -(2 ** 53) + 1,
        ]);
      case 4:
        return pick([0n, 7n, -(2n ** 70n), 2n ** 53n, 123456789012345678901234567890n]);
      case 5:
        return float();
      case 6:
        return new EdnFloat(pick([0, -0, 1, -3, 1e21, 2e300, 1e16, -12345]));
      case 7:
        return asRead(pick([NaN, Infinity, -Infinity, 5e-324, 1.7976931348623157e308, 0.1]));
      case 8:
      case 9:
        return string();
      case 10:
        return kw(fullName());
      case 11:
        return sym(pick(["a", "+", "-", ".", "/", "x.y/z", "nil?", "a'b", "->"]) + "");
      case 12:
        return new EdnChar(
          pick([
            "a",
            "\n",
            " ",
            "\t",
            "\r",
            "\b",
            "\f",
            "é",
            "(",
            "\\",
            "u",
            "😀",
            "\u0000",
            "\u007f",
            "\ud800",
          ]),
        );
      case 13:
        // any millisecond from 0000-01-01 to 9999-12-31, the years #inst can hold
        return new Date(-62167219200000 + Math.floor(rand() * 315537897600000));
      case 14: {
        const h = () => int(0x10000).toString(16).padStart(4, "0");
        return new EdnUuid(`${h()}${h()}-${h()}-${h()}-${h()}-${h()}${h()}${h()}`);
      }
      default:
        return "s" + int(100);
    }
  };
  // Map keys and set elements: distinct under EDN equality, by construction.
  const distinct = (n: number): EdnValue[] => {
    const seen = new Set<string>();
    const out: EdnValue[] = [];
    for (let i = 0; i < n; i++) {
      const v = pick<() => EdnValue>([
        () => kw(fullName()),
        () => string(),
        () => int(50),
        () => [int(5), int(5)],
      ])();
      const id = typeof v + ":" + writeEdn(v);
      if (!seen.has(id)) {
        seen.add(id);
        out.push(v);
      }
    }
    return out;
  };
  const value = (depth: number): EdnValue => {
    if (depth <= 0 || rand() < 0.35) return scalar();
    const items = () => Array.from({ length: int(5) }, () => value(depth - 1));
    switch (int(6)) {
      case 0:
        return items();
      case 1:
        return new EdnList(items());
      case 2:
        return new EdnSet(distinct(int(5)));
      case 3:
      case 4:
        return new Map(distinct(int(6)).map((k) => [k, value(depth - 1)]));
      default:
        return new EdnTagged(pick(["my/tag", "point", "x.y/z-1"]), value(depth - 1));
    }
  };
  return value;
}

Deno.test("writeEdn() output reads back as the same value (seeded property test)", () => {
  const value = generator(seededRandom(20261001));
  for (let i = 0; i < 3000; i++) {
    const v = value(4);
    const text = writeEdn(v);
    assert.deepStrictEqual(readEdn(text), v, `flat round trip of ${text}`);
    assert.deepStrictEqual(readEdn(writeEdn(v, { pretty: true })), v, "pretty round trip");
  }
});

Deno.test("writeEdn() escapes tricky strings so that readEdn gives them back exactly", () => {
  for (const s of TRICKY_STRINGS) {
    const text = writeEdn(s);
    assert.strictEqual(readEdn(text), s, text);
    assert.ok(text.isWellFormed(), "the text survives UTF-8: no lone surrogates");
  }
  assert.strictEqual(writeEdn('a"b\\c\nd'), '"a\\"b\\\\c\\nd"');
  assert.strictEqual(writeEdn("\u0001\ud800"), '"\\u0001\\ud800"');
  assert.strictEqual(writeEdn("é😀"), '"é😀"', "valid non-ASCII text stays as it is");
});

Deno.test("writeEdn() writes plain objects as maps with keyword keys", () => {
  assert.strictEqual(writeEdn({ title: "T", "ns/k": 1 }), '{:title "T", :ns/k 1}');
  assert.strictEqual(
    writeEdn({ "has space": 1, "": 2, "x:": 3, "a/b/c": 4, ok: undefined }),
    '{"has space" 1, "" 2, "x:" 3, "a/b/c" 4, :ok nil}',
    "a key that cannot be a keyword stays a string",
  );
  assert.deepStrictEqual(
    readEdn(writeEdn({ a: { b: [1, "x"] } })),
    new Map([[kw("a"), new Map<EdnValue, EdnValue>([[kw("b"), [1, "x"]]])]]),
  );
});

Deno.test("writeEdn() keeps the keys of a JS Map as values", () => {
  assert.strictEqual(
    writeEdn(new Map<unknown, unknown>([["a.md", "x"], [kw("k"), 1], [2, [3]]])),
    '{"a.md" "x", :k 1, 2 [3]}',
  );
});

Deno.test("writeEdn() writes numbers as ints or floats", () => {
  assert.strictEqual(
    writeEdn([1, -7, 0, 1.5, -2.5e-7, 1e21, 2 ** 53]),
    "[1 -7 0 1.5 -2.5e-7 1e+21 9007199254740992.0]",
  );
  assert.strictEqual(writeEdn([NaN, Infinity, -Infinity, -0]), "[##NaN ##Inf ##-Inf -0.0]");
  assert.strictEqual(
    writeEdn([new EdnFloat(1), new EdnFloat(2000), new EdnFloat(-0), new EdnFloat(1e21)]),
    "[1.0 2000.0 -0.0 1e+21]",
  );
  assert.strictEqual(writeEdn([42n, -(2n ** 64n)]), "[42N -18446744073709551616N]");
  assert.deepStrictEqual(readEdn(writeEdn(2 ** 53)), new EdnFloat(2 ** 53));
});

Deno.test("writeEdn() writes characters, symbols, tags, uuids and dates", () => {
  assert.strictEqual(
    writeEdn([new EdnChar("a"), new EdnChar("\n"), new EdnChar(" "), new EdnChar("\u0000")]),
    "[\\a \\newline \\space \\u0000]",
  );
  assert.strictEqual(writeEdn(new EdnList([sym("inc"), sym("x/y"), 1])), "(inc x/y 1)");
  assert.strictEqual(writeEdn(new EdnSet([1, "a"])), '#{1 "a"}');
  assert.strictEqual(writeEdn(new Set([1, 2])), "#{1 2}");
  assert.strictEqual(writeEdn(new EdnTagged("my/p", [1, 2])), "#my/p [1 2]");
  assert.strictEqual(
    writeEdn(new EdnUuid("0a0e8e35-4b5a-5dde-a9e3-7b9ac47f137d")),
    '#uuid "0a0e8e35-4b5a-5dde-a9e3-7b9ac47f137d"',
  );
  assert.strictEqual(
    writeEdn(new Date("2026-01-31T12:00:00.5Z")),
    '#inst "2026-01-31T12:00:00.500-00:00"',
  );
  assert.strictEqual(writeEdn([undefined, null, true, false]), "[nil nil true false]");
});

Deno.test("writeEdn() refuses values that have no EDN form", () => {
  for (
    const bad of [
      () => 1,
      Symbol("s"),
      new (class Thing {})(),
      new Date(NaN),
      kw("has space"),
      EdnSymbol.of("1abc"),
      new EdnTagged("1x", 1),
      new EdnChar("ab"),
    ]
  ) {
    assert.throws(() => writeEdn([bad]), TypeError, String(bad));
  }
  const cycle: unknown[] = [];
  cycle.push(cycle);
  assert.throws(() => writeEdn(cycle), /nested deeper than 500 levels/);
});

Deno.test("writeEdn() with pretty puts one map entry per line when a map does not fit", () => {
  const cert = {
    cases: 264,
    certified: 259,
    "by-reason": new Map([
      [kw("certified"), 259],
      [kw("conflicting-outcomes"), 2],
      [kw("duplicate-id"), 2],
      [kw("unlabelled"), 1],
    ]),
    excluded: [
      { id: "B0006", status: kw("excluded"), reasons: [{ reason: kw("conflicting-outcomes") }] },
      {
        id: "B0011",
        status: kw("excluded"),
        reasons: [{ reason: kw("unlabelled"), fields: ["gegenkonto"] }],
      },
    ],
  };
  const text = writeEdn(cert, { pretty: true });
  assert.strictEqual(
    text,
    `{:cases 264,
 :certified 259,
 :by-reason {:certified 259,
             :conflicting-outcomes 2,
             :duplicate-id 2,
             :unlabelled 1},
 :excluded [{:id "B0006",
             :status :excluded,
             :reasons [{:reason :conflicting-outcomes}]}
            {:id "B0011",
             :status :excluded,
             :reasons [{:reason :unlabelled, :fields ["gegenkonto"]}]}]}`,
  );
  for (const line of text.split("\n")) assert.ok(line.length <= 80, line);
  assert.deepStrictEqual(readEdn(text), readEdn(writeEdn(cert)));
  assert.strictEqual(writeEdn({ a: 1 }, { pretty: true }), "{:a 1}", "what fits stays flat");
});
