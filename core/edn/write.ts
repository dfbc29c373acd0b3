/**
 * The EDN writer: the value model and plain JavaScript values to EDN text that readEdn
 * gives back exactly. Values without parts are written by write_atom.ts; this module
 * writes collections and tagged values, flat or laid out in 80 columns.
 */
import { EdnList, EdnSet, EdnTagged, Keyword } from "./values.ts";
import { validName } from "./names.ts";
import { writeAtom } from "./write_atom.ts";

/** Options of writeEdn. */
export interface WriteEdnOptions {
  /** Multi-line output: collections that do not fit in 80 columns get one item per line. */
  pretty?: boolean;
}

const WIDTH = 80;
const MAX_DEPTH = 500;

function isPlainObject(v: object): boolean {
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

// The entries of a map-like value as [key, value] pairs: a plain object's keys become
// keywords when they read back as keywords.
function entriesOf(v: object): [unknown, unknown][] | null {
  if (v instanceof Map) return [...v.entries()];
  if (isPlainObject(v)) {
    return Object.keys(v).map((k) => [
      validName(k, true) ? Keyword.of(k) : k,
      (v as Record<string, unknown>)[k],
    ]);
  }
  return null;
}

// The items and brackets of a sequential value, or null.
function itemsOf(v: object): [string, unknown[], string] | null {
  if (Array.isArray(v)) return ["[", v, "]"];
  if (v instanceof EdnList) return ["(", v.items, ")"];
  if (v instanceof EdnSet) return ["#{", v.items, "}"];
  if (v instanceof Set) return ["#{", [...v], "}"];
  return null;
}

function tagText(t: EdnTagged): string {
  if (!validName(t.tag, false) || !/^\p{L}/u.test(t.tag)) {
    throw new TypeError("Cannot write tag " + JSON.stringify(t.tag) + ": not an EDN tag");
  }
  return "#" + t.tag + " ";
}

function flat(v: unknown, depth: number): string {
  const a = writeAtom(v);
  if (a !== null) return a;
  if (depth > MAX_DEPTH) {
    throw new TypeError("Cannot write a value nested deeper than " + MAX_DEPTH + " levels");
  }
  const o = v as object;
  if (o instanceof EdnTagged) return tagText(o) + flat(o.value, depth + 1);
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
  if (col + f.length <= WIDTH || writeAtom(v) !== null) return f;
  const o = v as object;
  if (o instanceof EdnTagged) {
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
    if (keyEnd + xf.length <= WIDTH || writeAtom(x) !== null || keyEnd <= col + 1 + 24) {
      return kt + " " + pretty(x, keyEnd, depth + 1);
    }
    // A long key with a big value: the value goes on its own line under the key.
    return kt + "\n" + pad + pretty(x, col + 1, depth + 1);
  });
  return "{" + lines.join(",\n" + pad) + "}";
}

/**
 * EDN text for an EDN value or plain JavaScript data: plain objects become maps with
 * keyword keys (a key that is not a keyword name stays a string), JS Maps keep their
 * keys as values, arrays become vectors, JS Sets sets, integral numbers ints (beyond
 * ±2^53 − 1: floats), NaN/±Infinity ##NaN/##Inf/##-Inf, undefined nil, Date #inst.
 * readEdn gives every EDN value back exactly. Throws a TypeError for functions, symbols,
 * class instances and other values without an EDN form.
 */
export function writeEdn(value: unknown, opts: WriteEdnOptions = {}): string {
  return opts.pretty === true ? pretty(value, 0, 0) : flat(value, 0);
}
