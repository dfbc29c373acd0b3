import assert from "node:assert/strict";
import { terminalSafe } from "../../core/terminal_safe.ts";

Deno.test("terminalSafe() shows ESC, CR, BEL, backspace, DEL, C1 controls and bidi overrides as escapes", () => {
  assert.equal(
    terminalSafe("a\x1b]0;owned\x07b\rc\bd\x7fe\x9bf\u202eg\u2066h\u2069i\fj\vk\0l"),
    "a\\u001b]0;owned\\u0007b\\rc\\bd\\u007fe\\u009bf\\u202eg\\u2066h\\u2069i\\fj\\u000bk\\u0000l",
  );
  // Tab, newline and text in any script are kept.
  assert.equal(terminalSafe("a\tb\nc Müller €😀 עברית"), "a\tb\nc Müller €😀 עברית");
});

Deno.test("terminalSafe() keeps JSON valid and meaning the same", () => {
  const value = { name: "x\u0085y\u202ez\x7f", n: ["\x1b[2J"] };
  const text = terminalSafe(JSON.stringify(value, null, 2));
  // deno-lint-ignore no-control-regex -- the characters looked for
  assert.doesNotMatch(text, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  assert.deepEqual(JSON.parse(text), value);
});
