/**
 * Content ids, byte-compatible with the earlier system's value hashing (hasch,
 * docs/compatibility.md §3.2): `ednHash` is SHA-512 over hasch's byte coercion of an EDN value,
 * `hashUuid` the version-5-style UUID built from its first 16 bytes, and `contentId` the
 * id of a bundle, `hashUuid([:dvergr/room-workflow {path text …}])`.
 *
 * Coercion, per value (tag byte first):
 *
 * | value                    | bytes                                                    |
 * |--------------------------|----------------------------------------------------------|
 * | nil                      | `0`                                                      |
 * | boolean                  | `1`, then 41 (true) or 40 (false)                        |
 * | integer, bigint          | `2`, UTF-8 of the decimal text                           |
 * | float                    | `2`, UTF-8 of Java's `Double.toString` (`1.0`, `1.0E21`) |
 * | string, character        | `3`, safe(UTF-8)                                         |
 * | symbol                   | `4`, safe(UTF-8 of `ns/name`)                            |
 * | keyword                  | `5`, safe(UTF-8 of `:ns/name`)                           |
 * | `#inst`                  | `6`, UTF-8 of the epoch milliseconds                     |
 * | `#uuid`                  | `7`, UTF-8 of the lower-case text                        |
 * | list / vector            | `8` / `9`, SHA-512 of the items' coercions concatenated (an empty one hashes as `[nil]`, as hasch does) |
 * | map                      | `10`, XOR of the first 32 bytes of each entry coerced as the vector `[k v]` (nothing for `{}`) |
 * | set                      | `11`, XOR of the first 32 bytes of SHA-512 of each element's coercion |
 * | other `#tag value`       | `12`, SHA-512 of the coercions of the symbol `tag` and the value |
 *
 * safe(b) is `b` followed by one byte per byte of `b` (1 where that byte, signed, is in
 * 1..29, else 0) when `b` is shorter than 1024 bytes, else SHA-512(b).
 *
 * Plain JavaScript data is hashed as writeEdn would write it (plain objects are maps
 * with keyword keys), so `hashUuid(x)` equals `hashUuid(readEdn(writeEdn(x)))`.
 */
import { Sha512, sha512 } from "../sha512.ts";
import { isKeywordName } from "../edn/read.ts";
import {
  EdnChar,
  EdnFloat,
  EdnList,
  EdnSet,
  EdnSymbol,
  EdnTagged,
  EdnUuid,
  type EdnValue,
  Keyword,
} from "../edn/values.ts";
import type { FileMap } from "./file_map.ts";

const NIL = 0, BOOLEAN = 1, NUMBER = 2, STRING = 3, SYMBOL = 4, KEYWORD = 5, INST = 6;
const UUID = 7, SEQ = 8, VECTOR = 9, MAP = 10, SET = 11, LITERAL = 12;
/** Byte strings this long or longer are represented by their digest. */
const SPLIT_SIZE = 1024;
/** How many bytes of each entry's hash the commutative XOR keeps. */
const XOR_BYTES = 32;

const encoder = new TextEncoder();
const ROOM_WORKFLOW = Keyword.of("dvergr/room-workflow");

/** UTF-8 as Java's String.getBytes("UTF-8"): a lone surrogate becomes "?". */
function utf8(s: string): Uint8Array {
  return encoder.encode(
    s.isWellFormed() ? s : s.replace(/[\ud800-\udfff]/g, (c, i: number) => {
      const code = c.charCodeAt(0);
      const pairs = code <= 0xdbff
        ? (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00
        : (s.charCodeAt(i - 1) & 0xfc00) === 0xd800;
      return pairs ? c : "?";
    }),
  );
}

function tagged(tag: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.length + 1);
  out[0] = tag;
  out.set(body, 1);
  return out;
}

/** safe(b) (see above) fed to `h`: `b`, then its flag bytes, or SHA-512(b) when long. */
function feedSafe(h: Sha512, b: Uint8Array): void {
  if (b.length >= SPLIT_SIZE) {
    h.update(sha512(b));
    return;
  }
  h.update(b);
  // A byte, signed, in 1..29 (a byte over 127 is negative).
  for (let i = 0; i < b.length; i++) flags[i] = b[i] > 0 && b[i] < 30 ? 1 : 0;
  h.update(flags.subarray(0, b.length));
}

/** safe()'s flag bytes, made here and fed at once: a call per byte cost more than hashing. */
const flags = new Uint8Array(SPLIT_SIZE);

/**
 * Hashers not in use. A value's coercion is fed to a hasher as it is made, never made as
 * bytes first, and a nested value takes a hasher of its own from here (a bundle's content id
 * hashes one entry per file: allocating their arrays cost more than hashing them).
 */
const spare: Sha512[] = [];

/** The SHA-512 of what `write` feeds, on a spare hasher. */
function digestOf<T>(write: (h: Sha512, arg: T) => void, arg: T): Uint8Array {
  const h = spare.pop()?.reset() ?? new Sha512();
  write(h, arg);
  const out = h.digest();
  spare.push(h);
  return out;
}

/**
 * Java's `Double.toString` (JDK 19+: the shortest decimal that reads back, at least one
 * fractional digit; scientific `d.dddE±n` outside [10^-3, 10^7)).
 */
