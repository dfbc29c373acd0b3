/**
 * acceptSchema (core/bundle/schema_spec.ts) against the zod schemas built from the same specs
 * (core/bundle/schemas.ts): whatever it accepts, zod accepts and makes the same value of (same
 * keys, same order); over the examples' EDN files and thousands of seeded damages of them.
 */
import assert from "node:assert/strict";
import { acceptSchema, type SchemaName } from "../../../core/bundle/schema_spec.ts";
import {
  calibrationSchema,
  certificationSchema,
  webSchema,
  workflowSchema,
} from "../../../core/bundle/schemas.ts";
import { analyseAccepted, analyseBundle } from "../../../core/bundle/parse_core.ts";
import { schemaCheck } from "../../../core/bundle/schema_problems.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { toPlain } from "../../../core/edn/plain.ts";
import { seededRandom } from "../../../core/seeded_random.ts";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { recallBundle } from "../../helpers/bundles.ts";

const ZOD = {
  workflow: workflowSchema,
  calibration: calibrationSchema,
  certification: certificationSchema,
  web: webSchema,
} as const;

const EXAMPLES = new URL("../../../examples/workflows/", import.meta.url).pathname;

async function exampleBundles() {
  const out = [];
  for await (const e of Deno.readDir(EXAMPLES)) {
    if (e.isDirectory) out.push(await readBundleDir(EXAMPLES + e.name));
  }
  return out;
}

/** Valid plain values of every schema: the examples' and some written here. */
async function validValues(): Promise<[SchemaName, unknown][]> {
  const out: [SchemaName, unknown][] = [];
  const files = { workflow: "workflow.edn", calibration: "calibration.edn", web: "web.edn" };
  for (const b of await exampleBundles()) {
    for (const [name, file] of Object.entries(files) as [SchemaName, string][]) {
      const text = b.files.get(file);
      if (text !== undefined) out.push([name, toPlain(readEdn(text))]);
    }
  }
  out.push(["workflow", {
    task: "t",
    title: "x",
    "timeout-ms": 1000,
    judge: { "max-requests": 50, model: "m" },
    capture: ["/out", "/a/b"],
    "allowed-sources": ["a"],
    "blocked-sources": [],
    fetched: true,
    web: "frozen",
    review: { a: 1 },
    params: { k: [1, "x"] },
    profile: "p",
    doc: "",
  }]);
  out.push(["calibration", {
    reviews: { r: { files: { "/out/a": "x" }, expect: "escalate" } },
    damaged: { d: { loses: ["k"], files: {}, judgements: { a: "b" } } },
    case: "c",
  }]);
  out.push(["certification", {
    cases: 3,
    certified: 2,
    "by-reason": { x: 1 },
    excluded: [{ id: "c", reasons: ["r", 1], extra: true }],
    note: "kept",
  }]);
  return out;
}

/** A damaged copy of `v`: one value somewhere replaced, a key added or removed. */
function damage(v: unknown, rnd: () => number): unknown {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const replacements: unknown[] = [
    null,
    undefined,
    0,
    -1,
    1.5,
    999,
    1000,
    86_400_001,
    2 ** 60,
    NaN,
    Infinity,
    "",
    "x",
    "/out",
    "out.d",
    "frozen",
    "https://a.example/p",
    "http://a b",
    true,
    [],
    [""],
    ["/x"],
    {},
    { title: "t", body: "b" },
    { files: {}, loses: [] },
    10n,
    "b".repeat(50_000),
    { title: "t", body: "b".repeat(50_001) },
    { title: "t", body: "b".repeat(50_000) },
  ];
  if (v === null || typeof v !== "object" || rnd() < 0.3) return pick(replacements);
  if (Array.isArray(v)) {
    if (v.length === 0 || rnd() < 0.2) return [...v, pick(replacements)];
    const i = Math.floor(rnd() * v.length);
    return v.map((x, j) => j === i ? damage(x, rnd) : x);
  }
  const o = { ...(v as Record<string, unknown>) };
  const keys = Object.keys(o);
  const r = rnd();
  if (keys.length === 0 || r < 0.15) {
    // An own key, as toPlain makes them (assigning __proto__ would set the prototype).
    Object.defineProperty(o, pick(["extra", "title", "files", "cases", "__proto__"]), {
      value: pick(replacements),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else if (r < 0.3) delete o[pick(keys)];
  else {
    const k = pick(keys);
    o[k] = damage(o[k], rnd);
  }
  return o;
}

function assertSame(name: SchemaName, value: unknown): boolean {
  const accepted = acceptSchema(name, value);
  if (accepted === null) return false;
  const r = ZOD[name].safeParse(value);
  assert.ok(r.success, `${name}: accepted what zod refuses: ${Deno.inspect(value)}`);
  assert.deepStrictEqual(accepted, r.data);
  const json = (x: unknown) =>
    JSON.stringify(
      x,
      (_, y) => typeof y === "bigint" ? `${y}n` : y === undefined ? "undefined" : y,
    );
  assert.equal(json(accepted), json(r.data), "keys in zod's order");
  return true;
}

Deno.test("acceptSchema() accepts the valid values, making of them what zod does", async () => {
  const valid = await validValues();
  assert.ok(valid.length >= 10);
  for (const [name, v] of valid) assert.ok(assertSame(name, v), `${name}: ${Deno.inspect(v)}`);
});

Deno.test("acceptSchema() accepts nothing zod refuses, over seeded damages", async () => {
  const valid = await validValues();
  const rnd = seededRandom(26);
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < 6000; i++) {
    const [name, v] = valid[i % valid.length];
    let d = damage(v, rnd);
    if (rnd() < 0.5) d = damage(d, rnd);
    if (assertSame(name, d)) accepted++;
    else if (!ZOD[name].safeParse(d).success) refused++;
  }
  // Both sides seen: damages it still accepts, and damages zod refuses.
  assert.ok(accepted > 500, `accepted ${accepted}`);
  assert.ok(refused > 1000, `refused ${refused}`);
});

Deno.test("analyseAccepted() decides the examples without zod; a schema problem is undecided", async () => {
  for (const b of await exampleBundles()) {
    const fast = analyseAccepted(b.files);
    assert.ok(fast, b.name);
    assert.deepStrictEqual(fast, analyseBundle(b.files, schemaCheck));
  }
  assert.equal(analyseAccepted(recallBundle({ "workflow.edn": '{:title "" :task "t"}' })), null);
});
