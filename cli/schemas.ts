/**
 * schemas/: the JSON Schema of every format (core/json_format.ts), one file each
 * (`<kind>-<n>.json`), generated from the zod schemas. `deno task schemas` writes them;
 * tests/cli/json_contract_test.ts fails when they are stale.
 */
import { jsonSchemaOf, schemaFileOf } from "../core/json_format.ts";
import { allFormats } from "./json_formats.ts";

/** The files schemas/ holds: name → text. */
export function schemaFiles(): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of allFormats()) {
    out.set(schemaFileOf(f), JSON.stringify(jsonSchemaOf(f), null, 2) + "\n");
  }
  return out;
}

/** Writes schemas/ beside this file's parent, removing schema files of no format. */
async function writeSchemas(): Promise<void> {
  const dir = new URL("../schemas/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  const files = schemaFiles();
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.name.endsWith(".json") && !files.has(entry.name)) {
      await Deno.remove(new URL(entry.name, dir));
    }
  }
  for (const [name, text] of files) await Deno.writeTextFile(new URL(name, dir), text);
  // deno-lint-ignore no-console
  console.log(`schemas/: ${files.size} formats`);
}

if (import.meta.main) await writeSchemas();