export function javaDoubleString(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "Infinity";
  if (v === -Infinity) return "-Infinity";
  if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0";
  const sign = v < 0 ? "-" : "";
  const a = Math.abs(v);
  let [mantissa, exp] = a.toExponential().split("e");
  if (mantissa.length === 1) {
    // Java picks the closest decimal of length 2 when one digit would do (4.9E-324).
    const two = a.toExponential(1);
    if (Number(two) === a) [mantissa, exp] = two.split("e");
  }
  const digits = mantissa.replace(".", "").replace(/(?<=.)0+$/, "");
  const e = Number(exp);
  if (a >= 1e-3 && a < 1e7) {
    if (e < 0) return sign + "0." + "0".repeat(-e - 1) + digits;
    const int = digits.slice(0, e + 1).padEnd(e + 1, "0");
    return sign + int + "." + (digits.slice(e + 1) || "0");
  }
  return sign + digits[0] + "." + (digits.slice(1) || "0") + "E" + e;
}

function numberText(v: number): string {
  return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER && !Object.is(v, -0)
    ? String(v)
    : javaDoubleString(v);
}

/** The items' coercions, one after the other (an empty sequence as if it held one nil, as hasch does). */
function feedSeq(h: Sha512, items: readonly unknown[]): void {
  if (items.length === 0) h.byte(NIL);
  for (const x of items) feed(h, x);
}

function seqDigest(items: readonly unknown[]): Uint8Array {
  return digestOf(feedSeq, items);
}

function xorFirst(hashes: Iterable<Uint8Array>): Uint8Array {
  let acc: Uint8Array | null = null;
  for (const h of hashes) {
    if (acc === null) acc = new Uint8Array(Math.min(h.length, XOR_BYTES));
    for (let i = 0; i < acc.length; i++) acc[i] ^= h[i];
  }
  return acc ?? new Uint8Array(0);
}

function* mapEntries(v: Map<unknown, unknown> | Record<string, unknown>): Iterable<Uint8Array> {
  const entries = v instanceof Map
    ? v.entries()
    : Object.entries(v).map(([k, x]) => [isKeywordName(k) ? Keyword.of(k) : k, x]);
  for (const entry of entries) yield tagged(VECTOR, seqDigest(entry));
}

function* setElements(items: Iterable<unknown>): Iterable<Uint8Array> {
  for (const x of items) yield digestOf(feed, x);
}

/** Feeds `h` the coercion of `v` (the table above). */
function feed(h: Sha512, v: unknown): void {
  if (v === null || v === undefined) {
    h.byte(NIL);
    return;
  }
  switch (typeof v) {
    case "boolean":
      h.byte(BOOLEAN).byte(v ? 41 : 40);
      return;
    case "number":
      h.byte(NUMBER).update(utf8(numberText(v)));
      return;
    case "bigint":
      h.byte(NUMBER).update(utf8(v.toString()));
      return;
    case "string":
      feedSafe(h.byte(STRING), utf8(v));
      return;
    case "object":
      break;
    default:
      throw new TypeError(`Cannot hash a ${typeof v}: it has no EDN form`);
  }
  if (v instanceof Keyword) feedSafe(h.byte(KEYWORD), utf8(v.toString()));
  else if (v instanceof EdnSymbol) feedSafe(h.byte(SYMBOL), utf8(v.fullName));
  else if (v instanceof EdnFloat) h.byte(NUMBER).update(utf8(javaDoubleString(v.value)));
  else if (v instanceof EdnChar) feedSafe(h.byte(STRING), utf8(v.value));
  else if (v instanceof EdnUuid) h.byte(UUID).update(utf8(v.value));
  else if (v instanceof Date) h.byte(INST).update(utf8(String(v.getTime())));
  else if (Array.isArray(v)) h.byte(VECTOR).update(seqDigest(v));
  else if (v instanceof EdnList) h.byte(SEQ).update(seqDigest(v.items));
  else if (v instanceof EdnSet) h.byte(SET).update(xorFirst(setElements(v.items)));
  else if (v instanceof Set) h.byte(SET).update(xorFirst(setElements(v)));
  else if (v instanceof EdnTagged) {
    h.byte(LITERAL).update(seqDigest([EdnSymbol.of(v.tag), v.value]));
  } else if (v instanceof Map) h.byte(MAP).update(xorFirst(mapEntries(v)));
  else {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(`Cannot hash a ${v.constructor?.name ?? "value"}: it has no EDN form`);
    }
    h.byte(MAP).update(xorFirst(mapEntries(v as Record<string, unknown>)));
  }
}

/**
 * The 64-byte SHA-512 hash of an EDN value (or of plain data, as writeEdn would write
 * it), as hasch's `edn-hash` gives it. Throws a TypeError for values with no EDN form.
 */
export function ednHash(v: EdnValue | unknown): Uint8Array {
  return digestOf(feed, v);
}

function hex(bytes: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) s += bytes[i].toString(16).padStart(2, "0");
  return s;
}

/**
 * The UUID of an EDN value (or of plain data, as ednHash), as hasch's `uuid` gives it:
 * version 5, RFC variant, first hex digit 0–3.
 */
export function hashUuid(v: EdnValue | unknown): string {
  const b = ednHash(v).slice(0, 16);
  b[0] &= 0x3f; // bits 63 and 62 of the high word cleared
  b[6] = (b[6] | 0x50) & 0x5f; // version 5
  b[8] = (b[8] | 0x80) & 0xbf; // variant: bit 63 of the low word set, 62 cleared
  return `${hex(b, 0, 4)}-${hex(b, 4, 6)}-${hex(b, 6, 8)}-${hex(b, 8, 10)}-${hex(b, 10, 16)}`;
}

/**
 * The content id of a bundle: `hashUuid([:dvergr/room-workflow files])` over every file's
 * relative path and text. Any byte changed in any file gives a new id; the order of the
 * map does not matter; the bundle's name is not part of it.
 */
export function contentId(files: FileMap): string {
  return hashUuid([ROOM_WORKFLOW, files]);
}
