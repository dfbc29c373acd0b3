/**
 * The EDN rule for symbol and keyword names, shared by the reader (what it accepts) and the
 * writer (which writes as a keyword only a name that reads back).
 */
import { isDigit, isTerminator } from "./read_state.ts";

// The common case, decided by one regex: ASCII names with no ":" or "#" that start
// with a letter or a character that cannot begin a number.
const SIMPLE_NAME_RE =
  /^[A-Za-z_*!?$%&=<>][\w*!?$%&=<>.+\-']*(?:\/[A-Za-z_*!?$%&=<>][\w*!?$%&=<>.+\-']*)?$/;
// Characters that may not appear in a symbol or keyword (beyond the token terminators).
const BAD_NAME_CHAR_RE = /[\p{Cc}\p{Cf}\p{Z}]/u;

// A symbol part may not start like a number, nor with a character that means something
// else at the start of a token.
function symbolPartOk(p: string): boolean {
  const c0 = p.charCodeAt(0);
  if (isDigit(c0) || c0 === 0x23 || c0 === 0x27 || c0 === 0x3a) return false;
  if ((c0 === 0x2b || c0 === 0x2d || c0 === 0x2e) && isDigit(p.charCodeAt(1))) return false;
  return true;
}

/**
 * Whether `s` reads back as a keyword (after its colon, `keyword` true) or as a symbol
 * with that full name.
 */
export function validName(s: string, keyword: boolean): boolean {
  if (SIMPLE_NAME_RE.test(s)) return true;
  if (s === "") return false;
  if (s === "/") return !keyword;
  for (let i = 0; i < s.length; i++) if (isTerminator(s.charCodeAt(i))) return false;
  if (BAD_NAME_CHAR_RE.test(s)) return false;
  if (s.startsWith(":") || s.endsWith(":") || s.includes("::")) return false;
  const slash = s.indexOf("/");
  const parts = slash === -1 ? [s] : [s.slice(0, slash), s.slice(slash + 1)];
  for (const p of parts) {
    if (p === "" || p.includes("/")) return false;
    if (!keyword && !symbolPartOk(p)) return false;
  }
  if (keyword && s.charCodeAt(0) === 0x23) return false;
  return true;
}
