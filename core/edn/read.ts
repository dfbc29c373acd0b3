/**
 * A strict EDN reader that names the line and column of every problem.
 *
 * The grammar lives in `ednReaderCore`, a self-contained function (it refers to nothing
 * outside its own body; the model classes come in as an argument). Checkers reach the same
 * reader through the sandbox's EDN bridge (sandbox/edn_bridge.ts).
 */
import { DvergrError } from "../errors.ts";
import { EDN_MODEL, type EdnChar, type EdnModel, type EdnUuid, type EdnValue } from "./values.ts";

/** Options of readEdn / readEdnAll. */
export interface ReadEdnOptions {
  /** The file name used in error messages (e.g. "calibration.edn"). */
  file?: string;
  /** Deepest nesting of collections, tags and discards accepted; default 500. */
  maxDepth?: number;
  /**
   * Asked every few thousand values; once it answers true, reading stops with an
   * EdnDeadlineError, so that a caller with a time limit is never held up by one text.
   * (The caller owns the clock: this module reads none.)
   */
  expired?: () => boolean;
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
  /**
   * Reads every top-level value of `text` (`one`: exactly one). Throws an EdnSyntaxFault,
   * or an Error named "EdnDeadlineError" once `expired()` answers true.
   */
  read(
    text: string,
    file: string | null,
    maxDepth: number,
    one: boolean,
    expired?: () => boolean,
  ): EdnValue[];
  /** Whether `s` reads back as a keyword (after a colon) or as a symbol with that full name. */
  validName(s: string, keyword: boolean): boolean;
}

