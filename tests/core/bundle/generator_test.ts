/** The pure parts of generated worlds: ids, world paths, identity; and the bundle shape. */
import assert from "node:assert/strict";
import {
  generatedCase,
  generatedCaseId,
  generatedIdentity,
  readGeneratedCaseId,
  worldProblems,
} from "../../../core/bundle/generator.ts";
import { bundleProblems, parseBundle } from "../../../core/bundle/parse.ts";

const GENERATOR = `export function generate({ index }) {
  return { files: { "/docs/n.txt": String(index) }, gold: { n: index } };
}`;

function files(o: Record<string, string>): Map<string, string> {
  return new Map(Object.entries({
    "workflow.edn": '{:title "T" :task "Read /docs/n.txt."}',
    "checker.js": "export function check() { return { checks: {}, reward: 1 }; }",
    ...o,
  }));
}

Deno.test("generated case ids carry split and index, four digits at least", () => {
  assert.equal(generatedCaseId("test", 7), "gen-test-0007");
  assert.equal(generatedCaseId("train", 12, 100), "gen-train-0012");
  assert.equal(generatedCaseId("test", 12, 20_000), "gen-test-00012");
  assert.deepEqual(readGeneratedCaseId("gen-train-0003"), { split: "train", index: 3 });
  assert.deepEqual(readGeneratedCaseId("gen-test-00012"), { split: "test", index: 12 });
  for (const bad of ["gen-dev-0001", "gen-test-1", "case-0001", "gen-test-0001x"]) {
    assert.equal(readGeneratedCaseId(bad), null, bad);
  }
});

Deno.test("worldProblems() refuses what cannot be a world", () => {
  assert.deepEqual(worldProblems({ files: { "/docs/a.md": "x" }, gold: 1 }), []);
  const bad = worldProblems({
    files: {
      "docs/a.md": "relative",
      "/docs/../etc/x": "leaves",
      "/.dvergr/seed": "dvergr's",
      "/run/s": "gateway's",
      "/proc/x": "kernel's",
      "/docs//a": "empty segment",
    },
    gold: 1,
  });
  assert.equal(bad.length, 6, bad.join("\n"));
  assert.match(bad[0], /"docs\/a\.md" is not an absolute world path/);
  assert.ok(bad.some((p) => /"\/\.dvergr\/seed" is under \/\.dvergr/.test(p)));
  assert.ok(bad.some((p) => /"\/run\/s" is under \/run/.test(p)));
  assert.ok(bad.some((p) => /"\/proc\/x" is under \/proc/.test(p)));
  assert.ok(bad.some((p) => /leaves the world/.test(p)));
  // A file of the world where the shared fixtures have a directory.
  const conflict = worldProblems({ files: { "/docs": "x" }, gold: 1 }, { "/docs/a.md": "y" });
  assert.equal(conflict.length, 1);
  assert.match(
    conflict[0],
    /cannot be made: world path "\/docs" is a file and also the directory of "\/docs\/a\.md"/,
  );
});

const JS = { file: "generator.js" as const, source: GENERATOR };

Deno.test("generatedIdentity() changes with the generator, the set and the worlds", () => {
  const set = { split: "test" as const, count: 2, seed: 1 };
  const cases = [0, 1].map((i) =>
    generatedCase(generatedCaseId("test", i), { files: { "/a": String(i) }, gold: { n: i } })
  );
  const id = generatedIdentity(JS, set, cases);
  assert.equal(id.file, "generator.js");
  assert.equal(
    generatedIdentity({ ...JS, file: "generator.clj" }, set, cases).file,
    "generator.clj",
  );
  assert.match(id.generator, /^[0-9a-f]{64}$/);
  assert.deepEqual(generatedIdentity(JS, set, cases), id);
  assert.notEqual(
    generatedIdentity({ file: "generator.js", source: GENERATOR + " " }, set, cases).generator,
    id.generator,
  );
  assert.notEqual(generatedIdentity(JS, { ...set, seed: 2 }, cases).seed, id.seed);
  const other = [cases[0], { ...cases[1], gold: { n: 9 } }];
  assert.notEqual(generatedIdentity(JS, set, other).worlds, id.worlds);
  // Key order of gold does not matter.
  const reordered = [{ ...cases[0], gold: { n: 0 } }, cases[1]];
  assert.equal(generatedIdentity(JS, set, reordered).worlds, id.worlds);
});

Deno.test("a bundle may have generator.js instead of fixtures/ and cases/, not beside cases/", () => {
  assert.deepEqual(bundleProblems(files({ "generator.js": GENERATOR })), []);
  const b = parseBundle({ name: "g", files: files({ "generator.js": GENERATOR }) });
  assert.deepEqual(b.cases, []);
  assert.deepEqual(bundleProblems(files({ "generator.js": GENERATOR, "fixtures/a.md": "x" })), []);
  const both = bundleProblems(files({ "generator.js": GENERATOR, "cases/a/gold.edn": "1" }));
  assert.equal(both.length, 1);
  assert.equal(both[0].file, "generator.js");
  assert.match(both[0].message, /from cases\/ or from generator\.js, not both/);
  const none = bundleProblems(files({}));
  assert.match(none[0].message, /nor a generator\.js/);
});

Deno.test("calibration.edn of a generated bundle names a generated world as :case", () => {
  const cal = (c: string) =>
    files({
      "generator.js": GENERATOR,
      "calibration.edn": `{:case "${c}"\n :reference {"/out/a" "1"} :damaged {}}`,
    });
  assert.deepEqual(bundleProblems(cal("gen-train-0003")), []);
  const bad = bundleProblems(cal("invoice-1"));
  assert.equal(bad.length, 1);
  assert.equal(bad[0].file, "calibration.edn");
  assert.equal(bad[0].field, ":case");
  assert.equal(bad[0].line, 1);
  assert.match(
    bad[0].message,
    /"invoice-1", which is no generated world: write gen-<split>-<index>/,
  );
});
