import assert from "node:assert/strict";
import {
  casepackCheck,
  casepackCheckKey,
  casepackDate,
  casepackFieldRight,
  casepackGrade,
  casepackItems,
  casepackNumber,
  casepackText,
} from "../../../core/casepack/rules.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { toPlain } from "../../../core/edn/plain.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

const parse = (t: string) => toPlain(readEdn(t));

Deno.test("casepackNumber() reads the number vectors of docs/compatibility.md §6.5", () => {
  const vectors: [string, number | null][] = [
    ["1.234,56", 1234.56],
    ["1,234.56", 1234.56],
    ["119,00", 119],
    ["12,5", 12.5],
    ["1,234", 1234],
    ["1'234.50", 1234.5],
    ["5 €", 5],
    ["about 20", null],
  ];
  for (const [text, want] of vectors) assert.equal(casepackNumber(text), want, text);
});

Deno.test("casepackNumber() handles signs, exponents, currency and refuses the rest", () => {
  const vectors: [unknown, number | null][] = [
    ["-46,76", -46.76],
    ["-1.234,5", -1234.5],
    ["$ 1,000,000.25", 1000000.25],
    ["1.234.567,89", 1234567.89],
    ["1.5", 1.5],
    [".5", 0.5],
    ["3.", 3],
    ["1e3", 1000],
    ["2,5E-2", 0.25], // a comma not in -?digits,d(d) is a thousands separator
    ["1 234,56", 1234.56],
    ["+5", null],
    ["", null],
    ["-", null],
    ["1.234.567", null],
    ["12,345,6", 123456],
    ["EUR 5", null],
    [42, 42],
    [1.5, 1.5],
    [Number.NaN, null],
    [true, null],
    [null, null],
    [["1"], null],
  ];
  for (const [x, want] of vectors) assert.equal(casepackNumber(x), want, String(x));
});

