/** The EDN reader's character literals: `\a`, `\newline`, `\u00e9`. */
import { EdnChar } from "./values.ts";
import { excerpt, fail, isTerminator, isWhitespace, type Reader } from "./read_state.ts";
import { HEX4_RE } from "./read_string.ts";

const NAMED_CHARS: Record<string, string> = {
  newline: "\n",
  space: " ",
  tab: "\t",
  return: "\r",
  backspace: "\b",
  formfeed: "\f",
};

/** The character literal starting at the reader's position (its backslash). */
export function readChar(r: Reader): EdnChar {
  const text = r.text;
  const n = r.n;
  const at = r.pos;
  const from = at + 1;
  if (from >= n || isWhitespace(text.charCodeAt(from))) {
    fail(r, at, "backslash without a character", "Write \\space, \\newline, \\tab or \\a");
  }
  const first = String.fromCodePoint(text.codePointAt(from)!);
  let j = from + first.length;
  while (j < n && !isTerminator(text.charCodeAt(j))) j++;
  const tok = text.slice(from, j);
  r.pos = j;
  if (tok === first) return new EdnChar(first);
  if (Object.prototype.hasOwnProperty.call(NAMED_CHARS, tok)) {
    return new EdnChar(NAMED_CHARS[tok]);
  }
  if (tok.length === 5 && tok[0] === "u" && HEX4_RE.test(tok.slice(1))) {
    return new EdnChar(String.fromCharCode(parseInt(tok.slice(1), 16)));
  }
  return fail(
    r,
    at,
    'bad character literal "\\' + excerpt(r, at + 1, j) + '"',
    "Characters are \\a, \\newline, \\space, \\tab, \\return, \\backspace, \\formfeed or \\uXXXX",
  );
}
