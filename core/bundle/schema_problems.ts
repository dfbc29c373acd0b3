/**
 * A bundle's EDN files checked against their zod schemas (core/bundle/schemas.ts), each
 * issue a problem in the terms of the EDN a person writes, with its line.
 */
import type { z } from "zod";
import { calibrationSchema, certificationSchema, webSchema, workflowSchema } from "./schemas.ts";
import { acceptSchema, type SchemaName } from "./schema_spec.ts";
import { fieldName, lineOf, type SchemaCheck } from "./parse_core.ts";
import type { BundleProblem } from "./types.ts";

/**
 * The schema check of parse.ts: the success path without zod when it decides
 * (acceptSchema of schema_spec.ts), else the zod schema's issues as problems with their lines.
 */
export const schemaCheck: SchemaCheck = (name, file, text, value, problems) =>
  acceptSchema(name, value) ?? zodCheck(file, text, value, SCHEMAS[name], problems);

const SCHEMAS: Record<SchemaName, z.ZodType> = {
  workflow: workflowSchema,
  calibration: calibrationSchema,
  certification: certificationSchema,
  web: webSchema,
};

function zodCheck(
  file: string,
  text: string,
  value: unknown,
  schema: z.ZodType,
  problems: BundleProblem[],
): unknown {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const mistyped = new Set<string>();
  for (const issue of r.error.issues) {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const field = [...path, key].map((s) => fieldName(s));
        const known = knownKeys(schema, path);
        problems.push({
          file,
          field: field.join(" "),
          line: lineOf(text, field),
          message: `unknown key${known ? ` (known: ${known})` : ""}`,
        });
      }
      continue;
    }
    const key = issue.path.map(String).join("\u0000");
    // zod goes on checking a value of the wrong type (a vector is also "too small"): the
    // wrong type is the one thing to say about that field.
    if (issue.code !== "invalid_type" && mistyped.has(key)) continue;
    if (issue.code === "invalid_type") mistyped.add(key);
    const field = issue.path.filter((s) => typeof s === "string").map((s) => fieldName(s));
    const found = valueAt(value, issue.path);
    const message = issue.code === "invalid_type" && found === undefined
      ? "missing required key"
      : `${expectation(issue)}${
        found === undefined || issue.code === "invalid_key" ? "" : `, found ${describePlain(found)}`
      }`;
    problems.push({
      file,
      field: issue.path.map((s) => typeof s === "number" ? `[${s}]` : fieldName(String(s))).join(
        " ",
      ),
      line: lineOf(text, field),
      message,
    });
  }
  return null;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a vector",
  object: "a map",
  record: "a map",
  map: "a map",
};

/** What a schema issue expected, in the terms of the EDN a person writes. */
function expectation(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case "too_small": {
      const n = Number(issue.minimum);
      if (issue.origin === "string" && n === 1) return "expected a non-empty string";
      if (issue.origin === "array") return `expected at least ${n} item${n === 1 ? "" : "s"}`;
      if (issue.origin === "string") return `expected at least ${n} characters`;
      return `expected ${issue.inclusive === false ? "more than" : "at least"} ${n}`;
    }
    case "too_big": {
      const n = Number(issue.maximum);
      if (issue.origin === "array") return `expected at most ${n} item${n === 1 ? "" : "s"}`;
      if (issue.origin === "string") return `expected at most ${n} characters`;
      return `expected ${issue.inclusive === false ? "less than" : "at most"} ${n}`;
    }
    case "invalid_value":
      return `expected one of ${
        issue.values.map((v) => typeof v === "string" ? `:${v}` : String(v)).join(" ")
      }`;
    case "invalid_key":
      return issue.issues.length > 0 ? expectation(issue.issues[0]) : "a key of the wrong form";
    default:
      return issue.message.replace(/^Invalid input: /, "");
  }
}

function knownKeys(schema: z.ZodType, path: string[]): string | null {
  if (path.length > 0) return null;
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape).map((k) => `:${k}`).join(" ") : null;
}

function valueAt(value: unknown, path: PropertyKey[]): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

function describePlain(v: unknown): string {
  if (v === null) return "nil";
  if (Array.isArray(v)) return "a vector";
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v);
  if (typeof v === "object") return "a map";
  return String(v);
}
