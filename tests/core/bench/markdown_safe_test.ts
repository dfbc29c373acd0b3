import assert from "node:assert/strict";
import { markdownCodeSpan, markdownSafe } from "../../../core/bench/markdown_safe.ts";

Deno.test("markdownSafe() escapes what would end a table cell, open a link or start HTML", () => {
  assert.equal(markdownSafe("|x|"), "\\|x\\|");
  assert.equal(
    markdownSafe("[click](javascript:alert(1))"),
    "\\[click\\](javascript:alert(1))",
  );
  assert.equal(markdownSafe("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
  assert.equal(
    markdownSafe("**b** `c` ~~d~~ &lt; \\"),
    "\\*\\*b\\*\\* \\`c\\` \\~\\~d\\~\\~ \\&lt; \\\\",
  );
  // An underscore inside a word is text already; at a word's edge it could emphasise.
  assert.equal(markdownSafe("my_agent.sh _x_"), "my_agent.sh \\_x\\_");
});

Deno.test("markdownSafe() keeps to one line and starts no block", () => {
  assert.equal(markdownSafe("a\n# b\r\nc"), "a # b\\\\r c");
  assert.equal(markdownSafe("# heading"), "\\# heading");
  assert.equal(markdownSafe("- item"), "\\- item");
  assert.equal(markdownSafe("1. item"), "1\\. item");
  assert.equal(markdownSafe("==="), "\\===");
  // Numbers and words stay as they are.
  assert.equal(markdownSafe("0.546"), "0.546");
  assert.equal(markdownSafe("-0.25 no-blocked-fetch?"), "-0.25 no-blocked-fetch?");
  assert.equal(markdownSafe("\x1b[31mred\u202e"), "\\\\u001b\\[31mred\\\\u202e");
});

Deno.test("markdownCodeSpan() fences text with more backticks than it holds", () => {
  assert.equal(markdownCodeSpan("inv_001"), "`inv_001`");
  assert.equal(markdownCodeSpan("a`b"), "``a`b``");
  assert.equal(markdownCodeSpan("`x"), "`` `x ``");
  assert.equal(markdownCodeSpan("a\nb"), "`a b`");
});
