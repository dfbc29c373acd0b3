/**
 * The closed schemas of a bundle's EDN files, over their plain JS form (core/edn/plain.ts:
 * keyword keys become names without the colon), written once as plain data, and read two
 * ways: by zod (core/bundle/schemas.ts builds a zod schema of each spec), whose issues become
 * the problems a person reads (schema_problems.ts), and here without zod (acceptSchema): what
 * a spec surely accepts and what its zod schema would make of it, else undecided.
 *
 * Why two readings: zod's modules and schemas cost `dvergr check` ~30-40 ms of its start
 * (import, construction, the first parse compiling its fast path), and a well-formed bundle,
 * the common case, needs none of it. Why one module, and the spec read as it is by one
 * function: a second module, or a closure built per schema node at load, cost a fresh
 * process ~0.5-1 ms more here (V8 compiles each function on its first call).
 * tests/core/bundle/schema_accept_test.ts holds the two readings to the same answers over
 * valid and damaged values.
 */

/** A string of `min`..`max` characters matching `pattern`; messages as zod gets them. */
export interface StringSpec {
  t: "string";
  min?: number;
  max?: number;
  maxMessage?: string;
  pattern?: { re: RegExp; message: string };
}
/** A safe integer within `min`..`max` (zod's `.int()`). */
export interface IntSpec {
  t: "int";
  min?: number;
  max?: number;
}
export interface BoolSpec {
  t: "boolean";
}
/** Anything (z.unknown()). */
export interface UnknownSpec {
  t: "unknown";
}
export interface EnumSpec<V extends string = string> {
  t: "enum";
  values: V[];
}
export interface ArraySpec<I extends Spec = Spec> {
  t: "array";
  item: I;
  min?: number;
}
/** A map of string keys (`key`: their form); `nonEmpty`: the message of an empty one. */
export interface RecordSpec<V extends Spec = Spec> {
  t: "record";
  key: StringSpec;
  value: V;
  nonEmpty?: string;
}
/** A map of the keys of `shape`; `loose` keeps other keys, else another key is a problem. */
export interface ObjectSpec<S extends Record<string, Field> = Record<string, Field>> {
  t: "object";
  shape: S;
  loose: boolean;
}
/** The value or nil. */
export interface NullableSpec<I extends Spec = Spec> {
  t: "nullable";
  inner: I;
}
/** A key an object may leave out. */
export interface OptionalSpec<I extends Spec = Spec> {
  t: "optional";
  inner: I;
}

export type Spec =
  | StringSpec
  | IntSpec
  | BoolSpec
  | UnknownSpec
  | EnumSpec
  | ArraySpec
  | RecordSpec
  | ObjectSpec
  | NullableSpec;
export type Field = Spec | OptionalSpec;

/** The plain value a spec describes. */
export type Infer<S> = S extends StringSpec ? string
  : S extends IntSpec ? number
  : S extends BoolSpec ? boolean
  : S extends UnknownSpec ? unknown
  : S extends EnumSpec<infer V> ? V
  : S extends ArraySpec<infer I> ? Infer<I>[]
  : S extends RecordSpec<infer V> ? Record<string, Infer<V>>
  : S extends NullableSpec<infer I> ? Infer<I> | null
  : S extends ObjectSpec<infer Sh> ? ObjectOf<Sh>
  : never;
type ObjectOf<Sh> =
  & { [K in keyof Sh as Sh[K] extends OptionalSpec ? never : K]: Infer<Sh[K]> }
  & { [K in keyof Sh as Sh[K] extends OptionalSpec ? K : never]?: InferOptional<Sh[K]> };
type InferOptional<F> = F extends OptionalSpec<infer I> ? Infer<I> : never;

const string = (o: Omit<StringSpec, "t"> = {}): StringSpec => ({ t: "string", ...o });
const int = (min?: number, max?: number): IntSpec => ({ t: "int", min, max });
const boolean: BoolSpec = { t: "boolean" };
const unknown: UnknownSpec = { t: "unknown" };
const oneOf = <V extends string>(...values: V[]): EnumSpec<V> => ({ t: "enum", values });
const array = <I extends Spec>(item: I, min?: number): ArraySpec<I> => ({ t: "array", item, min });
const record = <V extends Spec>(key: StringSpec, value: V, nonEmpty?: string): RecordSpec<V> => ({
  t: "record",
  key,
  value,
  nonEmpty,
});
const object = <S extends Record<string, Field>>(shape: S, loose = false): ObjectSpec<S> => ({
  t: "object",
  shape,
  loose,
});
const nullable = <I extends Spec>(inner: I): NullableSpec<I> => ({ t: "nullable", inner });
const optional = <I extends Spec>(inner: I): OptionalSpec<I> => ({ t: "optional", inner });

const stringMap = record(string(), string());

/** `:capture` entries: absolute world directories without any "." (docs/compatibility.md §1.3). */
const capturePath = string({
  pattern: {
    re: /^\/[^.]*$/,
    message: 'expected an absolute world directory without "." such as "/out"',
  },
});

