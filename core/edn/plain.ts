/**
 * EDN values as plain JavaScript data, for checkers (the checker input is plain JSON
 * values) and for zod schemas. The mapping:
 *
 * | EDN value                         | plain value                                      |
 * |-----------------------------------|--------------------------------------------------|
 * | `nil`                             | `null`                                           |
 * | `true` / `false`                  | `true` / `false`                                 |
 * | integer (`number`)                | `number`                                         |
 * | big integer (`bigint`, `42N`)     | `number` when within ±2^53 − 1, else its decimal `string` |
 * | float (`number`, `EdnFloat`)      | `number` (`1.0` → `1`; `##NaN`, `##Inf` stay `NaN`, `Infinity`) |
 * | string                            | `string`                                         |
 * | keyword `:a`, `:ns/a`             | `"a"`, `"ns/a"` (no colon)                       |
 * | symbol `a`, `ns/a`                | `"a"`, `"ns/a"`                                  |
 * | character `\a`                    | `"a"`                                            |
 * | vector, list, set                 | array (a set in the order read)                  |
 * | map                               | object; keys: keyword → its name as above, string → as is, any other key → its EDN text (`1` → `"1"`, `[1 2]` → `"[1 2]"`) |
 * | `#inst "…"` (`Date`)              | ISO 8601 string, `"2026-01-31T12:00:00.000Z"`    |
 * | `#uuid "…"`                       | its lower-case text                              |
 * | other `#tag value`                | `{tag: "tag", value: <plain value>}`             |
 *
 * When two keys of one map give the same plain key (`{:a 1 "a" 2}`), the first entry wins.
 *
 * The mapping lives in `ednPlainCore`, a self-contained function; checkers get their
 * values through it too (sandbox/edn_bridge.ts), so they see exactly what the host sees.
 */
import { EDN_MODEL, type EdnModel, type EdnValue } from "./values.ts";
import { writeEdn } from "./write.ts";

/** The plain-mapping core's interface. */
export interface EdnPlainCore {
  /** Throws an Error named "EdnDeadlineError" once `expired()` answers true. */
  toPlain(v: EdnValue, expired?: () => boolean): unknown;
}

/**
 * The EDN → plain mapping of the table above, self-contained; `write` gives the EDN text
 * of map keys that are neither keywords nor strings.
 */
export function ednPlainCore(
  M: EdnModel,
  write: (v: unknown, pretty: boolean) => string,
): EdnPlainCore {
  const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
  const CLOCK_EVERY = 4096;

  function keyText(k: EdnValue): string {
    if (typeof k === "string") return k;
    if (k instanceof M.Keyword) return k.fullName;
    return write(k, false);
  }

  // Plain form of a value that holds no other values; NONE for collections and tags.
  const NONE = {};
  function atom(v: EdnValue): unknown {
    if (v === null || v === undefined) return null;
    switch (typeof v) {
      case "boolean":
      case "number":
      case "string":
        return v;
      case "bigint":
        return v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v.toString();
    }
    if (v instanceof M.Keyword || v instanceof M.EdnSymbol) return v.fullName;
    if (v instanceof M.EdnFloat) return v.value;
    if (v instanceof M.EdnChar || v instanceof M.EdnUuid) return v.value;
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
    return NONE;
  }

  // Iterative (an explicit work list, no recursion), so that values nested as deep as
  // the reader allows convert within a small QuickJS stack.
  function toPlain(root: EdnValue, expired?: () => boolean): unknown {
    const box: unknown[] = [null];
    // Triples: value, the container to put its plain form in, the slot in that container.
    const work: unknown[] = [root, box, 0];
    let untilClock = CLOCK_EVERY;
    while (work.length > 0) {
      if (expired !== undefined && --untilClock === 0) {
        untilClock = CLOCK_EVERY;
        if (expired()) {
          const e = new Error("converting stopped: the time allowed ran out");
          e.name = "EdnDeadlineError";
          throw e;
        }
      }
      const slot = work.pop() as string | number;
      const target = work.pop() as Record<string | number, unknown>;
      const v = work.pop() as EdnValue;
      let out = atom(v);
      if (out === NONE) {
        const items = Array.isArray(v)
          ? v
          : v instanceof M.EdnList || v instanceof M.EdnSet
          ? v.items
          : null;
        if (items !== null) {
          const a = new Array(items.length).fill(null);
          for (let i = 0; i < items.length; i++) work.push(items[i], a, i);
          out = a;
        } else if (v instanceof Map) {
          const o: Record<string, unknown> = {};
          for (const [k, x] of v) {
            const key = keyText(k);
            if (Object.prototype.hasOwnProperty.call(o, key)) continue; // the first entry wins
            // defineProperty: a "__proto__" key must become data, not the prototype
            Object.defineProperty(o, key, {
              value: null,
              enumerable: true,
              writable: true,
              configurable: true,
            });
            work.push(x, o, key);
          }
          out = o;
        } else if (v instanceof M.EdnTagged) {
          const t = { tag: v.tag, value: null };
          work.push(v.value, t, "value");
          out = t;
        } else {
          throw new TypeError(
            "Cannot map a " + Object.prototype.toString.call(v) + " to plain data",
          );
        }
      }
      target[slot] = out;
    }
    return box[0];
  }

  return { toPlain };
}

const CORE = ednPlainCore(EDN_MODEL, (v, pretty) => writeEdn(v, { pretty }));

/**
 * The plain JavaScript form of an EDN value (the mapping in this module's table). With
 * `expired` (asked every few thousand values), throws an Error named "EdnDeadlineError" once
 * it answers true.
 */
export function toPlain(v: EdnValue, expired?: () => boolean): unknown {
  return CORE.toPlain(v, expired);
}
