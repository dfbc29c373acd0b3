/**
 * A strict EDN reader that names the line and column of every problem.
 *
 * The grammar lives in `ednReaderCore`, a self-contained function (it refers to nothing
 * outside its own body; the model classes come in as an argument) so that the QuickJS
 * sandbox can embed its source text (sandbox_source.ts) instead of a second copy.
 */
import { DvergrError } from "../errors.ts";
import {
  EDN_MODEL,
  type EdnChar,
  type EdnModel,
  type EdnSet,
  type EdnUuid,
  type EdnValue,
} from "./values.ts";

/** Options of readEdn / readEdnAll. */
export interface ReadEdnOptions {
  /** The file name used in error messages (e.g. "calibration.edn"). */
  file?: string;
  /** Deepest nesting of collections, tags and discards accepted; default 500. */
  maxDepth?: number;
}

/** Default depth cap: deep enough for any bundle, shallow enough for every stack. */
export const EDN_MAX_DEPTH = 500;

/** What the reader core throws; readEdn turns it into a DvergrError("EDN_SYNTAX"). */
export interface EdnSyntaxFault extends Error {
  name: "EdnSyntaxError";
  ednFile: string | null;
  ednLine: number;
  ednColumn: number;
  ednProblem: string;
  ednHint: string;
}

/** The reader core's interface. */
export interface EdnReaderCore {
  /** Reads every top-level value of `text` (`one`: exactly one). Throws an EdnSyntaxFault. */
  read(text: string, file: string | null, maxDepth: number, one: boolean): EdnValue[];
  /** Whether `s` reads back as a keyword (after a colon) or as a symbol with that full name. */
  validName(s: string, keyword: boolean): boolean;
}

/**
 * The EDN grammar, self-contained: builds values with the classes of `M` and throws an
 * EdnSyntaxFault naming line and column. Its source text is embedded in the sandbox.
 */