export const workflowSpec = object({
  title: string({ min: 1 }),
  doc: optional(string()),
  params: optional(record(string(), unknown)),
  task: string({ min: 1 }),
  profile: optional(string()),
  capture: optional(array(capturePath, 1)),
  "timeout-ms": optional(int(1000, 86_400_000)),
  fetched: optional(boolean),
  judge: optional(object({
    model: string({ min: 1 }),
    "max-requests": optional(int(1, 50)),
  })),
  "allowed-sources": optional(array(string({ min: 1 }))),
  "blocked-sources": optional(array(string({ min: 1 }))),
  web: optional(oneOf("live", "frozen")),
  review: optional(record(string(), unknown)),
});
export type WorkflowEdn = Infer<typeof workflowSpec>;

const variant = object({
  files: stringMap,
  fetched: optional(stringMap),
  judgements: optional(stringMap),
  loses: array(string()),
});

export const calibrationSpec = object({
  case: optional(string()),
  reference: optional(stringMap),
  fetched: optional(stringMap),
  judgements: optional(stringMap),
  damaged: optional(record(string(), variant)),
  /** Updates a run could leave (world path → text, nil: removed) and the review's answer. */
  reviews: optional(record(
    string(),
    object({
      files: record(string(), nullable(string())),
      expect: oneOf("approve", "escalate"),
    }),
  )),
});
export type CalibrationEdn = Infer<typeof calibrationSpec>;

export const certificationSpec = object({
  cases: int(0),
  certified: int(0),
  "by-reason": record(string(), int(0)),
  excluded: array(object({ id: string(), reasons: array(unknown) }, true)),
}, true);

/** web.edn (docs/compatibility.md §1.11): http(s) URLs without query or fragment → {:title :body}, at least one. */
export const webSpec = record(
  string({
    pattern: {
      re: /^https?:\/\/[^\s?#]+$/,
      message: "expected an http(s) URL without query or fragment",
    },
  }),
  object({
    title: string(),
    body: string({ max: 50_000, maxMessage: "expected a body of at most 50000 characters" }),
  }),
  "expected at least one page",
);

/** The schemas of a bundle, by name. */
export const SPECS = {
  workflow: workflowSpec,
  calibration: calibrationSpec,
  certification: certificationSpec,
  web: webSpec,
};
export type SchemaName = keyof typeof SPECS;

// The zod-free reading.

/** Undecided: the zod schema decides. */
const UNDECIDED = null;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) &&
    Object.getOwnPropertySymbols(v).length === 0 && !Object.hasOwn(v, "__proto__");
}

/**
 * What `spec` makes of `v` when it surely accepts it, else UNDECIDED. Maps keep zod's order:
 * an object's keys in its shape's order, then (loose) the other keys; a strict object's
 * other key, an undefined value, and a nil (null is UNDECIDED) are left to zod.
 */
function accept(spec: Spec, v: unknown): unknown | null {
  switch (spec.t) {
    case "string":
      return typeof v === "string" && v.length >= (spec.min ?? 0) &&
          v.length <= (spec.max ?? Infinity) && (!spec.pattern || spec.pattern.re.test(v))
        ? v
        : UNDECIDED;
    case "int":
      return typeof v === "number" && Number.isSafeInteger(v) && v >= (spec.min ?? -Infinity) &&
          v <= (spec.max ?? Infinity)
        ? v
        : UNDECIDED;
    case "boolean":
      return typeof v === "boolean" ? v : UNDECIDED;
    case "unknown":
      return v;
    case "enum":
      return typeof v === "string" && (spec.values as string[]).includes(v) ? v : UNDECIDED;
    case "nullable":
      return accept(spec.inner, v);
    case "array": {
      if (!Array.isArray(v) || v.length < (spec.min ?? 0)) return UNDECIDED;
      const out: unknown[] = [];
      for (const x of v) {
        const y = accept(spec.item, x);
        if (y === UNDECIDED) return UNDECIDED;
        out.push(y);
      }
      return out;
    }
    case "record": {
      if (!isPlainObject(v)) return UNDECIDED;
      const out: Record<string, unknown> = {};
      const keys = Object.keys(v);
      for (const k of keys) {
        const x = v[k];
        if (x === undefined || accept(spec.key, k) === UNDECIDED) return UNDECIDED;
        const y = accept(spec.value, x);
        if (y === UNDECIDED) return UNDECIDED;
        out[k] = y;
      }
      return spec.nonEmpty !== undefined && keys.length === 0 ? UNDECIDED : out;
    }
    case "object": {
      if (!isPlainObject(v)) return UNDECIDED;
      const out: Record<string, unknown> = {};
      for (const k in spec.shape) {
        const field = spec.shape[k];
        if (!Object.hasOwn(v, k)) {
          if (field.t !== "optional" || k in v) return UNDECIDED;
          continue;
        }
        const x = v[k];
        if (x === undefined) return UNDECIDED;
        const y = accept(field.t === "optional" ? field.inner : field, x);
        if (y === UNDECIDED) return UNDECIDED;
        out[k] = y;
      }
      for (const k of Object.keys(v)) {
        if (Object.hasOwn(spec.shape, k)) continue;
        if (!spec.loose || v[k] === undefined) return UNDECIDED;
        out[k] = v[k];
      }
      return out;
    }
  }
}

/**
 * What the schema `name` makes of `value` when it surely accepts it, else null (undecided:
 * ask the zod schema). A value the schema accepts as null is undecided too.
 */
export function acceptSchema(name: SchemaName, value: unknown): unknown | null {
  return accept(SPECS[name], value);
}