/**
 * The EDN grammar, self-contained: builds values with the classes of `M` and throws an
 * EdnSyntaxFault naming line and column.
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
  // Kinds of open frames while reading.
  const VECTOR = 0, LIST = 1, SET = 2, MAP = 3, TAG = 4, DISCARD = 5;
  interface Frame {
    kind: number;
    /** "map", "vector", …, or the tag ("#inst", "#_") */
    what: string;
    /** The closing bracket's char code; -1 for a tag or discard. */
    closer: number;
    /** Where it was opened. */
    at: number;
    items: EdnValue[];
    map: Map<EdnValue, EdnValue> | null;
    /**
     * Map keys or set elements so far → where each started: simple values (strings,
     * keywords, booleans, nil) by themselves, others by their equality key (keyOf).
     * Made on first use.
     */
    firstAt: Map<EdnValue, number> | null;
    firstAtByKey: Map<string, number> | null;
    /** A map's key waiting for its value (keyAt ≥ 0), with its start and end. */
    key: EdnValue;
    keyAt: number;
    keyEnd?: number;
  }
  const CLOCK_EVERY = 4096;
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

  // The common case, decided by one regex: ASCII names with no ":" or "#" that start
  // with a letter or a character that cannot begin a number.
  const SIMPLE_NAME_RE =
    /^[A-Za-z_*!?$%&=<>][\w*!?$%&=<>.+\-']*(?:\/[A-Za-z_*!?$%&=<>][\w*!?$%&=<>.+\-']*)?$/;

  function validName(s: string, keyword: boolean): boolean {
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

  function read(
    text: string,
    file: string | null,
    maxDepth: number,
    one: boolean,
    expired?: () => boolean,
  ): EdnValue[] {
    const n = text.length;
    // Values read until the next look at the clock.
    let untilClock = CLOCK_EVERY;
    let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte order mark is not content
    const out: EdnValue[] = [];
    // The open collections, tags and discards, innermost last: the reader keeps its own
    // stack rather than recursing, so deep input cannot exhaust a small (QuickJS) stack.
    const stack: Frame[] = [];

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

    function open(kind: number, what: string, closer: number, at: number, width: number) {
      if (stack.length >= maxDepth) {
        fail(
          at,
          "nesting deeper than " + maxDepth + " levels",
          "Flatten the data: EDN read here is limited to " + maxDepth + " nested levels",
        );
      }
      stack.push({
        kind,
        what,
        closer,
        at,
        items: [],
        map: kind === MAP ? new Map() : null,
        firstAt: null,
        firstAtByKey: null,
        key: null,
        keyAt: -1,
      });
      pos = at + width;
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

    function notFollowed(f: Frame): never {
      return fail(f.at, f.what + " is not followed by a value", "Put a value after " + f.what);
    }

    // Refuses a map key or set element equal to an earlier one (Clojure equality).
    // Strings, keywords (interned), booleans and nil are equal only when identical, and
    // never equal to any other kind, so they skip the equality key.
    function checkUnique(f: Frame, v: EdnValue, start: number, what: string): void {
      let first: number | undefined;
      if (
        typeof v === "string" || v instanceof M.Keyword || v === null || v === true || v === false
      ) {
        f.firstAt ??= new Map();
        first = f.firstAt.get(v);
        if (first === undefined) {
          f.firstAt.set(v, start);
          return;
        }
      } else {
        const id = keyOf(v);
        f.firstAtByKey ??= new Map();
        first = f.firstAtByKey.get(id);
        if (first === undefined) {
          f.firstAtByKey.set(id, start);
          return;
        }
      }
      const p = lineCol(first);
      fail(
        start,
        "duplicate " + what + " " + excerpt(start, pos) + " (first at line " + p.line +
          ", column " + p.column + ")",
        f.kind === MAP ? "Keep one entry per key" : "Keep one of each element in a set",
      );
    }

    // Hands a finished value, which started at `start`, to the innermost open frame.
    function deliver(value: EdnValue, start: number): void {
      let v = value;
      let at = start;
      for (;;) {
        const f = stack.length === 0 ? null : stack[stack.length - 1];
        if (f === null) {
          if (one && out.length === 1) {
            fail(
              at,
              "a second value after the first: this text must hold exactly one EDN value",
              "Remove the extra text, or wrap the values in a vector […]",
            );
          }
          out.push(v);
          return;
        }
        switch (f.kind) {
          case DISCARD:
            stack.pop();
            return;
          case TAG:
            stack.pop();
            v = tagged(f.what.slice(1), v, at);
            at = f.at;
            continue;
          case SET:
            checkUnique(f, v, at, "set element");
            f.items.push(v);
            return;
          case MAP:
            if (f.keyAt < 0) {
              checkUnique(f, v, at, "map key");
              f.key = v;
              f.keyAt = at;
              f.keyEnd = pos;
            } else {
              f.map!.set(f.key, v);
              f.keyAt = -1;
            }
            return;
          default:
            f.items.push(v);
            return;
        }
      }
    }

    // A closing bracket: ends the innermost collection and delivers it.
    function close(c: number): void {
      const f = stack[stack.length - 1];
      if (f.kind === TAG || f.kind === DISCARD) notFollowed(f);
      if (c !== f.closer) {
        fail(
          pos,
          'mismatched "' + CLOSER_NAME[c] + '": expected "' + CLOSER_NAME[f.closer] +
            '" to close the ' + f.what,
          "Check the brackets between the opening and this position",
          f.at,
        );
      }
      pos++;
      stack.pop();
      let v: EdnValue;
      if (f.kind === MAP) {
        if (f.keyAt >= 0) {
          fail(
            f.keyAt,
            "map key " + excerpt(f.keyAt, f.keyEnd!) +
              " has no value (odd number of forms in the map)",
            "Every map key needs a value: {:key value}",
          );
        }
        v = f.map!;
      } else if (f.kind === SET) v = new M.EdnSet(f.items);
      else if (f.kind === LIST) v = new M.EdnList(f.items);
      else v = f.items;
      deliver(v, f.at);
    }

    function tagged(tag: string, v: EdnValue, at: number): EdnValue {
      if (tag === "inst") return readInst(v, at);
      if (tag === "uuid") return readUuid(v, at);
      return new M.EdnTagged(tag, v);
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

    // After "#": opens a set, discard or tag frame, or delivers ##Inf/##-Inf/##NaN.
    function dispatch(at: number): void {
      const c1 = text.charCodeAt(at + 1);
      if (c1 === 0x7b) return open(SET, "set", 0x7d, at, 2);
      if (c1 === 0x5f) return open(DISCARD, "#_", -1, at, 2);
      if (c1 === 0x23) {
        const j = tokenEnd(at + 2);
        const tok = text.slice(at + 2, j);
        pos = j;
        if (tok === "Inf") return deliver(Infinity, at);
        if (tok === "-Inf") return deliver(-Infinity, at);
        if (tok === "NaN") return deliver(NaN, at);
        fail(at, 'unknown symbolic value "##' + tok + '"', "Use ##Inf, ##-Inf or ##NaN");
      }
      if (c1 === 0x3a) {
        fail(
          at,
          "namespaced map syntax #:ns{…} is not supported",
          "Write the keys in full: {:ns/a 1 :ns/b 2}",
        );
      }
      if (at + 1 < n && ALPHA_RE.test(text.slice(at + 1, at + 3))) {
        const j = tokenEnd(at + 1);
        const tag = text.slice(at + 1, j);
        if (!validName(tag, false)) fail(at, 'bad tag "#' + excerpt(at + 1, j) + '"');
        return open(TAG, "#" + tag, -1, at, j - at);
      }
      fail(
        at,
        'unknown dispatch "#' + (at + 1 < n ? text[at + 1] : "") + '"',
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
      // Fast path: a plain integer of at most 15 digits, without leading zeros.
      const len = tok.length;
      const i0 = tok.charCodeAt(0) === 0x2d || tok.charCodeAt(0) === 0x2b ? 1 : 0;
      if (len - i0 <= 15 && (tok.charCodeAt(i0) !== 0x30 || len - i0 === 1)) {
        let i = i0;
        while (i < len && isDigit(tok.charCodeAt(i))) i++;
        if (i === len) {
          const v = Number(tok);
          return v === 0 ? 0 : v; // no -0 among integers
        }
      }
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

    for (;;) {
      if (expired !== undefined && --untilClock === 0) {
        untilClock = CLOCK_EVERY;
        if (expired()) {
          const { line, column } = lineCol(pos);
          const e = new Error(
            "reading stopped at line " + line + ", column " + column +
              ": the time allowed ran out",
          );
          e.name = "EdnDeadlineError";
          throw e;
        }
      }
      skipSpace();
      if (pos >= n) {
        if (stack.length === 0) break;
        const f = stack[stack.length - 1];
        if (f.kind === TAG || f.kind === DISCARD) notFollowed(f);
        fail(n, "unclosed " + f.what, 'Close it with "' + CLOSER_NAME[f.closer] + '"', f.at);
      }
      const start = pos;
      const c = text.charCodeAt(pos);
      switch (c) {
        case 0x29:
        case 0x5d:
        case 0x7d:
          if (stack.length === 0) {
            fail(pos, 'unexpected "' + CLOSER_NAME[c] + '": nothing is open', "Remove it");
          }
          close(c);
          break;
        case 0x7b:
          open(MAP, "map", 0x7d, start, 1);
          break;
        case 0x5b:
          open(VECTOR, "vector", 0x5d, start, 1);
          break;
        case 0x28:
          open(LIST, "list", 0x29, start, 1);
          break;
        case 0x23:
          dispatch(start);
          break;
        case 0x22:
          deliver(readString(), start);
          break;
        case 0x5c:
          deliver(readChar(), start);
          break;
        case 0x40:
        case 0x5e:
        case 0x60:
        case 0x7e:
        case 0x27:
          fail(
            pos,
            'unexpected "' + text[pos] + '": reader macros are not EDN',
            "Quote the text as a string if it is meant as text",
          );
          break;
        default:
          deliver(readToken(), start);
      }
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
 * or any syntax problem; with `opts.expired`, an Error named "EdnDeadlineError" once it
 * answers true.
 */
export function readEdn(text: string, opts: ReadEdnOptions = {}): EdnValue {
  try {
    return CORE.read(
      text,
      opts.file ?? null,
      opts.maxDepth ?? EDN_MAX_DEPTH,
      true,
      opts.expired,
    )[0];
  } catch (e) {
    throw syntaxError(e);
  }
}

/** Reads every top-level EDN value of `text`, in order (empty text gives []). */
export function readEdnAll(text: string, opts: ReadEdnOptions = {}): EdnValue[] {
  try {
    return CORE.read(text, opts.file ?? null, opts.maxDepth ?? EDN_MAX_DEPTH, false, opts.expired);
  } catch (e) {
    throw syntaxError(e);
  }
}

/** Whether `s` is a keyword name (`:s` reads back as the keyword `Keyword.of(s)`). */
export function isKeywordName(s: string): boolean {
  return CORE.validName(s, true);
}