export function ednReaderCore(M: EdnModel): EdnReaderCore {
  const NAMED_CHARS: Record<string, string> = {
    newline: "\n",
    space: " ",
    tab: "\t",
    return: "\r",
    backspace: "\b",
    formfeed: "\f",
  };
  const INT_RE = /^([+-]?)(0|[1-9][0-9]*)(N?)$/;
  const FLOAT_RE = /^[+-]?(?:0|[1-9][0-9]*)(\.[0-9]*)?([eE][+-]?[0-9]+)?(M?)$/;
  const INST_RE =
    /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?)?)?)?(?:Z|([+-])(\d{2}):(\d{2}))?$/;
  const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const HEX4_RE = /^[0-9a-fA-F]{4}$/;
  const ALPHA_RE = /^\p{L}/u;
  // Characters that may not appear in a symbol or keyword (beyond the token terminators).
  const BAD_NAME_CHAR_RE = /[\p{Cc}\p{Cf}\p{Z}]/u;
  const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
  const SYNTAX_HINT = "Check the EDN near that position (https://github.com/edn-format/edn)";

  function isWhitespace(c: number): boolean {
    return c === 32 || c === 44 || (c >= 9 && c <= 13);
  }

  // Token terminators: whitespace, commas, brackets, quote, comment, backslash and the
  // Clojure reader-macro characters (which are not EDN).
  function isTerminator(c: number): boolean {
    return isWhitespace(c) || c === 0x28 || c === 0x29 || c === 0x5b || c === 0x5d ||
      c === 0x7b || c === 0x7d || c === 0x22 || c === 0x3b || c === 0x5c || c === 0x40 ||
      c === 0x5e || c === 0x60 || c === 0x7e;
  }

  function isDigit(c: number): boolean {
    return c >= 48 && c <= 57;
  }

  // A symbol part may not start like a number, nor with a character that means something
  // else at the start of a token.
  function symbolPartOk(p: string): boolean {
    const c0 = p.charCodeAt(0);
    if (isDigit(c0) || c0 === 0x23 || c0 === 0x27 || c0 === 0x3a) return false;
    if ((c0 === 0x2b || c0 === 0x2d || c0 === 0x2e) && isDigit(p.charCodeAt(1))) return false;
    return true;
  }

  function validName(s: string, keyword: boolean): boolean {
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

  // An equality key: equal EDN values (in Clojure's sense: a vector equals a list with
  // the same items, 1 equals 1N, 0.0 equals -0.0) give equal keys.
  function keyOf(v: EdnValue): string {
    if (v === null) return "n";
    if (v === true) return "T";
    if (v === false) return "F";
    if (typeof v === "number") return (Number.isInteger(v) ? "i" : "f") + String(v);
    if (typeof v === "bigint") return "i" + v.toString();
    if (typeof v === "string") return JSON.stringify(v);
    if (v instanceof M.Keyword) return v.toString();
    if (v instanceof M.EdnSymbol) return "y" + v.toString();
    if (v instanceof M.EdnFloat) return "f" + String(v.value);
    if (v instanceof M.EdnChar) return "c" + JSON.stringify(v.value);
    if (v instanceof M.EdnUuid) return "u" + v.value;
    if (v instanceof Date) return "t" + v.getTime();
    if (Array.isArray(v)) return "[" + v.map(keyOf).join(" ") + "]";
    if (v instanceof M.EdnList) return "[" + v.items.map(keyOf).join(" ") + "]";
    if (v instanceof M.EdnSet) return "#{" + v.items.map(keyOf).sort().join(" ") + "}";
    if (v instanceof M.EdnTagged) return "#" + v.tag + " " + keyOf(v.value);
    if (v instanceof Map) {
      const entries: string[] = [];
      for (const [k, x] of v) entries.push(keyOf(k) + " " + keyOf(x));
      return "{" + entries.sort().join(" ") + "}";
    }
    return "?" + String(v);
  }

  function read(text: string, file: string | null, maxDepth: number, one: boolean): EdnValue[] {
    const n = text.length;
    let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte order mark is not content
    let depth = 0;
    let lastStart = 0; // where the value most recently returned by next() started
    const END = {} as EdnValue; // next() found the closing delimiter (or the end of text)
    const NEED = -2; // next(): a value is required here
    const EOF = -1; // next(): top level, the end of text ends the document

    function lineCol(at: number): { line: number; column: number } {
      let line = 1;
      let column = 1;
      for (let i = 0; i < at && i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === 10) {
          line++;
          column = 1;
        } else if (
          c < 0xdc00 || c > 0xdfff || i === 0 || text.charCodeAt(i - 1) < 0xd800 ||
          text.charCodeAt(i - 1) > 0xdbff
        ) {
          column++; // a low surrogate after a high one is the same character
        }
      }
      return { line, column };
    }

    function fail(at: number, problem: string, hint?: string, openedAt?: number): never {
      const { line, column } = lineCol(at);
      let p = problem;
      if (openedAt !== undefined) {
        const o = lineCol(openedAt);
        p += " (opened at line " + o.line + ", column " + o.column + ")";
      }
      const where = (file ? file + " " : "") + "line " + line + ", column " + column;
      const e = new Error(where + ": " + p) as EdnSyntaxFault;
      e.name = "EdnSyntaxError";
      e.ednFile = file;
      e.ednLine = line;
      e.ednColumn = column;
      e.ednProblem = p;
      e.ednHint = hint ?? SYNTAX_HINT;
      throw e;
    }

    function excerpt(from: number, to: number): string {
      const s = text.slice(from, to);
      return s.length > 40 ? s.slice(0, 37) + "..." : s;
    }

    function enter(at: number): void {
      if (++depth > maxDepth) {
        fail(
          at,
          "nesting deeper than " + maxDepth + " levels",
          "Flatten the data: EDN read here is limited to " + maxDepth + " nested levels",
        );
      }
    }

    function skipSpace(): void {
      while (pos < n) {
        const c = text.charCodeAt(pos);
        if (isWhitespace(c)) pos++;
        else if (c === 0x3b) {
          const nl = text.indexOf("\n", pos);
          pos = nl === -1 ? n : nl + 1;
        } else break;
      }
    }

    const CLOSER_NAME: Record<number, string> = { 0x29: ")", 0x5d: "]", 0x7d: "}" };

    // The next value, skipping whitespace, comments and #_ discards. `closer` is the
    // character code that ends the enclosing collection (then END is returned), EOF at
    // top level, or NEED when a value must follow (after a tag or #_).
    function next(closer: number, openAt: number, what: string): EdnValue {
      for (;;) {
        skipSpace();
        if (pos >= n) {
          if (closer === EOF) return END;
          if (closer === NEED) {
            fail(openAt, what + " is not followed by a value", "Put a value after " + what);
          }
          fail(n, "unclosed " + what, 'Close it with "' + CLOSER_NAME[closer] + '"', openAt);
        }
        const c = text.charCodeAt(pos);
        if (c === closer) {
          pos++;
          return END;
        }
        if (c === 0x29 || c === 0x5d || c === 0x7d) {
          if (closer === EOF) {
            fail(pos, 'unexpected "' + CLOSER_NAME[c] + '": nothing is open', "Remove it");
          }
          if (closer === NEED) {
            fail(openAt, what + " is not followed by a value", "Put a value after " + what);
          }
          fail(
            pos,
            'mismatched "' + CLOSER_NAME[c] + '": expected "' + CLOSER_NAME[closer] +
              '" to close the ' + what,
            "Check the brackets between the opening and this position",
            openAt,
          );
        }
        if (c === 0x23 && text.charCodeAt(pos + 1) === 0x5f) { // #_ discards the next value
          const at = pos;
          pos += 2;
          enter(at);
          next(NEED, at, "#_");
          depth--;
          continue;
        }
        const start = pos;
        const v = form(c);
        lastStart = start;
        return v;
      }
    }

    function form(c: number): EdnValue {
      switch (c) {
        case 0x7b:
          return readMap();
        case 0x5b:
          return readItems(0x5d, "vector");
        case 0x28:
          return new M.EdnList(readItems(0x29, "list"));
        case 0x22:
          return readString();
        case 0x5c:
          return readChar();
        case 0x23:
          return readDispatch();
        case 0x40:
        case 0x5e:
        case 0x60:
        case 0x7e:
        case 0x27:
          return fail(
            pos,
            'unexpected "' + text[pos] + '": reader macros are not EDN',
            "Quote the text as a string if it is meant as text",
          );
      }
      return readToken();
    }

    function readItems(closer: number, what: string): EdnValue[] {
      const at = pos++;
      enter(at);
      const items: EdnValue[] = [];
      for (;;) {
        const v = next(closer, at, what);
        if (v === END) break;
        items.push(v);
      }
      depth--;
      return items;
    }

    function readMap(): Map<EdnValue, EdnValue> {
      const at = pos++;
      enter(at);
      const m = new Map<EdnValue, EdnValue>();
      const seen = new Map<string, number>();
      for (;;) {
        const k = next(0x7d, at, "map");
        if (k === END) break;
        const kAt = lastStart;
        const kEnd = pos;
        const v = next(0x7d, at, "map");
        if (v === END) {
          fail(
            kAt,
            "map key " + excerpt(kAt, kEnd) + " has no value (odd number of forms in the map)",
            "Every map key needs a value: {:key value}",
          );
        }
        const id = keyOf(k);
        const first = seen.get(id);
        if (first !== undefined) {
          const f = lineCol(first);
          fail(
            kAt,
            "duplicate map key " + excerpt(kAt, kEnd) + " (first at line " + f.line +
              ", column " + f.column + ")",
            "Keep one entry per key",
          );
        }
        seen.set(id, kAt);
        m.set(k, v);
      }
      depth--;
      return m;
    }

    function readSet(): EdnSet {
      const at = pos;
      pos += 2;
      enter(at);
      const items: EdnValue[] = [];
      const seen = new Map<string, number>();
      for (;;) {
        const v = next(0x7d, at, "set");
        if (v === END) break;
        const id = keyOf(v);
        const first = seen.get(id);
        if (first !== undefined) {
          const f = lineCol(first);
          fail(
            lastStart,
            "duplicate set element " + excerpt(lastStart, pos) + " (first at line " + f.line +
              ", column " + f.column + ")",
            "Keep one of each element in a set",
          );
        }
        seen.set(id, lastStart);
        items.push(v);
      }
      depth--;
      return new M.EdnSet(items);
    }

    function readString(): string {
      const at = pos;
      let i = pos + 1;
      let chunk = i;
      let out = "";
      for (;;) {
        if (i >= n) fail(at, "unclosed string", 'Close the string with "');
        const c = text.charCodeAt(i);
        if (c === 0x22) {
          out += text.slice(chunk, i);
          pos = i + 1;
          return out;
        }
        if (c !== 0x5c) {
          i++;
          continue;
        }
        out += text.slice(chunk, i);
        if (i + 1 >= n) fail(at, "unclosed string", 'Close the string with "');
        const e = text[i + 1];
        switch (e) {
          case "n":
            out += "\n";
            break;
          case "t":
            out += "\t";
            break;
          case "r":
            out += "\r";
            break;
          case '"':
            out += '"';
            break;
          case "\\":
            out += "\\";
            break;
          case "b":
            out += "\b";
            break;
          case "f":
            out += "\f";
            break;
          case "u": {
            const hex = text.slice(i + 2, i + 6);
            if (!HEX4_RE.test(hex)) {
              fail(
                i,
                'bad escape "\\u' + hex + '" in string: \\u needs four hex digits',
                "Write \\u followed by four hex digits, e.g. \\u00e9",
              );
            }
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            fail(
              i,
              'bad escape "\\' + e + '" in string',
              'The escapes are \\n \\t \\r \\b \\f \\" \\\\ and \\uXXXX; write a backslash as \\\\',
            );
        }
        i += 2;
        chunk = i;
      }
    }

    function readChar(): EdnChar {
      const at = pos++;
      if (pos >= n || isWhitespace(text.charCodeAt(pos))) {
        fail(at, "backslash without a character", "Write \\space, \\newline, \\tab or \\a");
      }
      const first = String.fromCodePoint(text.codePointAt(pos)!);
      let j = pos + first.length;
      while (j < n && !isTerminator(text.charCodeAt(j))) j++;
      const tok = text.slice(pos, j);
      pos = j;
      if (tok === first) return new M.EdnChar(first);
      if (Object.prototype.hasOwnProperty.call(NAMED_CHARS, tok)) {
        return new M.EdnChar(NAMED_CHARS[tok]);
      }
      if (tok.length === 5 && tok[0] === "u" && HEX4_RE.test(tok.slice(1))) {
        return new M.EdnChar(String.fromCharCode(parseInt(tok.slice(1), 16)));
      }
      return fail(
        at,
        'bad character literal "\\' + excerpt(at + 1, j) + '"',
        "Characters are \\a, \\newline, \\space, \\tab, \\return, \\backspace, \\formfeed or \\uXXXX",
      );
    }

    function tokenEnd(from: number): number {
      let j = from;
      while (j < n && !isTerminator(text.charCodeAt(j))) j++;
      return j;
    }

    function readDispatch(): EdnValue {
      const at = pos;
      const c1 = text.charCodeAt(pos + 1);
      if (c1 === 0x7b) return readSet();
      if (c1 === 0x23) { // ##Inf ##-Inf ##NaN
        const j = tokenEnd(pos + 2);
        const tok = text.slice(pos + 2, j);
        pos = j;
        if (tok === "Inf") return Infinity;
        if (tok === "-Inf") return -Infinity;
        if (tok === "NaN") return NaN;
        return fail(at, 'unknown symbolic value "##' + tok + '"', "Use ##Inf, ##-Inf or ##NaN");
      }
      if (c1 === 0x3a) {
        return fail(
          at,
          "namespaced map syntax #:ns{…} is not supported",
          "Write the keys in full: {:ns/a 1 :ns/b 2}",
        );
      }
      if (pos + 1 < n && ALPHA_RE.test(text.slice(pos + 1, pos + 3))) {
        const j = tokenEnd(pos + 1);
        const tag = text.slice(pos + 1, j);
        if (!validName(tag, false)) fail(at, 'bad tag "#' + excerpt(pos + 1, j) + '"');
        pos = j;
        enter(at);
        const v = next(NEED, at, "#" + tag);
        depth--;
        if (tag === "inst") return readInst(v, lastStart);
        if (tag === "uuid") return readUuid(v, lastStart);
        return new M.EdnTagged(tag, v);
      }
      return fail(
        at,
        'unknown dispatch "#' + (pos + 1 < n ? text[pos + 1] : "") + '"',
        "EDN allows #{…} (set), #_ (discard), ##Inf/##-Inf/##NaN and #tag value",
      );
    }

    function readInst(v: EdnValue, at: number): Date {
      const hint = 'Write an RFC 3339 timestamp, e.g. #inst "2026-01-31T12:00:00.000Z"';
      if (typeof v !== "string") fail(at, "#inst needs a string", hint);
      const m = INST_RE.exec(v);
      if (m === null) fail(at, 'bad #inst "' + v + '"', hint);
      const year = Number(m[1]);
      const month = m[2] === undefined ? 1 : Number(m[2]);
      const day = m[3] === undefined ? 1 : Number(m[3]);
      const hour = m[4] === undefined ? 0 : Number(m[4]);
      const minute = m[5] === undefined ? 0 : Number(m[5]);
      const second = m[6] === undefined ? 0 : Number(m[6]);
      const ms = m[7] === undefined ? 0 : Number((m[7] + "00").slice(0, 3));
      const offH = m[9] === undefined ? 0 : Number(m[9]);
      const offM = m[10] === undefined ? 0 : Number(m[10]);
      const daysIn = new Date(Date.UTC(2000, month, 0)).getUTCDate() -
        (month === 2 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 1 : 0);
      if (
        month < 1 || month > 12 || day < 1 || day > daysIn || hour > 23 || minute > 59 ||
        second > 59 || offH > 23 || offM > 59
      ) {
        fail(at, 'bad #inst "' + v + '": a field is out of range', hint);
      }
      const d = new Date(0);
      d.setUTCFullYear(year, month - 1, day);
      d.setUTCHours(hour, minute, second, ms);
      const sign = m[8] === "-" ? -1 : 1;
      return new Date(d.getTime() - sign * (offH * 60 + offM) * 60000);
    }

    function readUuid(v: EdnValue, at: number): EdnUuid {
      if (typeof v !== "string" || !UUID_RE.test(v)) {
        fail(
          at,
          "bad #uuid " + (typeof v === "string" ? '"' + v + '"' : "value") +
            ": expected 8-4-4-4-12 hex digits",
          'Write #uuid "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"',
        );
      }
      return new M.EdnUuid(v.toLowerCase());
    }

    function readToken(): EdnValue {
      const at = pos;
      const j = tokenEnd(pos);
      const tok = text.slice(pos, j);
      pos = j;
      const c0 = tok.charCodeAt(0);
      const c1 = tok.charCodeAt(1);
      if (isDigit(c0) || ((c0 === 0x2b || c0 === 0x2d || c0 === 0x2e) && isDigit(c1))) {
        return readNumber(tok, at);
      }
      if (tok === "nil") return null;
      if (tok === "true") return true;
      if (tok === "false") return false;
      if (c0 === 0x3a) {
        if (!validName(tok.slice(1), true)) {
          fail(
            at,
            'bad keyword "' + excerpt(at, j) + '"',
            tok.startsWith("::")
              ? "Auto-resolved keywords (::k) are not EDN: write :ns/k"
              : "Keywords are :name or :ns/name",
          );
        }
        return M.Keyword.of(tok.slice(1));
      }
      if (!validName(tok, false)) {
        fail(at, 'bad token "' + excerpt(at, j) + '"', "Quote the text as a string if it is text");
      }
      return M.EdnSymbol.of(tok);
    }

    function readNumber(tok: string, at: number): EdnValue {
      const hint = "Numbers look like 42, -7, 42N, 1.5, 1e-3 or 2.5M";
      const mi = INT_RE.exec(tok);
      if (mi !== null) {
        if (mi[3] === "N") return BigInt(mi[1] + mi[2]);
        if (mi[2].length <= 15) {
          const v = Number(mi[1] + mi[2]);
          return v === 0 ? 0 : v; // no -0 among integers
        }
        const b = BigInt(mi[1] + mi[2]);
        return b <= MAX_SAFE && b >= -MAX_SAFE ? Number(b) : b;
      }
      const mf = FLOAT_RE.exec(tok);
      if (mf !== null && (mf[1] !== undefined || mf[2] !== undefined || mf[3] === "M")) {
        const v = Number(mf[3] === "M" ? tok.slice(0, -1) : tok);
        return Number.isInteger(v) ? new M.EdnFloat(v) : v;
      }
      if (/^[+-]?0[0-9]+N?$/.test(tok)) {
        fail(at, 'bad number "' + tok + '": leading zeros are not allowed', hint);
      }
      if (/^[+-]?[0-9]+\/[0-9]+$/.test(tok)) {
        fail(at, 'unsupported ratio "' + tok + '"', "Write the ratio as a float, e.g. 0.5");
      }
      return fail(at, 'bad number "' + excerpt(at, at + tok.length) + '"', hint);
    }

    const out: EdnValue[] = [];
    for (;;) {
      const v = next(EOF, 0, "document");
      if (v === END) break;
      if (one && out.length === 1) {
        fail(
          lastStart,
          "a second value after the first: this text must hold exactly one EDN value",
          "Remove the extra text, or wrap the values in a vector […]",
        );
      }
      out.push(v);
    }
    if (one && out.length === 0) {
      fail(
        pos,
        "no value: the text is empty or holds only whitespace and comments",
        "Write one EDN value, e.g. {}",
      );
    }
    return out;
  }

  return { read, validName };
}

