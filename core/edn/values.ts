/**
 * The EDN value model: how an EDN value looks in TypeScript.
 *
 * | EDN                     | TypeScript                                              |
 * |-------------------------|---------------------------------------------------------|
 * | `nil`                   | `null`                                                  |
 * | `true` / `false`        | `boolean`                                               |
 * | `42`, `-7`              | `number` (safe integers)                                |
 * | `42N`, `12345678901234567890` | `bigint` (the `N` suffix, or beyond ±2^53 − 1)    |
 * | `1.5`, `1e-3`           | `number`                                                |
 * | `1.0`, `2e3`            | `EdnFloat` (a float whose value is integral, so it writes back as `1.0`) |
 * | `1.5M`                  | `number` (see below)                                    |
 * | `##Inf` `##-Inf` `##NaN` | `number` (`Infinity`, `-Infinity`, `NaN`)              |
 * | `"text"`                | `string`                                                |
 * | `:kw`, `:ns/kw`         | `Keyword` (interned: usable as a `Map` key)             |
 * | `sym`, `ns/sym`         | `EdnSymbol` (interned)                                  |
 * | `\a`, `\newline`        | `EdnChar`                                               |
 * | `[…]`                   | `EdnValue[]`                                            |
 * | `(…)`                   | `EdnList`                                               |
 * | `#{…}`                  | `EdnSet` (elements in the order read)                   |
 * | `{…}`                   | `Map<EdnValue, EdnValue>` (entries in the order read)   |
 * | `#inst "…"`             | `Date`                                                  |
 * | `#uuid "…"`             | `EdnUuid` (lower-case text)                             |
 * | `#tag value`            | `EdnTagged`                                             |
 *
 * The `M` suffix (arbitrary-precision decimal) reads as the nearest double, exactly as
 * an unsuffixed float does (`1.5M` → `1.5`, `2M` → `EdnFloat(2)`), and is never written.
 * JavaScript has no decimal type, bundles do not use it, and keeping a separate type for
 * it would make every consumer handle a value nobody writes; the cost is that `1.5M`
 * does not round-trip to the same text.
 *
 * Every class here is self-contained (it refers to nothing else in this module), so the
 * plain mapping can take the model as an argument.
 */

/** A keyword, `:name` or `:ns/name`. Interned: `Keyword.of("a") === Keyword.of("a")`. */
export class Keyword {
  static #table = new Map<string, Keyword>();
  readonly ns: string | null;
  readonly name: string;

  private constructor(ns: string | null, name: string) {
    this.ns = ns;
    this.name = name;
  }

  /**
   * The keyword for `"name"` or `"ns/name"` (split at the first `/`, unless the text is
   * just `/`). A leading colon is dropped: `Keyword.of(":a") === Keyword.of("a")`.
   */
  static of(s: string): Keyword {
    const text = s.startsWith(":") ? s.slice(1) : s;
    let k = Keyword.#table.get(text);
    if (k === undefined) {
      const slash = text.indexOf("/");
      k = slash > 0 && text.length > 1
        ? new Keyword(text.slice(0, slash), text.slice(slash + 1))
        : new Keyword(null, text);
      Keyword.#table.set(text, k);
    }
    return k;
  }

  /** `"ns/name"` or `"name"`: the keyword without its colon. */
  get fullName(): string {
    return this.ns === null ? this.name : this.ns + "/" + this.name;
  }

  /** The printed form, `:ns/name`. */
  toString(): string {
    return ":" + this.fullName;
  }
}

/** A symbol, `name` or `ns/name`. Interned like Keyword. */
export class EdnSymbol {
  static #table = new Map<string, EdnSymbol>();
  readonly ns: string | null;
  readonly name: string;

  private constructor(ns: string | null, name: string) {
    this.ns = ns;
    this.name = name;
  }

  /** The symbol for `"name"` or `"ns/name"` (split at the first `/`, unless the text is `/`). */
  static of(s: string): EdnSymbol {
    let k = EdnSymbol.#table.get(s);
    if (k === undefined) {
      const slash = s.indexOf("/");
      k = slash > 0 && s.length > 1
        ? new EdnSymbol(s.slice(0, slash), s.slice(slash + 1))
        : new EdnSymbol(null, s);
      EdnSymbol.#table.set(s, k);
    }
    return k;
  }

  /** `"ns/name"` or `"name"`. */
  get fullName(): string {
    return this.ns === null ? this.name : this.ns + "/" + this.name;
  }

  /** The printed form, `ns/name`. */
  toString(): string {
    return this.fullName;
  }
}

/** A character, `\a`; `value` is a one-character string (one code point). */
export class EdnChar {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
}

/** A list, `(a b c)`. */
export class EdnList {
  readonly items: EdnValue[];
  constructor(items: EdnValue[]) {
    this.items = items;
  }
}

/** A set, `#{a b c}`; `items` keeps the order read (the reader refuses duplicates). */
export class EdnSet {
  readonly items: EdnValue[];
  constructor(items: EdnValue[]) {
    this.items = items;
  }
}

/** A tagged value other than `#inst` and `#uuid`, e.g. `#my/point [1 2]`. */
export class EdnTagged {
  readonly tag: string;
  readonly value: EdnValue;
  constructor(tag: string, value: EdnValue) {
    this.tag = tag;
    this.value = value;
  }
}

/** A `#uuid "…"` value; `value` is the canonical lower-case text. */
export class EdnUuid {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
}

/**
 * A float whose value is integral (`1.0`, `2e3`), kept apart from integers so that it
 * writes back as a float. Non-integral floats are plain numbers.
 */
export class EdnFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

/** Any EDN value (see the table at the top of this module). */
export type EdnValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Keyword
  | EdnSymbol
  | EdnChar
  | EdnValue[]
  | EdnList
  | EdnSet
  | Map<EdnValue, EdnValue>
  | Date
  | EdnUuid
  | EdnTagged
  | EdnFloat;

/** An EDN map. */
export type EdnMap = Map<EdnValue, EdnValue>;

/** The classes of the model, handed to the self-contained plain mapping (plain.ts). */
export interface EdnModel {
  Keyword: typeof Keyword;
  EdnSymbol: typeof EdnSymbol;
  EdnChar: typeof EdnChar;
  EdnList: typeof EdnList;
  EdnSet: typeof EdnSet;
  EdnTagged: typeof EdnTagged;
  EdnUuid: typeof EdnUuid;
  EdnFloat: typeof EdnFloat;
}

/** The model classes of this module. */
export const EDN_MODEL: EdnModel = {
  Keyword,
  EdnSymbol,
  EdnChar,
  EdnList,
  EdnSet,
  EdnTagged,
  EdnUuid,
  EdnFloat,
};

/** The keyword for `"name"` or `"ns/name"` (same as `Keyword.of`). */
export function kw(s: string): Keyword {
  return Keyword.of(s);
}

/** The symbol for `"name"` or `"ns/name"` (same as `EdnSymbol.of`). */
export function sym(s: string): EdnSymbol {
  return EdnSymbol.of(s);
}

/** Whether `v` is an EDN map. */
export function isEdnMap(v: unknown): v is EdnMap {
  return v instanceof Map;
}

/**
 * The value under keyword `:key` in map `m`, else under the string `"key"`; undefined
 * when neither is present (a present `nil` gives null).
 */
export function mapGet(m: EdnMap, key: string): EdnValue | undefined {
  const k = Keyword.of(key);
  if (m.has(k)) return m.get(k);
  if (m.has(key)) return m.get(key);
  return undefined;
}
