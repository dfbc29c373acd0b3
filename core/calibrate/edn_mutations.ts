/**
 * Structural mutations of an EDN answer: each rewrites every place of its kind in the
 * value (every number, every string, every map, every list), bottom-up, and leaves map
 * keys as they are (keys are the answer's structure, not its content). Pure: a value in,
 * a new value out; the input is never changed.
 */
import { EdnFloat, EdnList, EdnSet, EdnTagged, type EdnValue, isEdnMap } from "../edn/values.ts";
import { writeEdn } from "../edn/write.ts";
import { changeOneChar, editFloat, editInteger, type NumberEdit } from "./text_mutations.ts";

/** A rewrite of one node, applied after its children were rewritten; undefined keeps it. */
type Visit = (v: EdnValue) => EdnValue | undefined;

/** `v` with `visit` applied to every node below and at it (map keys excepted). */
export function rewriteEdn(v: EdnValue, visit: Visit): EdnValue {
  let node: EdnValue = v;
  if (Array.isArray(v)) node = v.map((x) => rewriteEdn(x, visit));
  else if (v instanceof EdnList) node = new EdnList(v.items.map((x) => rewriteEdn(x, visit)));
  else if (v instanceof EdnSet) node = new EdnSet(v.items.map((x) => rewriteEdn(x, visit)));
  else if (v instanceof EdnTagged) node = new EdnTagged(v.tag, rewriteEdn(v.value, visit));
  else if (isEdnMap(v)) {
    node = new Map([...v].map(([k, x]) => [k, rewriteEdn(x, visit)]));
  }
  return visit(node) ?? node;
}

/** The items of a vector, list or set, else null. */
function itemsOf(v: EdnValue): EdnValue[] | null {
  if (Array.isArray(v)) return v;
  if (v instanceof EdnList || v instanceof EdnSet) return v.items;
  return null;
}

/** A sequence of the same kind as `like` holding `items`. */
function sameKind(like: EdnValue, items: EdnValue[]): EdnValue {
  if (like instanceof EdnList) return new EdnList(items);
  if (like instanceof EdnSet) return new EdnSet(items);
  return items;
}

/** Every number edited (integers, floats, integral floats, big integers). */
export function editNumbers(e: NumberEdit): Visit {
  return (v) => {
    if (typeof v === "bigint") return editInteger(v, e) ?? undefined;
    if (v instanceof EdnFloat) {
      const r = editFloat(v.value, e);
      return r === null ? undefined : new EdnFloat(r);
    }
    if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
    if (!Number.isSafeInteger(v)) return editFloat(v, e) ?? undefined;
    const r = editInteger(BigInt(v), e);
    if (r === null) return undefined;
    // A safe result stays an integer; one beyond ±2^53 − 1 is a big integer, as read.
    return r >= BigInt(Number.MIN_SAFE_INTEGER) && r <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(r)
      : r;
  };
}

/** Every string value with one character changed (changeOneChar). */
export const changeStrings: Visit = (v) => typeof v === "string" ? changeOneChar(v) : undefined;

/** In every map, the values of the first two keys whose values differ, swapped. */
export const swapValues: Visit = (v) => {
  if (!isEdnMap(v) || v.size < 2) return undefined;
  const entries = [...v];
  const texts = entries.map(([, x]) => writeEdn(x));
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      if (texts[i] === texts[j]) continue;
      const swapped = entries.map(([k, x], n): [EdnValue, EdnValue] =>
        n === i ? [k, entries[j][1]] : n === j ? [k, entries[i][1]] : [k, x]
      );
      return new Map(swapped);
    }
  }
  return undefined;
};

/** Every vector, list and set without its last entry. */
export const dropLast: Visit = (v) => {
  const items = itemsOf(v);
  return items && items.length > 0 ? sameKind(v, items.slice(0, -1)) : undefined;
};

/** Every vector and list with its last entry repeated (a set cannot hold it twice). */
export const repeatLast: Visit = (v) => {
  if (v instanceof EdnSet) return undefined;
  const items = itemsOf(v);
  return items && items.length > 0 ? sameKind(v, [...items, items[items.length - 1]]) : undefined;
};

/** Every map with its keys in reverse order. */
export const reverseKeys: Visit = (v) =>
  isEdnMap(v) && v.size > 1 ? new Map([...v].reverse()) : undefined;

/** Every integer written as a float (`1` → `1.0`): the same number to a numeric reader. */
export const integersAsFloats: Visit = (v) =>
  typeof v === "number" && Number.isSafeInteger(v) && !Object.is(v, -0)
    ? new EdnFloat(v)
    : undefined;

/** Every vector written as a list (`[1 2]` → `(1 2)`): the same sequence to EDN data. */
export const vectorsAsLists: Visit = (v) => Array.isArray(v) ? new EdnList(v) : undefined;

/**
 * `v` written with other whitespace than the writer's: every entry of a collection on a
 * line of its own, indented two spaces per level, and two spaces between a key and its
 * value. The same data to any EDN reader.
 */
export function spacedLayout(v: EdnValue, depth = 0): string {
  const pad = "\n" + "  ".repeat(depth + 1);
  const end = "\n" + "  ".repeat(depth);
  if (v instanceof EdnTagged) return `#${v.tag} ${spacedLayout(v.value, depth)}`;
  const items = itemsOf(v);
  if (items !== null) {
    const [open, close] = Array.isArray(v)
      ? ["[", "]"]
      : v instanceof EdnList
      ? ["(", ")"]
      : ["#{", "}"];
    if (items.length === 0) return open + close;
    return open + items.map((x) => pad + spacedLayout(x, depth + 1)).join("") + end + close;
  }
  if (isEdnMap(v)) {
    if (v.size === 0) return "{}";
    const lines = [...v].map(([k, x]) =>
      pad + spacedLayout(k, depth + 1) + "  " + spacedLayout(x, depth + 1)
    );
    return "{" + lines.join("") + end + "}";
  }
  return writeEdn(v);
}
