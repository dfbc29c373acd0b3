import assert from "node:assert/strict";
import { bundleProblems, formatProblem, parseBundle } from "../../../core/bundle/parse.ts";
import { DvergrError } from "../../../core/errors.ts";
import { recallBundle } from "../../helpers/bundles.ts";

const problemsOf = (o: Record<string, string | null>) =>
  bundleProblems(recallBundle(o)).map(formatProblem);

Deno.test("bundleProblems() finds nothing wrong with a complete bundle", () => {
  assert.deepEqual(bundleProblems(recallBundle()), []);
});

Deno.test("parseBundle() fills defaults and maps fixtures to world paths", () => {
  const b = parseBundle({ name: "recall", files: recallBundle() });
  assert.equal(b.definition.profile, "developer");
  assert.deepEqual(b.definition.capture, ["/out"]);
  assert.deepEqual(b.fixtures, { "/docs/a.md": "Wato and Dust are products." });
  assert.deepEqual(b.gold, { names: ["Wato", "Dust"] });
  assert.deepEqual(Object.keys(b.calibration!.damaged).sort(), ["empty", "one-missing"]);
  assert.deepEqual(b.calibration!.damaged["one-missing"].loses, ["found-all"]);
  assert.match(b.id, /^[0-3][0-9a-f]{7}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

Deno.test("parseBundle() id ignores the name and changes with any byte", () => {
  const a = parseBundle({ name: "a", files: recallBundle() });
  const b = parseBundle({ name: "b", files: recallBundle() });
  const c = parseBundle({ name: "a", files: recallBundle({ "gold.edn": '{:names ["Wato"]}' }) });
  assert.equal(a.id, b.id);
  assert.notEqual(a.id, c.id);
});

Deno.test("bundleProblems() reports a missing workflow.edn and a missing checker together", () => {
  const ps = problemsOf({ "workflow.edn": null, "checker.js": null });
  assert.equal(ps.length, 2);
  assert.match(ps[0], /checker\.js is missing/);
  assert.match(ps[1], /workflow\.edn is missing/);
});

Deno.test("bundleProblems() accepts checker.clj in place of checker.js", () => {
  assert.deepEqual(problemsOf({ "checker.js": null, "checker.clj": "(ns c)" }), []);
  const ps = problemsOf({ "checker.js": null });
  assert.equal(ps.length, 1);
  assert.match(ps[0], /^checker\.js: checker\.js is missing: .*or checker\.clj/);
});

Deno.test("bundleProblems() locates malformed EDN in every EDN file", () => {
  const ps = problemsOf({
    "workflow.edn": '{:title "T"\n :task "x"',
    "gold.edn": "{:a 1 :a 2}",
    "calibration.edn": "[1 2",
    "cases/c1/gold.edn": "#{1 1}",
    "cases/c1/fixtures/x.md": "x",
  });
  const files = ps.map((p) => p.split(" ")[0].replace(/:$/, ""));
  assert.deepEqual(files, [
    "calibration.edn",
    "cases/c1/gold.edn",
    "gold.edn",
    "workflow.edn",
  ]);
  for (const p of ps) assert.match(p, /line \d+, column \d+: not EDN/);
});

Deno.test("bundleProblems() names unknown keys, wrong types and bad :capture with lines", () => {
  const ps = problemsOf({
    "workflow.edn":
      '{:title "T"\n :task "Do it."\n :colour "red"\n :capture ["out"]\n :timeout-ms 10}',
  });
  assert.equal(ps.length, 3, ps.join("\n"));
  assert.ok(ps.some((p) => /^workflow\.edn line 3: :colour: unknown key/.test(p)), ps.join("\n"));
  assert.ok(
    ps.some((p) => /^workflow\.edn line 4: :capture \[0\]: .*absolute world directory/.test(p)),
  );
  assert.ok(ps.some((p) => /^workflow\.edn line 5: :timeout-ms: .*1000.*found 10/.test(p)));
});

Deno.test("bundleProblems() refuses a workflow.edn that is not a map or lacks :task", () => {
  assert.match(problemsOf({ "workflow.edn": "[1 2]" })[0], /expected a map/);
  assert.match(problemsOf({ "workflow.edn": "" })[0], /workflow\.edn.*not EDN/);
  assert.match(problemsOf({ "workflow.edn": '{:title "T"}' })[0], /:task: missing required key/);
  assert.match(
    problemsOf({ "workflow.edn": '{"title" "T" :task "x"}' })[0],
    /key "title" should be a keyword/,
  );
});

Deno.test("bundleProblems() wants fixtures or cases, and web.edn for a frozen web", () => {
  assert.match(problemsOf({ "fixtures/docs/a.md": null })[0], /fixtures\/ is empty/);
  const ps = problemsOf({ "workflow.edn": '{:title "T" :task "x" :web :frozen}' });
  assert.match(ps[0], /:web :frozen but web\.edn is missing/);
});

Deno.test("bundleProblems() checks calibration.edn's shape and its :case", () => {
  const ps = problemsOf({
    "calibration.edn": '{:case "nope" :reference {"out/x" "y"} :damaged {:a {:loses [:x]}}}',
  });
  assert.ok(ps.some((p) => /:damaged :a :files: missing required key/.test(p)), ps.join("\n"));
  assert.ok(ps.some((p) => /:case: names case "nope"/.test(p)), ps.join("\n"));
});

Deno.test("bundleProblems() refuses paths that leave the bundle", () => {
  const ps = problemsOf({ "../evil": "x", "/abs": "y" });
  assert.equal(ps.length, 2);
});

Deno.test("parseBundle() throws BUNDLE_INVALID with every problem as data", () => {
  const e = assertThrowsDvergr(() =>
    parseBundle({ name: "x", files: recallBundle({ "workflow.edn": null, "checker.js": null }) })
  );
  assert.equal(e.code, "BUNDLE_INVALID");
  assert.equal((e.details!.problems as unknown[]).length, 2);
});

Deno.test("parseBundle() reads cases sorted with their own gold and fixtures", () => {
  const b = parseBundle({
    name: "ds",
    files: recallBundle({
      "fixtures/docs/a.md": null,
      "cases/two/fixtures/docs/q.txt": "2",
      "cases/one/fixtures/docs/q.txt": "1",
      "cases/one/gold.edn": '{:names ["A"]}',
    }),
  });
  assert.deepEqual(b.cases.map((c) => c.id), ["one", "two"]);
  assert.deepEqual(b.cases[0].gold, { names: ["A"] });
  assert.equal(b.cases[1].gold, null);
  assert.deepEqual(b.cases[1].fixtures, { "/docs/q.txt": "2" });
});

function assertThrowsDvergr(f: () => unknown): DvergrError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof DvergrError);
    return e;
  }
  assert.fail("expected a DvergrError");
}

