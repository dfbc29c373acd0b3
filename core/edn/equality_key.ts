/** Clojure's equality of EDN values, as a text key (the reader refuses duplicates by it). */
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
} from "./values.ts";

/**
 * A key equal for equal EDN values, in Clojure's sense: a vector equals a list with the
 * same items, 1 equals 1N, 0.0 equals -0.0, maps and sets regardless of order.
 */
export function equalityKey(v: EdnValue): string {
  if (v === null) return "n";
  if (v === true) return "T";
  if (v === false) return "F";
  if (typeof v === "number") return (Number.isInteger(v) ? "i" : "f") + String(v);
  if (typeof v === "bigint") return "i" + v.toString();
  if (typeof v === "string") return JSON.stringify(v);
  if (v instanceof Keyword) return v.toString();
  if (v instanceof EdnSymbol) return "y" + v.toString();
  if (v instanceof EdnFloat) return "f" + String(v.value);
  if (v instanceof EdnChar) return "c" + JSON.stringify(v.value);
  if (v instanceof EdnUuid) return "u" + v.value;
  if (v instanceof Date) return "t" + v.getTime();
  if (Array.isArray(v)) return "[" + v.map(equalityKey).join(" ") + "]";
  if (v instanceof EdnList) return "[" + v.items.map(equalityKey).join(" ") + "]";
  if (v instanceof EdnSet) return "#{" + v.items.map(equalityKey).sort().join(" ") + "}";
  if (v instanceof EdnTagged) return "#" + v.tag + " " + equalityKey(v.value);
  if (v instanceof Map) {
    const entries: string[] = [];
    for (const [k, x] of v) entries.push(equalityKey(k) + " " + equalityKey(x));
    return "{" + entries.sort().join(" ") + "}";
  }
  return "?" + String(v);
}
