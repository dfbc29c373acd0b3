/**
 * JSON that is a contract: every JSON document dvergr prints (`--json`) or returns (an MCP
 * tool's structuredContent, a resource's text) is of a named format, `dvergr-<kind>/<n>`,
 * whose zod schema is the one definition of its shape. The document carries the name in
 * `format`, its first key; `schemas/<kind>-<n>.json` is the schema as JSON Schema
 * (`deno task schemas` writes them). A format's version goes up when a field is removed,
 * renamed or changes meaning; added fields keep it. docs/json.md has the naming rules.
 */
import { z } from "zod";

/** A format id: `dvergr-<kind>/<n>`, kind in kebab-case. */
export const FORMAT_ID = /^dvergr-[a-z][a-z0-9]*(-[a-z0-9]+)*\/[1-9][0-9]*$/;

// deno-lint-ignore no-explicit-any
type AnyObject = z.ZodObject<any>;

/** A named JSON format: its id and the zod schema of its fields (`format` aside). */
export interface JsonFormat<S extends AnyObject = AnyObject> {
  /** `dvergr-<kind>/<n>`. */
  id: string;
  kind: string;
  version: number;
  /** What a document of this format is, one sentence. */
  description: string;
  schema: S;
}

/** The value of a format's documents, `format` aside. */
export type FormatValue<F extends JsonFormat> = z.output<F["schema"]>;

/** A document of a format: `format` first, then the value's own fields. */
export type Formatted<F extends JsonFormat> = { format: string } & FormatValue<F>;

/** Defines a format; its kind is kebab-case and its version a positive integer. */
export function defineFormat<S extends AnyObject>(
  kind: string,
  version: number,
  description: string,
  schema: S,
): JsonFormat<S> {
  const id = `dvergr-${kind}/${version}`;
  if (!FORMAT_ID.test(id)) throw new RangeError(`Not a format id: ${id}`);
  return { id, kind, version, description, schema };
}

/** The zod schema of a format's documents, `format` included. */
export function documentSchema(format: JsonFormat): AnyObject {
  let doc: AnyObject = z.object({ format: z.literal(format.id) }).extend(format.schema.shape);
  // An open format (z.looseObject) stays open.
  const catchall = format.schema.def.catchall;
  if (catchall) doc = doc.catchall(catchall);
  return doc.meta({
    title: format.id,
    description: format.description,
  });
}

/** The JSON Schema (draft 2020-12) of a format's documents, as schemas/ holds it. */
export function jsonSchemaOf(format: JsonFormat): Record<string, unknown> {
  const schema = z.toJSONSchema(documentSchema(format), {
    io: "output",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  return { $schema, $id: `${format.kind}-${format.version}.json`, ...rest };
}

/** The file name of a format's JSON Schema under schemas/. */
export function schemaFileOf(format: JsonFormat): string {
  return `${format.kind}-${format.version}.json`;
}

/**
 * Reusable field schemas, so that one name means one thing in every format (docs/json.md).
 */
export const fields = {
  /** A room's slug. */
  room: z.string().describe("The room (its slug)"),
  /** A bundle's name (its directory under workflows/). */
  bundle: z.string().describe("The bundle's name (its directory under workflows/)"),
  /** A bundle's content id. */
  bundleId: z.string().describe("The bundle's content id"),
  /** An experiment's id. */
  experiment: z.string().describe("The experiment's id"),
  /** A 95% interval, [low, high] (an array of two, which every JSON Schema draft reads alike). */
  interval: typed<[number, number]>(
    z.array(z.number()).min(2).max(2).describe("A 95% interval: [low, high]"),
  ),
  /** An ISO 8601 time. */
  time: z.string().describe("An ISO 8601 time (UTC)"),
  /** A trust tier. */
  trust: z.enum(["trusted", "room", "ad-hoc"]),
};

/** A failure, as every format that can fail carries it (and `dvergr-error/1` alone). */
export const errorShape = z.object({
  code: z.string().describe("What kind of failure (USAGE, NOT_FOUND, INTERNAL, …)"),
  message: z.string(),
  hint: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  stack: z.string().optional().describe("Only for a bug of ours (INTERNAL)"),
});

export const ERROR_FORMAT = defineFormat(
  "error",
  1,
  "A failure: what went wrong and what to do (a CLI's --json on failure, an MCP error result).",
  z.object({ error: errorShape }),
);

/**
 * A schema whose value has the TypeScript type `T` (a domain interface) while its JSON
 * Schema says what `schema` says: for a nested value whose every field is not spelt out
 * here (an open object: fields may be added without a new version).
 */
export function typed<T>(schema: z.ZodType): z.ZodType<T> {
  return schema as unknown as z.ZodType<T>;
}
