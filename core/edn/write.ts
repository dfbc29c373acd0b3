/**
 * The EDN writer: the value model and plain JavaScript values to EDN text that readEdn
 * gives back exactly.
 *
 * Like the reader, the writer lives in a self-contained function (`ednWriterCore`) that
 * takes the value model as an argument.
 */
import { EDN_MODEL, type EdnModel, type EdnTagged, type Keyword } from "./values.ts";
import { ednReaderCore } from "./read.ts";

/** Options of writeEdn. */
export interface WriteEdnOptions {
  /** Multi-line output: collections that do not fit in 80 columns get one item per line. */
  pretty?: boolean;
}

/** The writer core's interface. */
export interface EdnWriterCore {
  /** EDN text for `value`; throws a TypeError for a value that has no EDN form. */
  write(value: unknown, pretty: boolean): string;
}

/**
 * The EDN writer, self-contained: `validName` is the reader's name rule, so that only
 * names that read back are written as keywords.
 */
export function ednWriterCore(
  M: EdnModel,
  validName: (s: string, keyword: boolean) => boolean,
): EdnWriterCore {
  const WIDTH = 80;
  const MAX_DEPTH = 500;
  const NAMED: Record<string, string> = {
    "\n": "newline",
    " ": "space",
    "\t": "tab",
    "\r": "return",
    "\b": "backspace",
    "\f": "formfeed",
  };
  // deno-lint-ignore no-control-regex -- control characters are exactly what must be escaped
  const NEEDS_ESCAPE_RE = /["\\\u0000-\u001f\u007f\ud800-\udfff]/;

  function hex4(c: number): string {
    return "\\u" + c.toString(16).padStart(4, "0");
  }

  function writeString(s: string): string {
    if (!NEEDS_ESCAPE_RE.test(s)) return '"' + s + '"';
    let out = '"';
    let chunk = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      let esc: string;
      if (c === 0x22) esc = '\\"';
      else if (c === 0x5c) esc = "\\\\";
      else if (c === 10) esc = "\\n";
      else if (c === 9) esc = "\\t";
      else if (c === 13) esc = "\\r";
      else if (c === 8) esc = "\\b";
      else if (c === 12) esc = "\\f";
      else if (c < 0x20 || c === 0x7f) esc = hex4(c);
      else if (c >= 0xd800 && c <= 0xdbff) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          i++; // a well-formed pair stays as it is
          continue;
        }
        esc = hex4(c); // a lone surrogate would not survive UTF-8
      } else if (c >= 0xdc00 && c <= 0xdfff) esc = hex4(c);
      else continue;
      out += s.slice(chunk, i) + esc;
      chunk = i + 1;
    }
    return out + s.slice(chunk) + '"';
  }

  function writeChar(v: string): string {
    if (Object.prototype.hasOwnProperty.call(NAMED, v)) return "\\" + NAMED[v];
    const c = v.charCodeAt(0);
    if (v.length === 0 || v.length > 2 || (v.length === 2 && (c < 0xd800 || c > 0xdbff))) {
      throw new TypeError("Cannot write character " + JSON.stringify(v) + ": not one character");
    }
    if (c <= 0x20 || c === 0x7f || (v.length === 1 && c >= 0xd800 && c <= 0xdfff)) {
      return "\\u" + c.toString(16).padStart(4, "0");
    }
    return "\\" + v;
  }

  // A float whose value is integral: "1.0", "-0.0", "1e+21".
  function integralFloat(v: number): string {
    if (Object.is(v, -0)) return "-0.0";
    const s = String(v);
    return s.includes("e") ? s : s + ".0";
  }

  function writeNumber(v: number): string {
    if (Number.isNaN(v)) return "##NaN";
    if (v === Infinity) return "##Inf";
    if (v === -Infinity) return "##-Inf";
    if (Number.isInteger(v)) {
      return Math.abs(v) <= Number.MAX_SAFE_INTEGER && !Object.is(v, -0)
        ? String(v)
        : integralFloat(v);
    }
    return String(v);
  }

  function writeFloat(v: number): string {
    if (Number.isInteger(v)) return integralFloat(v);
    return writeNumber(v);
  }

  function writeInst(d: Date): string {
    const t = d.getTime();
    if (Number.isNaN(t)) throw new TypeError("Cannot write an invalid Date as #inst");
    const y = d.getUTCFullYear();
    if (y < 0 || y > 9999) {
      throw new TypeError("Cannot write the Date " + d.toISOString() + " as #inst: year " + y);
    }
    return '#inst "' + d.toISOString().replace(/Z$/, "-00:00") + '"';
  }

  function isPlainObject(v: object): boolean {
    const p = Object.getPrototypeOf(v);
    return p === Object.prototype || p === null;
  }

  function writeKeywordName(k: Keyword): string {
    const name = k.fullName;
    if (!validName(name, true)) {
      throw new TypeError("Cannot write keyword " + JSON.stringify(name) + ": not an EDN name");
    }
    return ":" + name;
  }

  // The entries of a map-like value as [keyText-producer, value] pairs.
  function entriesOf(v: object): [unknown, unknown][] | null {
    if (v instanceof Map) return [...v.entries()];
    if (isPlainObject(v)) {
      return Object.keys(v).map((k) => [
        validName(k, true) ? M.Keyword.of(k) : k,
        (v as Record<string, unknown>)[k],
      ]);
    }
    return null;
  }

  // The items and brackets of a sequential value, or null.
  function itemsOf(v: object): [string, unknown[], string] | null {
    if (Array.isArray(v)) return ["[", v, "]"];
    if (v instanceof M.EdnList) return ["(", v.items, ")"];
    if (v instanceof M.EdnSet) return ["#{", v.items, "}"];
    if (v instanceof Set) return ["#{", [...v], "}"];
    return null;
  }

  function atom(v: unknown): string | null {
    if (v === null || v === undefined) return "nil";
    switch (typeof v) {
      case "boolean":
        return v ? "true" : "false";
      case "number":
        return writeNumber(v);
      case "bigint":
        return v.toString() + "N";
      case "string":
        return writeString(v);
      case "object":
        break;
      default:
        throw new TypeError("Cannot write a " + typeof v + " as EDN");
    }
    if (v instanceof M.Keyword) return writeKeywordName(v);
    if (v instanceof M.EdnSymbol) {
      if (!validName(v.fullName, false)) {
        throw new TypeError("Cannot write symbol " + JSON.stringify(v.fullName) + ": not EDN");
      }
      return v.fullName;
    }
    if (v instanceof M.EdnFloat) return writeFloat(v.value);
    if (v instanceof M.EdnChar) return writeChar(v.value);
    if (v instanceof M.EdnUuid) return '#uuid "' + v.value + '"';
    if (v instanceof Date) return writeInst(v);
    return null;
  }

  function tagText(t: EdnTagged): string {
    if (!validName(t.tag, false) || !/^\p{L}/u.test(t.tag)) {
      throw new TypeError("Cannot write tag " + JSON.stringify(t.tag) + ": not an EDN tag");
    }
    return "#" + t.tag + " ";
  }

  function flat(v: unknown, depth: number): string {
    const a = atom(v);
    if (a !== null) return a;
    if (depth > MAX_DEPTH) {
      throw new TypeError("Cannot write a value nested deeper than " + MAX_DEPTH + " levels");
    }
    const o = v as object;
    if (o instanceof M.EdnTagged) return tagText(o) + flat(o.value, depth + 1);
    const seq = itemsOf(o);
    if (seq !== null) {
      const [open, items, close] = seq;
      let s = open;
      for (let i = 0; i < items.length; i++) {
        s += (i === 0 ? "" : " ") + flat(items[i], depth + 1);
      }
      return s + close;
    }
    const entries = entriesOf(o);
    if (entries !== null) {
      let s = "{";
      for (let i = 0; i < entries.length; i++) {
        s += (i === 0 ? "" : ", ") + flat(entries[i][0], depth + 1) + " " +
          flat(entries[i][1], depth + 1);
      }
      return s + "}";
    }
    throw new TypeError(
      "Cannot write a " + (o.constructor?.name ?? "object") + " as EDN: no EDN form",
    );
  }

  // Pretty layout: a value that fits in the remaining width is written flat; otherwise a
  // map gets one entry per line and a sequence one item per line, aligned after the bracket.
  function pretty(v: unknown, col: number, depth: number): string {
    const f = flat(v, depth);
    if (col + f.length <= WIDTH || atom(v) !== null) return f;
    const o = v as object;
    if (o instanceof M.EdnTagged) {
      const t = tagText(o);
      return t + pretty(o.value, col + t.length, depth + 1);
    }
    const seq = itemsOf(o);
    if (seq !== null) {
      const [open, items, close] = seq;
      const pad = "\n" + " ".repeat(col + open.length);
      return open + items.map((x) => pretty(x, col + open.length, depth + 1)).join(pad) + close;
    }
    const entries = entriesOf(o)!;
    const pad = " ".repeat(col + 1);
    const lines = entries.map(([k, x]) => {
      const kt = pretty(k, col + 1, depth + 1);
      const lastLine = kt.slice(kt.lastIndexOf("\n") + 1);
      const keyEnd = (kt.includes("\n") ? 0 : col + 1) + lastLine.length + 1;
      const xf = flat(x, depth + 1);
      if (keyEnd + xf.length <= WIDTH || atom(x) !== null || keyEnd <= col + 1 + 24) {
        return kt + " " + pretty(x, keyEnd, depth + 1);
      }
      // A long key with a big value: the value goes on its own line under the key.
      return kt + "\n" + pad + pretty(x, col + 1, depth + 1);
    });
    return "{" + lines.join(",\n" + pad) + "}";
  }

  function write(value: unknown, prettyOut: boolean): string {
    return prettyOut ? pretty(value, 0, 0) : flat(value, 0);
  }

  return { write };
}

const CORE = ednWriterCore(EDN_MODEL, ednReaderCore(EDN_MODEL).validName);

/**
 * EDN text for an EDN value or plain JavaScript data: plain objects become maps with
 * keyword keys (a key that is not a keyword name stays a string), JS Maps keep their
 * keys as values, arrays become vectors, JS Sets sets, integral numbers ints (beyond
 * ±2^53 − 1: floats), NaN/±Infinity ##NaN/##Inf/##-Inf, undefined nil, Date #inst.
 * readEdn gives every EDN value back exactly. Throws a TypeError for functions, symbols,
 * class instances and other values without an EDN form.
 */
export function writeEdn(value: unknown, opts: WriteEdnOptions = {}): string {
  return CORE.write(value, opts.pretty === true);
}
