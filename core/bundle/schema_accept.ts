/**
 * The bundle schemas' success path without zod: for each schema of core/bundle/schemas.ts,
 * a check that accepts only values that schema accepts, and returns what its safeParse()
 * would return (the same keys in the same order). Anything it is not sure of is undecided
 * (null), and the zod schema decides, with its issues (core/bundle/schema_problems.ts).
 *
 * Why: zod's modules and these schemas cost `dvergr check` ~30-40 ms of its start (import,
 * construction, the first parse compiling its fast path), and a well-formed bundle, the
 * common case, needs none of it. tests/core/bundle/schema_accept_test.ts holds the two to
 * the same answers over valid and damaged values.
 */

/** The schemas checked here, by the names schema_problems.ts gives their zod forms. */
export type SchemaName = "workflow" | "calibration" | "certification" | "web";

type Accept = (v: unknown) => unknown | null;

/** Undecided: the zod schema decides. */
const UNDECIDED = null;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) &&
    Object.getOwnPropertySymbols(v).length === 0 && !Object.hasOwn(v, "__proto__");
}

const str = (min = 0, max = Infinity): Accept => (v) =>
  typeof v === "string" && v.length >= min && v.length <= max ? v : UNDECIDED;

const int = (min: number, max: number): Accept => (v) =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max ? v : UNDECIDED;

const bool: Accept = (v) => typeof v === "boolean" ? v : UNDECIDED;

const unknownValue: Accept = (v) => v;

const matching = (re: RegExp): Accept => (v) => typeof v === "string" && re.test(v) ? v : UNDECIDED;

const oneOf = (...values: string[]): Accept => (v) =>
  typeof v === "string" && values.includes(v) ? v : UNDECIDED;

/** A vector of at least `min` items, each accepted. */
const array = (item: Accept, min = 0): Accept => (v) => {
  if (!Array.isArray(v) || v.length < min) return UNDECIDED;
  const out: unknown[] = [];
  for (const x of v) {
    const y = item(x);
    if (y === UNDECIDED) return UNDECIDED;
    out.push(y);
  }
  return out;
};

/** A map of keys and values, each accepted (z.record). */
const record = (key: Accept, value: Accept): Accept => (v) => {
  if (!isPlainObject(v)) return UNDECIDED;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = v[k];
    // An undefined value, a null from an accepting value schema: let zod say what it makes.
    if (x === undefined || key(k) === UNDECIDED) return UNDECIDED;
    const y = value(x);
    if (y === UNDECIDED) return UNDECIDED;
    out[k] = y;
  }
  return out;
};

/** A key a map may leave out (zod's `.optional()`). */
interface Optional {
  optional: Accept;
}
const opt = (accept: Accept): Optional => ({ optional: accept });

/**
 * A map with the keys of `shape`, in zod's order: `loose` keeps other keys, after them, as
 * zod does; else (z.strictObject) another key is undecided.
 */
const object = (shape: Record<string, Accept | Optional>, loose = false): Accept => (v) => {
  if (!isPlainObject(v)) return UNDECIDED;
  const out: Record<string, unknown> = {};
  for (const [k, field] of Object.entries(shape)) {
    if (!Object.hasOwn(v, k)) {
      if (typeof field === "function" || k in v) return UNDECIDED;
      continue;
    }
    const x = v[k];
    if (x === undefined) return UNDECIDED;
    const y = (typeof field === "function" ? field : field.optional)(x);
    if (y === UNDECIDED) return UNDECIDED;
    out[k] = y;
  }
  for (const k of Object.keys(v)) {
    if (Object.hasOwn(shape, k)) continue;
    if (!loose || v[k] === undefined) return UNDECIDED;
    out[k] = v[k];
  }
  return out;
};

const stringMap = record(str(), str());

const workflow = object({
  title: str(1),
  doc: opt(str()),
  params: opt(record(str(), unknownValue)),
  task: str(1),
  profile: opt(str()),
  capture: opt(array(matching(/^\/[^.]*$/), 1)),
  "timeout-ms": opt(int(1000, 86_400_000)),
  fetched: opt(bool),
  judge: opt(object({ model: str(1), "max-requests": opt(int(1, 50)) })),
  "allowed-sources": opt(array(str(1))),
  "blocked-sources": opt(array(str(1))),
  web: opt(oneOf("live", "frozen")),
  review: opt(record(str(), unknownValue)),
});

const calibration = object({
  case: opt(str()),
  reference: opt(stringMap),
  fetched: opt(stringMap),
  judgements: opt(stringMap),
  damaged: opt(record(
    str(),
    object({
      files: stringMap,
      fetched: opt(stringMap),
      judgements: opt(stringMap),
      loses: array(str()),
    }),
  )),
  reviews: opt(record(
    str(),
    object({
      // A nil (a file removed) is one the schema accepts: undecided here, as null is.
      files: record(str(), str()),
      expect: oneOf("approve", "escalate"),
    }),
  )),
});

const count = int(0, Number.MAX_SAFE_INTEGER);
const certification = object({
  cases: count,
  certified: count,
  "by-reason": record(str(), count),
  excluded: array(object({ id: str(), reasons: array(unknownValue) }, true)),
}, true);

const webPages = record(
  matching(/^https?:\/\/[^\s?#]+$/),
  object({ title: str(), body: str(0, 50_000) }),
);
const web: Accept = (v) => {
  const pages = webPages(v);
  return pages !== UNDECIDED && Object.keys(pages as object).length > 0 ? pages : UNDECIDED;
};

const ACCEPT: Record<SchemaName, Accept> = { workflow, calibration, certification, web };

/**
 * What the schema `name` makes of `value` when it surely accepts it, else null (undecided:
 * ask the zod schema). A value the schema accepts as null is undecided too.
 */
export function acceptSchema(name: SchemaName, value: unknown): unknown | null {
  return ACCEPT[name](value);
}
