/**
 * JSON that is a contract: schemas/ is what the zod formats generate (run `deno task schemas`
 * after changing one), every format is named `dvergr-<kind>/<n>` with camelCase fields, every
 * op has one, and the commands' --json output validates against schemas/ (through the test
 * helpers, which validate every --json output they run; here the commands no other test runs
 * with --json). The MCP tools' structuredContent is held to their outputSchema by the SDK's
 * client in tests/mcp/.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { schemaFiles } from "../../cli/schemas.ts";
import { allFormats } from "../../cli/json_formats.ts";
import { FORMAT_ID, jsonSchemaOf } from "../../core/json_format.ts";
import { allOps } from "../../core/ops/registry.ts";
import { dvergrIn, dvergrWithPath } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

const SCHEMAS = new URL("../../schemas/", import.meta.url);

Deno.test("schemas/ holds exactly the JSON Schemas the formats generate", () => {
  const want = schemaFiles();
  const have = new Map<string, string>();
  for (const e of Deno.readDirSync(SCHEMAS)) {
    if (e.name.endsWith(".json")) {
      have.set(e.name, Deno.readTextFileSync(new URL(e.name, SCHEMAS)));
    }
  }
  const stale = [...want].filter(([n, t]) => have.get(n) !== t).map(([n]) => n);
  const extra = [...have.keys()].filter((n) => !want.has(n));
  assert.deepEqual(
    { stale, extra },
    { stale: [], extra: [] },
    "schemas/ is stale: run `deno task schemas` and commit what it writes",
  );
});

/** Every property name of a JSON Schema, with where it is (maps' keys are data, not names). */
function propertyNames(schema: unknown, at: string, out: [string, string][]): void {
  if (!schema || typeof schema !== "object") return;
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => propertyNames(s, `${at}[${i}]`, out));
    return;
  }
  for (const [k, v] of Object.entries(schema)) {
    if (k === "properties" && v && typeof v === "object") {
      for (const [name, sub] of Object.entries(v)) {
        out.push([name, `${at}.${name}`]);
        propertyNames(sub, `${at}.${name}`, out);
      }
    } else propertyNames(v, `${at}/${k}`, out);
  }
}

Deno.test("every format is dvergr-<kind>/<n>, every field camelCase, every op has one", () => {
  const formats = allFormats();
  assert.ok(formats.length >= 30, `${formats.length} formats`);
  for (const f of formats) {
    assert.match(f.id, FORMAT_ID);
    const names: [string, string][] = [];
    propertyNames(jsonSchemaOf(f), f.id, names);
    const bad = names.filter(([n]) => !/^[a-z][a-zA-Z0-9]*$/.test(n)).map(([, at]) => at);
    assert.deepEqual(bad, [], `${f.id}: fields not in camelCase`);
    const top = Object.keys((jsonSchemaOf(f).properties ?? {}) as object);
    assert.equal(top[0], "format", `${f.id}: format comes first`);
  }
  const ids = new Set(formats.map((f) => f.id));
  for (const op of allOps()) assert.ok(ids.has(op.output.id), `${op.name}: ${op.output.id}`);
});

Deno.test("the commands' --json output validates against schemas/", async () => {
  const home = await Deno.makeTempDir();
  const cwd = await Deno.makeTempDir();
  const bundle = await writeBundleTo(wordDataset(2));
  const run = async (...args: string[]) => {
    const r = await dvergrWithPath([...args, "--json"]);
    return { ...r, doc: r.out.trim() === "" ? null : JSON.parse(r.out) };
  };
  const ok = async (...args: string[]) => {
    const r = await run(...args);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.err}${r.out}`);
    return r.doc;
  };
  try {
    assert.equal(
      (await ok("room", "create", "books", "--home", home)).format,
      "dvergr-room-create/1",
    );
    await ok("room", "write", "books", "notes/a.txt", "--text", "hello", "--home", home);
    await ok("room", "write", "books", "workflows/words", "--dir", bundle, "--home", home);
    await ok("room", "list", "--home", home);
    await ok("room", "files", "books", "--home", home);
    await ok("room", "read", "books", "notes/a.txt", "--home", home);
    await ok("room", "log", "books", "--home", home);
    const listed = await ok("list", "--home", home);
    assert.equal(listed.rooms[0].bundles[0].bundle, "words");
    const check = await ok("check", bundle);
    assert.equal(check.cases, 2);
    assert.deepEqual(check.caseIds, ["c1", "c2"]);
    await ok("calibrate", bundle);
    const file = join(cwd, "words.edn");
    const exported = await ok("export", "books/words", "-o", file, "--home", home);
    assert.equal(exported.bundle, "words");
    await ok("import", file, "--dir", join(cwd, "copy"));
    await ok("promote", "books/words", "--home", home);
    const bench = await ok(
      "benchmark",
      "books/words",
      "--candidate",
      "builtin:reference",
      "--candidate",
      "builtin:noop",
      "--home",
      home,
    );
    assert.equal(bench.bundle, "words");
    assert.equal(bench.cases, 2);
    await ok("experiments", "--home", home);
    await ok("show", bench.experiment, "--home", home);
    await ok("show", `${bench.experiment}/builtin:reference/c1/0`, "--home", home);
    await ok("plan", bench.experiment, "--half-width", "0.2", "--home", home);
    await ok("init", join(cwd, "mine"));
    // A failure is a document too.
    const missing = await run("show", "ffffffff", "--home", home);
    assert.equal(missing.code, 2);
    assert.equal(missing.doc.format, "dvergr-error/1");
    const bad = await dvergrIn(cwd, "check", join(cwd, "nothing-here"), "--json");
    assert.equal(bad.code, 2);
  } finally {
    for (const d of [home, cwd, bundle]) await Deno.remove(d, { recursive: true });
  }
});
