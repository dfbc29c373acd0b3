/**
 * The zod schemas of a bundle's EDN files, built from their one description
 * (core/bundle/schema_spec.ts): zod's issues are what schema_problems.ts turns into the
 * problems a person reads. Only loaded when the zod-free accept path cannot decide.
 */
import { z } from "zod";
import {
  calibrationSpec,
  certificationSpec,
  type Field,
  type Spec,
  type StringSpec,
  webSpec,
  workflowSpec,
} from "./schema_spec.ts";

function zodString(s: StringSpec): z.ZodString {
  let out = z.string();
  if (s.min !== undefined) out = out.min(s.min);
  if (s.max !== undefined) {
    out = s.maxMessage === undefined ? out.max(s.max) : out.max(s.max, { message: s.maxMessage });
  }
  if (s.pattern) out = out.regex(s.pattern.re, { message: s.pattern.message });
  return out;
}

function zodInt(min: number | undefined, max: number | undefined): z.ZodNumber {
  let out = z.number().int();
  if (min !== undefined) out = out.min(min);
  if (max !== undefined) out = out.max(max);
  return out;
}

/** The zod schema of `spec`, check for check as the spec says them. */
export function zodOf(spec: Spec): z.ZodType {
  switch (spec.t) {
    case "string":
      return zodString(spec);
    case "int":
      return zodInt(spec.min, spec.max);
    case "boolean":
      return z.boolean();
    case "unknown":
      return z.unknown();
    case "enum":
      return z.enum(spec.values as [string, ...string[]]);
    case "array": {
      const out = z.array(zodOf(spec.item));
      return spec.min === undefined ? out : out.min(spec.min);
    }
    case "record": {
      const out = z.record(zodString(spec.key), zodOf(spec.value));
      const message = spec.nonEmpty;
      return message === undefined
        ? out
        : out.refine((m) => Object.keys(m).length > 0, { message });
    }
    case "object": {
      const shape = Object.fromEntries(
        Object.entries(spec.shape).map(([k, f]) => [k, zodField(f)]),
      );
      return spec.loose ? z.object(shape).loose() : z.strictObject(shape);
    }
    case "nullable":
      return zodOf(spec.inner).nullable();
  }
}

function zodField(f: Field): z.ZodType {
  return f.t === "optional" ? zodOf(f.inner).optional() : zodOf(f);
}

export const workflowSchema = zodOf(workflowSpec);
export const calibrationSchema = zodOf(calibrationSpec);
export const certificationSchema = zodOf(certificationSpec);
export const webSchema = zodOf(webSpec);