Deno.test("bundleProblems() words every wrong type in EDN terms, once per field, without zod's jargon", () => {
  const ps = problemsOf({
    "workflow.edn":
      '{:title 1 :task [] :doc :x :params [1] :profile 2 :capture "/out" :timeout-ms 6000.5\n' +
      ' :fetched "yes" :judge {:model "m" :max-requests 99} :allowed-sources ["" 1] :web :tepid}',
    "web.edn": '{"ftp://x" {:title "t" :body "b"}}',
  });
  const text = ps.join("\n");
  assert.doesNotMatch(text, /received|Invalid|record|Too small|Too big|expected int\b/, text);
  const expected = [
    /:title: expected a string, found 1$/,
    /:task: expected a string, found a vector$/,
    /:params: expected a map, found a vector$/,
    /:profile: expected a string, found 2$/,
    /:capture: expected a vector, found "\/out"$/,
    /:timeout-ms: expected a whole number, found 6000\.5$/,
    /:fetched: expected true or false, found "yes"$/,
    /:judge :max-requests: expected at most 50, found 99$/,
    /:allowed-sources \[0\]: expected a non-empty string, found ""$/,
    /:allowed-sources \[1\]: expected a string, found 1$/,
    /:web: expected one of :live :frozen, found "tepid"$/,
    /^web\.edn line 1: "ftp:\/\/x": expected an http\(s\) URL without query or fragment$/,
  ];
  for (const re of expected) assert.ok(ps.some((p) => re.test(p)), `${re} in\n${text}`);
  assert.equal(ps.filter((p) => / :task: /.test(p)).length, 1, text);
  assert.match(
    problemsOf({ "workflow.edn": '{:title "T" :task "x" :timeout-ms 5}' })[0],
    /:timeout-ms: expected at least 1000, found 5$/,
  );
});

Deno.test("bundleProblems() tells a keyword from text in workflow.edn", () => {
  const ps = problemsOf({
    "workflow.edn":
      '{:title :recall\n :task "x"\n :web "live"\n :allowed-sources ["a.com" :b.com]}',
  });
  assert.deepEqual(ps, [
    'workflow.edn line 1: :title: expected a string, found the keyword :recall: write "recall" (in double quotes)',
    'workflow.edn line 3: :web: expected a keyword such as :live, found the string "live"',
    "workflow.edn line 4: :allowed-sources: expected a vector of strings, found a keyword in it",
  ]);
});

Deno.test("bundleProblems() says how to write :profile :dev as text", () => {
  const ps = problemsOf({ "workflow.edn": '{:title "T" :task "x" :profile :dev}' });
  assert.deepEqual(ps, [
    'workflow.edn line 1: :profile: expected a string, found the keyword :dev: write "dev" (in double quotes)',
  ]);
});
