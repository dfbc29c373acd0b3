import assert from "node:assert/strict";
import {
  answerWord,
  chosenPosition,
  listedOptions,
  rotatedPrompt,
} from "../../../core/calibrate/judge_options.ts";

const LETTERED =
  "Is Bolt a rival of Acme?\nA) a rival\nB) not a rival\nC) cannot tell\nAnswer with the letter.";

Deno.test("listedOptions() finds a block of lettered, numbered or bulleted lines in sequence", () => {
  const lo = listedOptions(LETTERED)!;
  assert.equal(lo.style, "letter");
  assert.equal(lo.start, 1);
  assert.deepEqual(lo.options.map((o) => [o.label, o.text]), [
    ["A", "a rival"],
    ["B", "not a rival"],
    ["C", "cannot tell"],
  ]);
  assert.deepEqual(listedOptions("Pick:\n  (1) yes\n  (2) no")!.options.map((o) => o.text), [
    "yes",
    "no",
  ]);
  assert.equal(listedOptions("Pick:\n- yes\n* no")!.style, "bullet");
  assert.equal(listedOptions("a. first\nb. second")!.options.length, 2);
});

Deno.test("listedOptions() finds none in one line, out-of-sequence labels or prose", () => {
  assert.equal(listedOptions("Answer Yes or No.\nA) only one"), null);
  assert.equal(listedOptions("B) yes\nC) no"), null, "labels start at A");
  assert.equal(listedOptions("A) yes\nC) no"), null, "labels run in sequence");
  assert.equal(listedOptions("1. yes\n- no"), null, "one style per block");
  assert.equal(listedOptions('Is "Bolt" a rival? Answer "Yes" or "No".'), null);
});

Deno.test("rotatedPrompt() moves the options under labels that stay in place", () => {
  const lo = listedOptions(LETTERED)!;
  assert.equal(rotatedPrompt(lo, 0), LETTERED);
  assert.equal(
    rotatedPrompt(lo, 1),
    "Is Bolt a rival of Acme?\nA) not a rival\nB) cannot tell\nC) a rival\nAnswer with the letter.",
  );
  assert.equal(rotatedPrompt(lo, 3), LETTERED, "a full turn");
});

Deno.test("chosenPosition() reads a label at the start, else an option's text", () => {
  const lo = listedOptions(LETTERED)!;
  for (const a of ["B", "b.", "(B) not a rival", "Option B", "Answer: B", "**B**"]) {
    assert.equal(chosenPosition(lo, a, 0), 1, a);
  }
  assert.equal(chosenPosition(lo, "Not a rival: it bakes pizza.", 0), 1);
  assert.equal(chosenPosition(lo, "Not a rival.", 1), 0, "rotated by one, it is shown first");
  assert.equal(chosenPosition(lo, "A rival, clearly.", 0), 0, "the label A");
  assert.equal(chosenPosition(lo, "Perhaps.", 0), null);
  assert.equal(chosenPosition(lo, "D", 0), null, "no such label");
});

Deno.test("answerWord() is the first word, lower-cased", () => {
  assert.equal(answerWord("  Yes, it sells tools."), "yes");
  assert.equal(answerWord("NO."), "no");
  assert.equal(answerWord("..."), "(no answer)");
});