const CORE = ednReaderCore(EDN_MODEL);

function syntaxError(e: unknown): unknown {
  if (!(e instanceof Error) || e.name !== "EdnSyntaxError") return e;
  const f = e as EdnSyntaxFault;
  return new DvergrError("EDN_SYNTAX", f.message, {
    hint: f.ednHint,
    details: { file: f.ednFile, line: f.ednLine, column: f.ednColumn },
  });
}

/**
 * Reads the one EDN value of `text` (whitespace and comments around it are fine). Throws
 * DvergrError("EDN_SYNTAX") naming file, line and column for empty text, a second value
 * or any syntax problem.
 */
export function readEdn(text: string, opts: ReadEdnOptions = {}): EdnValue {
  try {
    return CORE.read(text, opts.file ?? null, opts.maxDepth ?? EDN_MAX_DEPTH, true)[0];
  } catch (e) {
    throw syntaxError(e);
  }
}

/** Reads every top-level EDN value of `text`, in order (empty text gives []). */
export function readEdnAll(text: string, opts: ReadEdnOptions = {}): EdnValue[] {
  try {
    return CORE.read(text, opts.file ?? null, opts.maxDepth ?? EDN_MAX_DEPTH, false);
  } catch (e) {
    throw syntaxError(e);
  }
}

/** Whether `s` is a keyword name (`:s` reads back as the keyword `Keyword.of(s)`). */
export function isKeywordName(s: string): boolean {
  return CORE.validName(s, true);
}
