/**
 * An op as an MCP tool: its name, its input schema as JSON Schema (flat and closed, so
 * strict model APIs accept it), and annotations derived from its kind. The rules are
 * checked here too, so a test can hold every tool to them.
 */
import { z } from "zod";
import type { Op } from "../core/ops/op.ts";
import { ERROR_FORMAT, jsonSchemaOf } from "../core/json_format.ts";
import { CUT_FORMAT } from "./result.ts";

/** Tool names clients and model APIs accept. */
export const TOOL_NAME = /^[a-z][a-z0-9_]{0,39}$/;

export type JsonSchema = Record<string, unknown>;

/** Annotations of a tool (MCP ToolAnnotations). */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A tool definition as tools/list returns it. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: "object" };
  /** Its structuredContent: a document of the op's format (or of dvergr-cut/1, dvergr-error/1). */
  outputSchema: JsonSchema & { type: "object" };
  annotations: ToolAnnotations;
}

/**
 * The annotations of an op: read ops are read-only and idempotent; write ops are not
 * destructive; destructive ops are; idempotent and open-world as the op declares.
 */
export function annotationsOf(op: Op): ToolAnnotations {
  const read = op.kind === "read";
  return {
    title: op.title,
    readOnlyHint: read,
    destructiveHint: op.kind === "destructive",
    idempotentHint: read || op.idempotent === true,
    openWorldHint: op.openWorld === true,
  };
}

function stripRecordNames(schema: JsonSchema): void {
  // `propertyNames: {type: "string"}` says nothing JSON keys do not, and strict APIs refuse it.
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  for (const p of Object.values(props ?? {})) {
    const names = p.propertyNames as JsonSchema | undefined;
    if (names && Object.keys(names).length === 1 && names.type === "string") {
      delete p.propertyNames;
    }
  }
}

/**
 * The JSON Schema of an op's input, as a client sends it (defaults are optional). With
 * `pinnedRoom`, the `room` parameter is left out: the connection supplies it.
 */
export function toolInputSchema(op: Op, opts: { pinnedRoom?: boolean } = {}): JsonSchema {
  const schema = z.toJSONSchema(op.input, { io: "input" }) as JsonSchema;
  delete schema.$schema;
  stripRecordNames(schema);
  if (opts.pinnedRoom) {
    const props = schema.properties as Record<string, JsonSchema> | undefined;
    if (props) delete props.room;
    if (Array.isArray(schema.required)) {
      schema.required = (schema.required as string[]).filter((r) => r !== "room");
      if ((schema.required as string[]).length === 0) delete schema.required;
    }
  }
  schema.properties ??= {};
  return schema;
}

/** A format's JSON Schema without its `$schema` and `$id` (for embedding). */
function embedded(schema: JsonSchema): JsonSchema {
  const { $schema: _, $id: __, ...rest } = schema;
  return rest;
}

const outputSchemas = new WeakMap<Op, JsonSchema & { type: "object" }>();

/**
 * The JSON Schema of an op's structuredContent: a document of its format, of dvergr-cut/1
 * (a result longer than a tool result holds), or of dvergr-error/1 (an isError result: the
 * SDK's client checks those against outputSchema too).
 */
export function toolOutputSchema(op: Op): JsonSchema & { type: "object" } {
  let schema = outputSchemas.get(op);
  if (!schema) {
    schema = {
      type: "object",
      anyOf: [op.output, CUT_FORMAT, ERROR_FORMAT].map((f) => embedded(jsonSchemaOf(f))),
    };
    outputSchemas.set(op, schema);
  }
  return schema;
}

/** The tool definition of an op. */
export function toolDefinition(op: Op, opts: { pinnedRoom?: boolean } = {}): ToolDefinition {
  return {
    name: op.name,
    title: op.title,
    description: op.description,
    inputSchema: toolInputSchema(op, opts) as ToolDefinition["inputSchema"],
    outputSchema: toolOutputSchema(op),
    annotations: annotationsOf(op),
  };
}

const PRIMITIVES = new Set(["string", "number", "integer", "boolean", "null"]);
const FORBIDDEN = ["oneOf", "anyOf", "allOf", "not", "$ref", "$defs", "definitions", "if"];

function isPrimitive(s: unknown): boolean {
  if (!s || typeof s !== "object") return false;
  const t = (s as JsonSchema).type;
  const types = Array.isArray(t) ? t : [t];
  return types.length > 0 && types.every((x) => typeof x === "string" && PRIMITIVES.has(x));
}

/** A map value given as an object or a primitive (e.g. room_write's `{text}` or null), checked by the op. */
function isLooseValue(s: unknown): boolean {
  if (!s || typeof s !== "object") return false;
  const v = s as JsonSchema;
  const types = Array.isArray(v.type) ? v.type : [v.type];
  return v.properties === undefined && types.includes("object") &&
    types.every((x) => x === "object" || (typeof x === "string" && PRIMITIVES.has(x)));
}

function forbiddenKeys(v: unknown, at: string, out: string[]): void {
  if (!v || typeof v !== "object") return;
  if (Array.isArray(v)) {
    v.forEach((x, i) => forbiddenKeys(x, `${at}[${i}]`, out));
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    if (FORBIDDEN.includes(k)) out.push(`${at} uses ${k}`);
    forbiddenKeys(x, `${at}.${k}`, out);
  }
}

/**
 * What breaks the tool rules, or nothing: a name matching `^[a-z][a-z0-9_]{0,39}$`; an
 * object schema with additionalProperties false; no oneOf/anyOf/allOf/not/$ref; every
 * property a primitive, an array of primitives, or a map from text to primitives (or to
 * values that may be objects, which the op checks itself, as room_write's `{text}`).
 */
export function toolProblems(tool: { name: string; inputSchema: JsonSchema }): string[] {
  const out: string[] = [];
  const s = tool.inputSchema;
  if (!TOOL_NAME.test(tool.name)) out.push(`name "${tool.name}" does not match ${TOOL_NAME}`);
  if (s.type !== "object") out.push("the input schema is not of type object");
  if (s.additionalProperties !== false) out.push("the input schema is not closed");
  forbiddenKeys(s, "schema", out);
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  for (const [key, p] of Object.entries(props)) {
    if (!TOOL_NAME.test(key)) out.push(`parameter "${key}" is not a plain snake_case name`);
    if (isPrimitive(p)) continue;
    if (p.type === "array" && isPrimitive(p.items)) continue;
    if (
      p.type === "object" && p.properties === undefined &&
      (isPrimitive(p.additionalProperties) || isLooseValue(p.additionalProperties))
    ) continue;
    out.push(`parameter "${key}" is not a primitive, a list or a map of primitives`);
  }
  for (const r of (s.required ?? []) as string[]) {
    if (!(r in props)) out.push(`required parameter "${r}" is not among the properties`);
  }
  return out;
}
