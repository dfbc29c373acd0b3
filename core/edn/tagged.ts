/**
 * Tagged JSON: EDN values as JSON that keeps what plain JSON loses (keywords, symbols,
 * sets, lists, `#inst`, `#uuid`, tagged literals, non-string map keys). A Clojure checker
 * gets its input this way and a small routine inside the sandbox turns it into Clojure
 * data (sandbox/sci_boot_source.ts), which is far cheaper than reading EDN text there.
 *
 * | EDN                      | tagged JSON                          |
 * |--------------------------|--------------------------------------|
 * | nil, true, 1, 1.5, "s"   | null, true, 1, 1.5, "s"              |
 * | `\a`                     | "a" (ClojureScript has no char type) |
 * | `1.0`, `2N`              | 1, 2 (numbers)                       |
 * | `:k`, `:ns/k`            | ["k", null, "k"], ["k", "ns", "k"]   |
 * | `s`, `ns/s`              | ["y", null, "s"], ["y", "ns", "s"]   |
 * | `[a b]`, `(a b)`, `#{a}` | ["v", a, b], ["l", a, b], ["s", a]   |
 * | `{k v}`                  | ["m", k, v, …]                       |
 * | `#inst "…"`              | ["i", epoch milliseconds]            |
 * | `#uuid "…"`              | ["u", "…"]                           |
 * | `#tag v`                 | ["t", "tag", v]                      |
 *
 * Every array is tagged by its first element, so nothing is ambiguous. Pure.
 */
import {
  EdnChar,
  EdnFloat,
  EdnList,
  EdnSet,
  EdnSymbol,
  EdnTagged,
  EdnUuid,
  Keyword,
} from "./values.ts";
import type { Tagged } from "../checker.ts";

export type { Tagged };

/**
 * An EDN value as tagged JSON. Plain JavaScript objects (the files, fetched pages and
 * judgements of a checker input) become maps with string keys; plain arrays vectors.
 */
export function toTagged(v: unknown): Tagged {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "boolean":
    case "string":
      return v;
    case "number":
      return v;
    case "bigint":
      return Number(v);
  }
  if (v instanceof Keyword) return ["k", v.ns, v.name];
  if (v instanceof EdnSymbol) return ["y", v.ns, v.name];
  if (v instanceof EdnFloat) return v.value;
  if (v instanceof EdnChar) return v.value;
  if (Array.isArray(v)) return ["v", ...v.map(toTagged)];
  if (v instanceof EdnList) return ["l", ...v.items.map(toTagged)];
  if (v instanceof EdnSet) return ["s", ...v.items.map(toTagged)];
  if (v instanceof Date) return ["i", v.getTime()];
  if (v instanceof EdnUuid) return ["u", v.value];
  if (v instanceof EdnTagged) return ["t", v.tag, toTagged(v.value)];
  const out: Tagged[] = ["m"];
  if (v instanceof Map) {
    for (const [k, x] of v) out.push(toTagged(k), toTagged(x));
    return out;
  }
  if (typeof v === "object") {
    for (const [k, x] of Object.entries(v)) out.push(k, toTagged(x));
    return out;
  }
  throw new TypeError(`toTagged: ${typeof v} has no EDN form`);
}

/**
 * A value from JSON (run parameters given on the command line or over MCP) as the EDN
 * the earlier system made of it: object keys become keywords, arrays vectors.
 */
export function keywordized(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(keywordized);
  if (v !== null && typeof v === "object" && !(v instanceof Map) && !(v instanceof Date)) {
    return new Map(Object.entries(v).map(([k, x]) => [Keyword.of(k), keywordized(x)]));
  }
  return v;
}
