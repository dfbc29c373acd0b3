import assert from "node:assert/strict";
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-singlefile-mjs-release-sync";
import { EDN_SANDBOX_SOURCE } from "../../../core/edn/sandbox_source.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { toPlain } from "../../../core/edn/plain.ts";
import { DvergrError } from "../../../core/errors.ts";

const SAMPLE = `;; an answer
{:found ["Wato" "Simmis"], :counts {:a 1 "b" 2.0 3 4N}, :when #inst "2026-01-31T12:00:00Z"
 :id #uuid "0a0e8e35-4b5a-5dde-a9e3-7b9ac47f137d", :tags #{:x :y/z}, :l (\\a \\newline)
 :text "quote \\" backslash \\\\ newline \\n é 😀" :big 12345678901234567890 :t #p [1]}`;

interface EdnGlobal {
  parse(text: string, file?: string): unknown;
  stringify(value: unknown, pretty?: boolean): string;
}

/** Evaluates the source with `new Function`, its global object being a fresh plain object. */
function loadInDeno(): EdnGlobal {
  const g: { edn?: EdnGlobal } = {};
  new Function("globalThis", EDN_SANDBOX_SOURCE)(g);
  return g.edn!;
}

function hostError(text: string, file: string): DvergrError {
  try {
    readEdn(text, { file });
  } catch (e) {
    if (e instanceof DvergrError) return e;
    throw e;
  }
  throw new Error("expected a syntax error");
}

Deno.test("EDN_SANDBOX_SOURCE defines edn.parse giving the toPlain mapping", () => {
  const edn = loadInDeno();
  assert.deepStrictEqual(edn.parse(SAMPLE), toPlain(readEdn(SAMPLE)));
  assert.deepStrictEqual(edn.parse("[1 :a]"), [1, "a"]);
});

Deno.test("EDN_SANDBOX_SOURCE edn.parse throws an error naming line and column", () => {
  const edn = loadInDeno();
  for (const bad of ["{:a 1\n :b [1 2}", "#{1 1}", '"\\q"', "", "1 2", "{:a}"]) {
    const host = hostError(bad, "answer.edn");
    assert.throws(() => edn.parse(bad, "answer.edn"), (e: unknown) => {
      const err = e as Error & { line: number; column: number; hint: string };
      assert.strictEqual(err.name, "EdnSyntaxError");
      assert.strictEqual(err.message, host.message);
      assert.strictEqual(err.line, host.details?.line);
      assert.strictEqual(err.column, host.details?.column);
      assert.strictEqual(err.hint, host.hint);
      return true;
    });
  }
  assert.throws(() => edn.parse(42 as unknown as string), TypeError);
});

Deno.test("EDN_SANDBOX_SOURCE edn.stringify writes plain data that edn.parse reads back", () => {
  const edn = loadInDeno();
  const data = { title: "T", n: [1, 2.5, null], nested: { "a b": true } };
  assert.strictEqual(edn.stringify(data), '{:title "T", :n [1 2.5 nil], :nested {"a b" true}}');
  assert.deepStrictEqual(edn.parse(edn.stringify(data)), data);
});

Deno.test("EDN_SANDBOX_SOURCE is plain JavaScript with no imports or type syntax", () => {
  assert.ok(!/\bimport\s*[({"']|\bimport\s+\w/.test(EDN_SANDBOX_SOURCE), "no imports");
  assert.ok(!/\bexport\s/.test(EDN_SANDBOX_SOURCE), "no exports");
  assert.ok(!/:\s*(string|number|boolean|EdnValue)\b[^"]/.test(EDN_SANDBOX_SOURCE), "no types");
});

let quickjs: QuickJSWASMModule | undefined;

/** Runs `code` after the EDN source in a fresh QuickJS context with a 128 KiB stack. */
async function inQuickJS(code: string): Promise<unknown> {
  quickjs ??= await newQuickJSWASMModuleFromVariant(variant);
  const rt = quickjs.newRuntime();
  rt.setMaxStackSize(128 * 1024);
  rt.setMemoryLimit(64 * 1024 * 1024);
  const ctx = rt.newContext();
  try {
    const loaded = ctx.evalCode(EDN_SANDBOX_SOURCE, "edn.js");
    if (loaded.error) {
      const err = ctx.dump(loaded.error);
      loaded.error.dispose();
      throw new Error(`The EDN source did not load in QuickJS: ${JSON.stringify(err)}`);
    }
    loaded.value.dispose();
    const r = ctx.evalCode(`JSON.stringify((() => { ${code} })())`, "test.js");
    if (r.error) {
      const err = ctx.dump(r.error);
      r.error.dispose();
      throw new Error(`QuickJS threw: ${JSON.stringify(err)}`);
    }
    const out = ctx.getString(r.value);
    r.value.dispose();
    return JSON.parse(out);
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}

Deno.test("EDN_SANDBOX_SOURCE parses in a bare QuickJS global scope like the host", async () => {
  const sample = SAMPLE.replace(" :big 12345678901234567890", "");
  const got = await inQuickJS(`return edn.parse(${JSON.stringify(sample)});`);
  assert.deepStrictEqual(got, JSON.parse(JSON.stringify(toPlain(readEdn(sample)))));
  assert.deepStrictEqual(
    await inQuickJS(`return edn.parse("{:big 12345678901234567890 :n 42N}");`),
    { big: "12345678901234567890", n: 42 },
  );
});

Deno.test("EDN_SANDBOX_SOURCE reports syntax errors with line and column inside QuickJS", async () => {
  const bad = "{:a 1\n :b [1 2}";
  const host = hostError(bad, "answer.edn");
  const got = await inQuickJS(`
    try { edn.parse(${JSON.stringify(bad)}, "answer.edn"); return null; }
    catch (e) { return { name: e.name, message: e.message, line: e.line, column: e.column }; }`);
  assert.deepStrictEqual(got, {
    name: "EdnSyntaxError",
    message: host.message,
    line: host.details?.line,
    column: host.details?.column,
  });
});

Deno.test("EDN_SANDBOX_SOURCE reads 500 nested levels within a 128 KiB QuickJS stack", async () => {
  const deep = "{:a ".repeat(250) + "[".repeat(250) + "1" + "]".repeat(250) + "}".repeat(250);
  const got = await inQuickJS(`
    let v = edn.parse(${JSON.stringify(deep)});
    let d = 0;
    while (v !== null && typeof v === "object") { v = Array.isArray(v) ? v[0] : v.a; d++; }
    return { depth: d, leaf: v };`);
  assert.deepStrictEqual(got, { depth: 500, leaf: 1 });
  const tooDeep = await inQuickJS(`
    try { edn.parse("[".repeat(501)); return null; } catch (e) { return e.message; }`);
  assert.strictEqual(tooDeep, "line 1, column 501: nesting deeper than 500 levels");
});
