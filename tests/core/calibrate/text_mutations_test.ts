import assert from "node:assert/strict";
import {
  changeOneChar,
  changeWords,
  dropLastLine,
  editFloat,
  editTextNumbers,
  firstHalf,
  indentLines,
  NUMBER_EDITS,
  repeatLastLine,
  toggleTrailingNewline,
} from "../../../core/calibrate/text_mutations.ts";

Deno.test("changeOneChar() changes the middle letter or digit, wrapping z and 9", () => {
  assert.equal(changeOneChar("Priya"), "Prjya");
  assert.equal(changeOneChar("2025-06-04"), "2025-16-04");
  assert.equal(changeOneChar("EUR"), "EVR");
  assert.equal(changeOneChar("zz"), "za");
  assert.equal(changeOneChar("9"), "0");
  assert.equal(changeOneChar("-"), "x", "no letter or digit: the middle character");
  assert.equal(changeOneChar("Bü"), "Bx", "a letter beyond ASCII becomes x");
  assert.equal(changeOneChar(""), "");
});

Deno.test("editTextNumbers() edits standalone numbers and leaves dates, times and versions", () => {
  const text = "Total 272.27 EUR, 3 items, due 2025-03-14 at 10:30, v2, 1,234.56, -5.";
  assert.equal(
    editTextNumbers(text, NUMBER_EDITS["numbers-plus-one"]),
    "Total 273.27 EUR, 4 items, due 2025-03-14 at 10:30, v2, 1,234.56, -4.",
  );
  assert.equal(
    editTextNumbers(text, NUMBER_EDITS["numbers-times-ten"]),
    "Total 2722.7 EUR, 30 items, due 2025-03-14 at 10:30, v2, 1,234.56, -50.",
  );
  assert.equal(
    editTextNumbers("0 and 3.50", NUMBER_EDITS["numbers-negated"]),
    "0 and -3.50",
    "0 has no other sign",
  );
  assert.equal(editTextNumbers("0 only", NUMBER_EDITS["numbers-negated"]), null);
  assert.equal(editTextNumbers("on 2025-03-14", NUMBER_EDITS["numbers-plus-one"]), null);
  assert.equal(
    editTextNumbers("9007199254740993", NUMBER_EDITS["numbers-plus-one"]),
    "9007199254740994",
    "integers beyond 2^53 stay exact",
  );
});

Deno.test("editFloat() keeps the decimals a number was written with", () => {
  assert.equal(editFloat(272.27, NUMBER_EDITS["numbers-plus-one"]), 273.27);
  assert.equal(editFloat(0.1, NUMBER_EDITS["numbers-times-ten"]), 1);
  assert.equal(editFloat(0, NUMBER_EDITS["numbers-negated"]), null);
});

Deno.test("changeWords() changes every word, numbers aside", () => {
  assert.equal(changeWords("Wato, Dust 42"), "Wauo, Dutt 42");
  assert.equal(changeWords("42 -- 7"), null);
});

Deno.test("dropLastLine() and repeatLastLine() need two non-blank lines", () => {
  assert.equal(dropLastLine("a\nb\n"), "a\n");
  assert.equal(repeatLastLine("a\nb\n"), "a\nb\nb\n");
  assert.equal(dropLastLine("only\n\n"), null);
  assert.equal(repeatLastLine("only"), null);
});

Deno.test("indentLines(), toggleTrailingNewline() and firstHalf() change only whitespace or length", () => {
  assert.equal(indentLines("a\n\nb"), "  a\n\n  b");
  assert.equal(indentLines(" \n"), null);
  assert.equal(toggleTrailingNewline("x"), "x\n");
  assert.equal(toggleTrailingNewline("x\r\n\n"), "x");
  assert.equal(firstHalf("a😀bc"), "a😀", "by characters, not UTF-16 units");
  assert.equal(firstHalf(""), null);
});