/** casepackNumber() as it was with the pattern that backtracks quadratically. */
function quadraticNumber(x: unknown): number | null {
  if (typeof x === "number") return Number.isFinite(x) ? x : null;
  if (typeof x !== "string") return null;
  let s = x.replace(/[\s'€$]/g, "");
  const comma = s.lastIndexOf(",");
  const dot = s.lastIndexOf(".");
  if (comma >= 0 && dot >= 0) {
    s = comma > dot ? s.replace(/\./g, "").replace(/,/g, ".") : s.replace(/,/g, "");
  } else if (/^-?\d+,\d{1,2}$/.test(s)) {
    s = s.replace(",", ".");
  } else {
    s = s.replace(/,/g, "");
  }
  if (!/^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

Deno.test("casepackNumber() reads 20,000 random short texts as the quadratic pattern did", () => {
  const rand = seededRandom(20261202);
  const alphabet = "0123456789.,-+eE x'€";
  let numbers = 0;
  for (let i = 0; i < 20_000; i++) {
    const len = 1 + Math.floor(rand() * 12);
    let s = "";
    for (let j = 0; j < len; j++) {
      // Digits half the time, so most texts are numbers or nearly so.
      s += rand() < 0.5
        ? String(Math.floor(rand() * 10))
        : alphabet[Math.floor(rand() * alphabet.length)];
    }
    const want = quadraticNumber(s);
    if (want !== null) numbers++;
    assert.equal(casepackNumber(s), want, JSON.stringify(s));
  }
  assert.ok(numbers > 2_000, `only ${numbers} texts read as numbers: the test draws too few`);
});

Deno.test("casepackNumber() refuses 100,000 digits and an x in linear time", () => {
  const text = "1".repeat(100_000) + "x";
  const t0 = performance.now();
  assert.equal(casepackNumber(text), null);
  const ms = performance.now() - t0;
  // Measured: ~0.3 ms; the quadratic pattern took 14.6 s on this text.
  assert.ok(ms < 2_000, `${ms} ms`);
});

Deno.test("casepackDate() reads yyyy-m-d at the start and exactly d.m.yyyy", () => {
  assert.deepEqual(casepackDate("2025-03-07"), [2025, 3, 7]);
  assert.deepEqual(casepackDate("2025-3-7T10:00:00Z"), [2025, 3, 7]);
  assert.deepEqual(casepackDate(" 07.03.2025 "), [2025, 3, 7]);
  assert.deepEqual(casepackDate("7.3.2025"), [2025, 3, 7]);
  assert.equal(casepackDate("07.03.25"), null);
  assert.equal(casepackDate("am 07.03.2025"), null);
  assert.equal(casepackDate("March 7, 2025"), null);
  assert.equal(casepackDate(20250307), null);
  assert.deepEqual(casepackDate("2025-13-45"), [2025, 13, 45]);
});

Deno.test("casepackItems() splits text on , ; | and normalises items", () => {
  assert.deepEqual(casepackItems("B, a;  c |a"), ["a", "b", "c"]);
  assert.deepEqual(casepackItems(["Rot", " grün  Blau ", ""]), ["grün blau", "rot"]);
  assert.deepEqual(casepackItems(""), []);
});

Deno.test("casepackText() trims and collapses whitespace", () => {
  assert.equal(casepackText("  a \n\t b  "), "a b");
  assert.equal(casepackText(4210), "4210");
  assert.equal(casepackText(null), "");
});

Deno.test("casepackFieldRight() exact compares numbers only when the answer is a number", () => {
  assert.equal(casepackFieldRight("exact", undefined, "4210", 4210), true);
  assert.equal(casepackFieldRight("exact", undefined, "4210", "4210.0"), false);
  assert.equal(casepackFieldRight("exact", undefined, "4210", " 4210 "), true);
  assert.equal(casepackFieldRight("exact", undefined, "Bank", "bank"), false);
  assert.equal(casepackFieldRight(undefined, undefined, "x", "x"), true);
  assert.equal(casepackFieldRight("exact", undefined, "x", null), false);
});

Deno.test("casepackFieldRight() ci ignores case and spacing", () => {
  assert.equal(casepackFieldRight("ci", undefined, "REWE  Markt GmbH", "rewe markt gmbh"), true);
  assert.equal(casepackFieldRight("ci", undefined, "REWE", "REWE Markt"), false);
});

Deno.test("casepackFieldRight() number grades within the tolerance", () => {
  assert.equal(casepackFieldRight("number", 0.01, "1.500,00", 1500), true);
  assert.equal(casepackFieldRight("number", 0.01, "1500", "1500.004"), true);
  assert.equal(casepackFieldRight("number", 0.01, "1.00", "1.01"), true);
  assert.equal(casepackFieldRight("number", 0.01, "1.00", "1.02"), false);
  assert.equal(casepackFieldRight("number", undefined, "10", "10.004"), true);
  assert.equal(casepackFieldRight("number", undefined, "10", "10.006"), false);
  assert.equal(casepackFieldRight("number", 0.01, "about 20", "about 20"), false);
  assert.equal(casepackFieldRight("number", 0.01, "119,00", "1129.0"), false);
});

Deno.test("casepackFieldRight() number allows rounding, not more, beyond the tolerance of large amounts", () => {
  // Exactly at ±tolerance in decimal is right, however the doubles round.
  assert.equal(casepackFieldRight("number", 0.01, "1234.56", "1234.57"), true);
  assert.equal(casepackFieldRight("number", 0.01, "1234.56", "1234.55"), true);
  assert.equal(casepackFieldRight("number", 0.01, "99999999,99", "100.000.000,00"), true);
  assert.equal(casepackFieldRight("number", 0.01, "0.3", 0.31), true);
  // A millionth beyond it is wrong, also for amounts in the millions and billions.
  assert.equal(casepackFieldRight("number", undefined, "1000000", 1000000.0059), false);
  assert.equal(casepackFieldRight("number", undefined, "1.000.000,00", "1.000.000,0051"), false);
  assert.equal(casepackFieldRight("number", 0.01, "1000000000", "1000000000.5"), false);
  assert.equal(casepackFieldRight("number", 0, "123456789.12", "123456789.13"), false);
});

Deno.test("casepackFieldRight() set and date rules", () => {
  assert.equal(casepackFieldRight("set", undefined, "a, B", ["b", "A"]), true);
  assert.equal(casepackFieldRight("set", undefined, "a, B", ["b", "A", "c"]), false);
  assert.equal(casepackFieldRight("date", undefined, "2025-03-07", "7.3.2025"), true);
  assert.equal(casepackFieldRight("date", undefined, "2025-03-07", "8.3.2025"), false);
  assert.equal(casepackFieldRight("date", undefined, "soon", "soon"), false);
});

Deno.test("casepackCheckKey() lower-cases and joins non-alphanumerics with -", () => {
  assert.equal(casepackCheckKey("vendor_name"), "vendor-name");
  assert.equal(casepackCheckKey("Due Date"), "due-date");
  assert.equal(casepackCheckKey(" Konto (SKR04) "), "-konto-skr04-");
  assert.equal(casepackCheckKey("Größe"), "gr-e");
});

const FIELDS = {
  account: { rule: "exact" },
  amount: { rule: "number", tolerance: 0.01 },
  tags: { rule: "set" },
};
const GOLD = { expected: { account: "4210", amount: "1.500,00", tags: "travel, hotel" } };
const check = (answer: string | null) =>
  casepackCheck({
    files: answer === null ? {} : { "/out/answer.edn": answer },
    params: { fields: FIELDS },
    gold: GOLD,
  }, parse);

Deno.test("casepackCheck() gives 1.0 for a right answer with keyword keys and a number code", () => {
  const v = check('{:account 4210 :amount 1500.004 :tags ["Hotel" "TRAVEL"]}');
  assert.deepEqual(v, {
    checks: { "answer-present": true, account: true, amount: true, tags: true },
    reward: 1,
  });
});

Deno.test("casepackCheck() gives 2/3 for an extra set item", () => {
  const v = check('{"account" "4210" "amount" "1500" "tags" "hotel, travel, spa"}');
  assert.equal(v.checks.tags, false);
  assert.equal(v.reward, 2 / 3);
});

Deno.test("casepackCheck() gives 0.0 without an answer, or with one that is not a map", () => {
  for (const a of [null, "", "{:account", "[1 2]", "nil"]) {
    const v = check(a);
    assert.deepEqual(v, {
      checks: { "answer-present": false, account: false, amount: false, tags: false },
      reward: 0,
    });
  }
});

Deno.test("casepackGrade() counts a missing field as wrong and ignores extra ones", () => {
  const v = casepackGrade({ account: "4210", extra: 1 }, FIELDS, GOLD.expected);
  assert.deepEqual(v.checks, { "answer-present": true, account: true, amount: false, tags: false });
  assert.equal(v.reward, 1 / 3);
});

Deno.test("casepackGrade() does not read inherited properties as answers", () => {
  const v = casepackGrade({}, { constructor: { rule: "exact" } }, {
    constructor: "x",
  });
  assert.equal(v.checks.constructor, false);
  assert.equal(casepackGrade({}, {}, {}).reward, 0);
});
