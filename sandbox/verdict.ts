/**
 * Validation of what checker.js returns, on the host: the verdict of `check` and the
 * requests of `judgeRequests`, read from the JSON text the sandbox produced.
 */
import { z } from "zod";
import type { GeneratedWorld, JudgeRequest, Verdict } from "../core/checker.ts";

/** How the sandbox marks a value JSON cannot carry (see sandbox/prelude.ts). */
const MARK = "\u0000dvergr";
const MAX_ISSUES = 3;

const REWARD = "expected a number in [0, 1]";
const VerdictSchema = z.object({
  checks: z.record(z.string(), z.boolean({ error: "expected true or false" }), {
    error: "expected an object of named booleans",
  }),
  reward: z.number({ error: REWARD }).min(0, { error: REWARD }).max(1, { error: REWARD }),
}, { error: "expected an object with `checks` and `reward`" });

const TEXT = "expected a string";
const RequestsSchema = z.array(
  z.object({
    id: z.string({ error: TEXT }),
    prompt: z.string({ error: TEXT }),
  }, { error: "expected an object with `id` and `prompt`" }),
  { error: "expected an array of `{id, prompt}` (or null)" },
);

export type Validated<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Reads a verdict from the JSON text of `check`'s result: `{checks: {name: boolean},
 * reward: number in [0, 1]}`, extra keys tolerated and dropped. On failure the message
 * reads `The checker returned no verdict: reward: expected a number in [0, 1], got 2`.
 */
export function readVerdict(json: string): Validated<Verdict> {
  const value = decode(json);
  const fast = plainVerdict(value);
  if (fast) return { ok: true, value: fast };
  const r = VerdictSchema.safeParse(value);
  if (!r.success) {
    return { ok: false, message: `The checker returned no verdict: ${humanize(r.error, value)}` };
  }
  const raw = value as { checks: Record<string, boolean>; reward: number };
  // Built from the parsed object with define semantics, so a check named "__proto__"
  // stays a check and never touches a prototype.
  return {
    ok: true,
    value: { checks: Object.fromEntries(Object.entries(raw.checks)), reward: raw.reward },
  };
}

/**
 * The verdict of the common case, checked without zod (thousands of verdicts a second go
 * through here): a plain object whose `checks` is a plain object of booleans and whose
 * `reward` is a number in [0, 1]. Anything else returns null and goes to the schema, which
 * says what is wrong.
 */
function plainVerdict(value: unknown): Verdict | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { checks, reward } = value as { checks?: unknown; reward?: unknown };
  if (typeof reward !== "number" || !(reward >= 0 && reward <= 1)) return null;
  if (typeof checks !== "object" || checks === null || Array.isArray(checks)) return null;
  const entries = Object.entries(checks);
  for (const [, v] of entries) if (typeof v !== "boolean") return null;
  // Built with define semantics, so a check named "__proto__" stays a check.
  return { checks: Object.fromEntries(entries), reward };
}

/**
 * Reads judge requests from the JSON text of `judgeRequests`' result: an array of
 * `{id: string, prompt: string}` (extra keys dropped); null or undefined is no request.
 */
export function readJudgeRequests(json: string): Validated<JudgeRequest[]> {
  const value = decode(json);
  if (value === null || isMark(value, "undefined")) return { ok: true, value: [] };
  const r = RequestsSchema.safeParse(value);
  if (!r.success) {
    return {
      ok: false,
      message: `judgeRequests returned no requests: ${humanize(r.error, value)}`,
    };
  }
  return { ok: true, value: r.data.map((q) => ({ id: q.id, prompt: q.prompt })) };
}

const WorldSchema = z.object({
  files: z.record(z.string(), z.string({ error: TEXT }), {
    error: "expected an object of world path → text",
  }),
}, { error: "expected an object with `files` and `gold`" });

/**
 * Reads a generated world from the JSON text of generator.js's `generate`: `{files: {path:
 * text}, gold}` (extra keys dropped), gold any JSON value but null; a value JSON cannot carry
 * (undefined, NaN, a function) anywhere in it is refused, naming where. World paths are
 * checked by the caller (core/bundle/generator.ts).
 */
export function readGenerated(json: string, file = "generator.js"): Validated<GeneratedWorld> {
  const value = decode(json);
  const no = (why: string) => ({
    ok: false as const,
    message: `${file}'s generate returned no world: ${why}`,
  });
  const r = WorldSchema.safeParse(value);
  if (!r.success) return no(humanize(r.error, value));
  const gold = (value as { gold?: unknown }).gold;
  if (gold === undefined || gold === null || isMark(gold, "undefined")) {
    return no("gold: missing (every world needs the gold its checker grades against)");
  }
  const bad = markIn(gold, "gold");
  if (bad) return no(`${bad.path}: ${bad.what} cannot be gold (JSON cannot carry it)`);
  return {
    ok: true,
    value: { files: Object.fromEntries(Object.entries(r.data.files)), gold },
  };
}

/** The first value JSON could not carry inside `v` (a sandbox mark), with its path. */
function markIn(v: unknown, path: string): { path: string; what: string } | null {
  if (typeof v === "symbol") return { path, what: v.description ?? "a value" };
  if (v === null || typeof v !== "object") return null;
  for (const [k, x] of Object.entries(v)) {
    const found = markIn(x, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`);
    if (found) return found;
  }
  return null;
}

/** The mark as it appears in JSON text (JSON escapes U+0000): text without it has none. */
const MARK_TEXT = JSON.stringify(MARK).slice(1, -1);

/** JSON text to a value, with the sandbox's marks turned into symbols naming the value. */
function decode(json: string): unknown {
  // The reviver runs for every value: most verdicts carry no mark and skip it.
  if (!json.includes(MARK_TEXT)) return JSON.parse(json);
  return JSON.parse(json, (_key, v) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === MARK && typeof v[MARK] === "string") {
        return Symbol(v[MARK]);
      }
    }
    return v;
  });
}

function isMark(v: unknown, what: string): boolean {
  return typeof v === "symbol" && v.description === what;
}

function humanize(error: z.ZodError, value: unknown): string {
  const issues = error.issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = issue.path.map(String).join(".");
    const got = describeValue(valueAt(value, issue.path));
    return `${path ? `${path}: ` : ""}${issue.message}, got ${got}`;
  });
  const more = error.issues.length - MAX_ISSUES;
  return issues.join("; ") + (more > 0 ? `; and ${more} more` : "");
}

const MISSING = Symbol("nothing");

function valueAt(value: unknown, path: PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, key)) return MISSING;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** A short, quoted rendering of a JSON value for a message: `2`, `"1"`, `an array`. */
export function describeValue(v: unknown): string {
  if (v === MISSING) return "nothing";
  if (typeof v === "symbol") return v.description ?? "an unknown value";
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object") return "an object";
  const text = JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
