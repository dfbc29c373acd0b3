/**
 * Validates dvergr's JSON documents against schemas/ (the committed JSON Schemas) with Ajv,
 * a JSON Schema validator independent of zod: a document names its format in `format`, and
 * `dvergr-<kind>/<n>` is checked against schemas/<kind>-<n>.json.
 */
import assert from "node:assert/strict";
import Ajv2020Module from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";

const SCHEMAS = new URL("../../schemas/", import.meta.url);
// The CommonJS module's default export is the class (its typings say the module).
const Ajv2020 = Ajv2020Module as unknown as typeof Ajv2020Module.default;
const ajv = new Ajv2020({ allErrors: true, strict: true });
const compiled = new Map<string, ValidateFunction>();

/** The schemas/ file of a format id (`dvergr-room-list/1` → room-list-1.json). */
export function schemaFileOfId(id: string): string {
  const m = /^dvergr-([a-z0-9-]+)\/([0-9]+)$/.exec(id);
  assert.ok(m, `not a format id: ${JSON.stringify(id)}`);
  return `${m[1]}-${m[2]}.json`;
}

function validatorOf(id: string): ValidateFunction {
  const known = compiled.get(id);
  if (known) return known;
  const file = schemaFileOfId(id);
  const v = ajv.compile(JSON.parse(Deno.readTextFileSync(new URL(file, SCHEMAS))));
  compiled.set(id, v);
  return v;
}

/** Fails unless `doc` is a document of a known format that validates against its schema. */
export function assertValidDocument(doc: unknown, what = "the document"): void {
  assert.ok(doc !== null && typeof doc === "object" && !Array.isArray(doc), `${what}: no object`);
  const format = (doc as Record<string, unknown>).format;
  assert.equal(Object.keys(doc)[0], "format", `${what}: format is not the first key`);
  assert.equal(typeof format, "string", `${what}: no format`);
  const validate = validatorOf(format as string);
  if (!validate(doc)) {
    assert.fail(
      `${what} is not a valid ${format}: ${
        (validate.errors ?? []).map((e) =>
          `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`
        ).join("; ")
      }`,
    );
  }
}

/** Parses a command's --json output and validates it; returns the document. */
export function validJson(text: string, what = "the output"): Record<string, unknown> {
  const doc = JSON.parse(text);
  assertValidDocument(doc, what);
  return doc;
}
