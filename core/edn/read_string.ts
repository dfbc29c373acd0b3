/** The EDN reader's strings and their escapes. */
import { fail, type Reader } from "./read_state.ts";

/** Four hex digits, as after `\u`. */
export const HEX4_RE = /^[0-9a-fA-F]{4}$/;

/** The string starting at the reader's position (its opening quote). */
export function readString(r: Reader): string {
  const text = r.text;
  const n = r.n;
  const at = r.pos;
  let i = at + 1;
  let chunk = i;
  let out = "";
  for (;;) {
    if (i >= n) fail(r, at, "unclosed string", 'Close the string with "');
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      out += text.slice(chunk, i);
      r.pos = i + 1;
      return out;
    }
    if (c !== 0x5c) {
      i++;
      continue;
    }
    out += text.slice(chunk, i);
    if (i + 1 >= n) fail(r, at, "unclosed string", 'Close the string with "');
    out += escaped(r, i);
    i += text.charCodeAt(i + 1) === 0x75 ? 6 : 2; // \uXXXX or \n, \t, …
    chunk = i;
  }
}

/** The character the escape at `i` (its backslash) stands for. */
function escaped(r: Reader, i: number): string {
  const e = r.text[i + 1];
  switch (e) {
    case "n":
      return "\n";
    case "t":
      return "\t";
    case "r":
      return "\r";
    case '"':
      return '"';
    case "\\":
      return "\\";
    case "b":
      return "\b";
    case "f":
      return "\f";
    case "u": {
      const hex = r.text.slice(i + 2, i + 6);
      if (!HEX4_RE.test(hex)) {
        fail(
          r,
          i,
          'bad escape "\\u' + hex + '" in string: \\u needs four hex digits',
          "Write \\u followed by four hex digits, e.g. \\u00e9",
        );
      }
      return String.fromCharCode(parseInt(hex, 16));
    }
    default:
      return fail(
        r,
        i,
        'bad escape "\\' + e + '" in string',
        'The escapes are \\n \\t \\r \\b \\f \\" \\\\ and \\uXXXX; write a backslash as \\\\',
      );
  }
}
