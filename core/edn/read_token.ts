/**
 * The EDN reader's bare tokens: numbers (read_number.ts), `nil`, `true`, `false`,
 * keywords and symbols.
 */
import { EdnSymbol, type EdnValue, Keyword } from "./values.ts";
import { excerpt, fail, isDigit, type Reader, tokenEnd } from "./read_state.ts";
import { validName } from "./names.ts";
import { readNumber } from "./read_number.ts";

/** The token at the reader's position, which is not a bracket, string, character or `#`. */
export function readToken(r: Reader): EdnValue {
  const at = r.pos;
  const j = tokenEnd(r, at);
  const tok = r.text.slice(at, j);
  r.pos = j;
  const c0 = tok.charCodeAt(0);
  const c1 = tok.charCodeAt(1);
  if (isDigit(c0) || ((c0 === 0x2b || c0 === 0x2d || c0 === 0x2e) && isDigit(c1))) {
    return readNumber(r, tok, at);
  }
  if (tok === "nil") return null;
  if (tok === "true") return true;
  if (tok === "false") return false;
  if (c0 === 0x3a) {
    if (!validName(tok.slice(1), true)) {
      fail(
        r,
        at,
        'bad keyword "' + excerpt(r, at, j) + '"',
        tok.startsWith("::")
          ? "Auto-resolved keywords (::k) are not EDN: write :ns/k"
          : "Keywords are :name or :ns/name",
      );
    }
    return Keyword.of(tok.slice(1));
  }
  if (!validName(tok, false)) {
    fail(
      r,
      at,
      'bad token "' + excerpt(r, at, j) + '"',
      "Quote the text as a string if it is text",
    );
  }
  return EdnSymbol.of(tok);
}
