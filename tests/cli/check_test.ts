/**
 * `dvergr check` refuses, with exit 2 and each problem at its file and line, a bundle every
 * attempt of which would fault (fixtures or captures where the sandbox keeps its own) and
 * a task whose placeholder names no parameter.
 */
import assert from "node:assert/strict";
import { dvergrWithPath, tempDirWith } from "../helpers/cli.ts";
import { RECALL_CHECKER } from "../helpers/bundles.ts";

function bundleFiles(over: Record<string, string>): Record<string, string> {
  return {
    "workflow.edn": '{:title "Recall" :task "List the names in /docs/a.md in /out/list.md."}',
    "checker.js": RECALL_CHECKER,
    "gold.edn": '{:names ["Wato" "Dust"]}',
    "fixtures/docs/a.md": "Wato and Dust are products.",
    "calibration.edn": '{:reference {"/out/list.md" "Wato, Dust"}}',
    ...over,
  };
}

Deno.test("dvergr check refuses fixtures under /.dvergr, /run and /proc and a capture under /tmp", async () => {
  const dir = await tempDirWith(bundleFiles({
    "fixtures/.dvergr/capture.tar": "x",
    "fixtures/run/dvergr/model.sock": "x",
    "cases/c1/fixtures/proc/self/status": "x",
    "cases/c1/gold.edn": '{:names ["Wato"]}',
    "workflow.edn": '{:title "Recall"\n :task "List the names."\n :capture ["/out" "/tmp"]}',
  }));
  try {
    const r = await dvergrWithPath(["check", dir]);
    assert.equal(r.code, 2, r.out + r.err);
    const problems = r.out.split("\n").filter((l) => l.startsWith("  - "));
    assert.deepEqual(problems.map((l) => l.split(":")[0]), [
      "  - cases/c1/fixtures/proc/",
      "  - fixtures/.dvergr/",
      "  - fixtures/run/",
      "  - workflow.edn line 3",
    ]);
    assert.match(
      r.out,
      /workflow\.edn line 3: :capture: "\/tmp" is under \/tmp, which the sandbox/,
    );
    // A benchmark refuses it too, before any cell runs.
    const home = await Deno.makeTempDir();
    const b = await dvergrWithPath(["benchmark", dir, "--candidate", "x=cmd:true", "--home", home]);
    assert.equal(b.code, 2, b.err);
    assert.match(b.err, /error\[BUNDLE_INVALID\]: .*fixtures\/run\/: fixtures under \/run/);
    await Deno.remove(home, { recursive: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr check names a task placeholder that no parameter fills, at its line", async () => {
  const dir = await tempDirWith(bundleFiles({
    "workflow.edn": '{:title "Recall"\n :params {:team "ops"}\n :task "For {team}: list {what}\n' +
      ' in /out/list.md, {what} and {:keys [a]} stay."}',
  }));
  try {
    const r = await dvergrWithPath(["check", dir]);
    assert.equal(r.code, 2, r.out + r.err);
    assert.ok(
      r.out.includes(
        "  - workflow.edn line 3: :task: the placeholder {what} names no parameter, so the " +
          "candidate would read it as it is: add :what to :params (it has :team) or give it " +
          "as a parameter\n",
      ),
      r.out,
    );
    assert.equal(r.out.split("\n").filter((l) => l.startsWith("  - ")).length, 1, r.out);
    const json = JSON.parse((await dvergrWithPath(["check", dir, "--json"])).out);
    assert.deepEqual(json.problems.map((p: { line: number; field: string }) => [p.field, p.line]), [
      [":task", 3],
    ]);
    // Given on the command line, the parameter fills it.
    const given = await dvergrWithPath(["check", dir, "--param", "what=names"]);
    assert.equal(given.code, 0, given.out + given.err);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr check reports the checker's syntax error beside an EDN problem, at once", async () => {
  const dir = await tempDirWith(bundleFiles({
    "gold.edn": '{:names ["Wato" "Dust"]',
    "checker.js": "export function check(input) {\n  return {;\n}\n",
  }));
  const { "checker.js": _, ...cljFiles } = bundleFiles({ "calibration.edn": "{:reference" });
  const clj = await tempDirWith({
    ...cljFiles,
    "checker.clj": "(ns checker)\n(defn check [input]\n  {:reward 1\n",
  });
  try {
    const r = await dvergrWithPath(["check", dir]);
    assert.equal(r.code, 2, r.out + r.err);
    const problems = r.out.split("\n").filter((l) => l.startsWith("  - "));
    assert.deepEqual(problems.map((l) => l.split(/ line |:/)[0]), [
      "  - gold.edn",
      "  - checker.js",
    ]);
    assert.match(r.out, / {2}- checker\.js line 2/);
    const c = await dvergrWithPath(["check", clj]);
    assert.equal(c.code, 2, c.out + c.err);
    assert.match(c.out, / {2}- calibration\.edn/);
    assert.match(c.out, / {2}- checker\.clj/);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(clj, { recursive: true });
  }
});

Deno.test("dvergr check names a case without gold.edn when others have theirs and the bundle has none", async () => {
  const { "gold.edn": _, ...files } = bundleFiles({
    "cases/c1/gold.edn": '{:names ["Wato"]}',
    "cases/c1/fixtures/docs/a.md": "Wato.",
    "cases/c2/fixtures/docs/a.md": "Dust.",
  });
  const dir = await tempDirWith(files);
  try {
    const r = await dvergrWithPath(["check", dir]);
    assert.equal(r.code, 2, r.out + r.err);
    const problems = r.out.split("\n").filter((l) => l.startsWith("  - "));
    assert.equal(problems.length, 1, r.out);
    assert.match(
      problems[0],
      /^ {2}- cases\/c2\/gold\.edn: is missing: case "c2" has no gold\.edn/,
    );
    // With the bundle's gold.edn to fall back on, it is not a problem.
    await Deno.writeTextFile(`${dir}/gold.edn`, '{:names ["Dust"]}');
    const ok = await dvergrWithPath(["check", dir]);
    assert.equal(ok.code, 0, ok.out + ok.err);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr check says each schema problem of the EDN files in the EDN's terms, at its line", async () => {
  // The schemas' success path decides without zod; these are decided by zod's issues.
  const dir = await tempDirWith(bundleFiles({
    "workflow.edn": '{:title ""\n :task "List the names in /out/list.md."\n :timeout-ms 999\n' +
      ' :colour "red"}',
    "calibration.edn":
      '{:reference {"/out/list.md" "Wato, Dust"}\n :damaged {"empty" {:files {}}}}',
  }));
  try {
    const r = await dvergrWithPath(["check", dir]);
    assert.equal(r.code, 2, r.out + r.err);
    const problems = r.out.split("\n").filter((l) => l.startsWith("  - "));
    assert.deepEqual(problems, [
      "  - calibration.edn line 2: :damaged :empty :loses: missing required key",
      '  - workflow.edn line 1: :title: expected a non-empty string, found ""',
      "  - workflow.edn line 3: :timeout-ms: expected at least 1000, found 999",
      "  - workflow.edn line 4: :colour: unknown key (known: :title :doc :params :task :profile " +
      ":capture :timeout-ms :fetched :judge :allowed-sources :blocked-sources :web :review)",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
