/**
 * Text from candidates and bundles (candidate and check names, causes, case ids, messages)
 * made literal in a Markdown report: it cannot end a table cell, open a link or an image,
 * emphasise, start raw HTML, or become a heading or a list, and shows no control character.
 */
import { terminalSafe } from "../terminal_safe.ts";

/**
 * The ASCII punctuation that means something inline in CommonMark or GitHub's Markdown: code,
 * emphasis, links and images, raw HTML and autolinks, table cells, strikethrough, entities.
 * (`$`, GitHub's math, is left: it can only typeset, and money is written with it.)
 */
const INLINE = /[\\`*[\]<>|~&]/g;

/** An underscore that can open or close emphasis: not inside a word (`my_agent.sh` is text). */
const EMPHASIS_UNDERSCORE = /(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;

/**
 * What would start a block at a line's start: a heading, a list item (each followed by a
 * space), or a setext underline or thematic break (a line of `=` or `-` only).
 */
const BLOCK_START = /^(\s*)(#|[+-]|\d+[.)])(?=\s|$)|^(\s*)([=-])(?=[=-]*\s*$)/;

/**
 * What markdownSafe() might change, conservatively: a control character, bidi override or line
 * break, a markup character or underscore, or a start that may be a block's.
 */
const MAY_CHANGE =
  // deno-lint-ignore no-control-regex -- control characters are among what it looks for
  /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\\`*[\]<>|~&_]|^\s*(?:[#+=-]|\d+[.)])/;

/**
 * `text` as literal Markdown on one line: control characters as visible escapes
 * (terminalSafe()), line breaks as spaces, and the characters that would be markup
 * backslash-escaped (which CommonMark shows as the characters themselves).
 */
export function markdownSafe(text: string): string {
  // Most texts (case ids, numbers, names) hold nothing any step below would change: a
  // 1,000-case report has thousands of cells.
  if (!MAY_CHANGE.test(text)) return text;
  return terminalSafe(text)
    .replace(/\s*\n\s*/g, " ")
    .replace(INLINE, "\\$&")
    .replace(EMPHASIS_UNDERSCORE, "\\_")
    .replace(BLOCK_START, (m: string) => m.slice(0, -1) + "\\" + m.slice(-1));
}

/**
 * `text` as a Markdown code span (where backslashes are literal): fenced by more backticks
 * than any run in it, padded with a space when it starts or ends with one, on one line.
 */
export function markdownCodeSpan(text: string): string {
  const t = terminalSafe(text).replace(/\s*\n\s*/g, " ");
  const longest = Math.max(0, ...(t.match(/`+/g) ?? []).map((m) => m.length));
  const fence = "`".repeat(longest + 1);
  const pad = t.startsWith("`") || t.endsWith("`") ? " " : "";
  return fence + pad + t + pad + fence;
}
