/**
 * The schemas of what checker.js returns (sandbox/verdict.ts), for what its fast paths do not
 * accept: each says what is wrong, in a message naming the field, the expectation and the
 * value it got. Loaded only then (zod's modules and these schemas are ~20 ms of a grading
 * command's start; a well-formed verdict needs none of it).
 */
import { z } from "zod";

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

const WorldSchema = z.object({
  files: z.record(z.string(), z.string({ error: TEXT }), {
    error: "expected an object of world path → text",
  }),
}, { error: "expected an object with `files` and `gold`" });

/** What is wrong with `value` as a verdict, or null when nothing is. */
export function verdictProblem(value: unknown): string | null {
  const r = VerdictSchema.safeParse(value);
  return r.success ? null : humanize(r.error, value);
}

/** What is wrong with `value` as judge requests, or null when nothing is. */
export function requestsProblem(value: unknown): string | null {
  const r = RequestsSchema.safeParse(value);
  return r.success ? null : humanize(r.error, value);
}

/** What is wrong with `value` as a generated world's files, or null when nothing is. */
export function worldProblem(value: unknown): string | null {
  const r = WorldSchema.safeParse(value);
  return r.success ? null : humanize(r.error, value);
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
