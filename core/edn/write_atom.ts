/**
 * The EDN writer's values that hold no other values: nil, booleans, numbers, strings,
 * keywords, symbols, characters, uuids and instants.
 */
import { EdnChar, EdnFloat, EdnSymbol, EdnUuid, Keyword } from "./values.ts";
import { validName } from "./names.ts";

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

/**
 * EDN text for a value without parts; null for a collection, a tagged value or a map-like
 * object. Throws a TypeError for a value that has no EDN form.
 */
export function writeAtom(v: unknown): string | null {
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
  if (v instanceof Keyword) return writeKeyword(v);
  if (v instanceof EdnSymbol) {
    if (!validName(v.fullName, false)) {
      throw new TypeError("Cannot write symbol " + JSON.stringify(v.fullName) + ": not EDN");
    }
    return v.fullName;
  }
  if (v instanceof EdnFloat) return writeFloat(v.value);
  if (v instanceof EdnChar) return writeChar(v.value);
  if (v instanceof EdnUuid) return '#uuid "' + v.value + '"';
  if (v instanceof Date) return writeInst(v);
  return null;
}

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

function writeKeyword(k: Keyword): string {
  const name = k.fullName;
  if (!validName(name, true)) {
    throw new TypeError("Cannot write keyword " + JSON.stringify(name) + ": not an EDN name");
  }
  return ":" + name;
}
