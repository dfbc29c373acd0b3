import assert from "node:assert/strict";
import { join } from "node:path";
import { memoryContext } from "../../cli/context.ts";
import { runMain } from "../../main.ts";
import { writeTree } from "../../adapters/files/bundle_dir.ts";
import { recallBundle } from "../helpers/bundles.ts";
import { parse, type TestSuites } from "junit2json";

const EXAMPLES = new URL("../../examples/workflows/", import.meta.url).pathname;

async function dvergr(...args: string[]) {
  const ctx = memoryContext();
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

async function tempBundle(o: Record<string, string | null> = {}, name = "recall") {
  const dir = join(await Deno.makeTempDir(), name);
  await writeTree(dir, recallBundle(o));
  return dir;
}

for (const example of ["invoice-fields", "meeting-actions"]) {
  Deno.test(`dvergr check and calibrate pass on examples/workflows/${example}`, async () => {
    const check = await dvergr("check", join(EXAMPLES, example));
    assert.equal(check.code, 0, check.out + check.err);
    assert.match(check.out, new RegExp(`^Bundle ${example}  [0-9a-f-]{36}\\n`));
    assert.match(check.out, /Problems {2}none/);
    const cal = await dvergr("calibrate", join(EXAMPLES, example));
    assert.equal(cal.code, 0, cal.out + cal.err);
    assert.match(cal.out, /^calibrated: /m);
  });
}

Deno.test("dvergr check lists every problem with its file and line, exit 2", async () => {
  const dir = await tempBundle({
    "workflow.edn": '{:title "T"\n :task "x"\n :colour :red}',
    "gold.edn": "{:a",
  });
  const r = await dvergr("check", dir);
  assert.equal(r.code, 2);
  assert.match(r.out, /2 problems:/);
  assert.match(r.out, /- gold\.edn line 1, column \d+: not EDN/);
  assert.match(r.out, /- workflow\.edn line 3: :colour: unknown key/);
});

Deno.test("dvergr check --json gives the problems as data", async () => {
  const dir = await tempBundle({ "checker.js": null });
  const r = await dvergr("check", dir, "--json");
  assert.equal(r.code, 2);
  const data = JSON.parse(r.out);
  assert.equal(data.ok, false);
  assert.equal(data.problems[0].file, "checker.js");
});

Deno.test("dvergr check --answer grades an answer laid out like a world", async () => {
  const dir = await tempBundle();
  const answer = await Deno.makeTempDir();
  await writeTree(answer, new Map([["out/list.md", "Wato only"], ["notes.txt", "ignored"]]));
  const r = await dvergr("check", dir, "--answer", answer, "--json");
  assert.equal(r.code, 0, r.out + r.err);
  const data = JSON.parse(r.out);
  assert.deepEqual(data.verdict.files, ["/out/list.md"]);
  assert.deepEqual(data.verdict.run.verdict, {
    checks: { "wrote-list": true, "found-all": false },
    reward: 0.5,
  });
});

Deno.test("dvergr calibrate exits 1 when a variant keeps its check", async () => {
  const dir = await tempBundle({
    "calibration.edn": `{:reference {"/out/list.md" "Wato, Dust"}
 :damaged {:wrong {:files {"/out/list.md" "Wato, Dust, Pizza"} :loses [:found-all]}}}`,
  });
  const r = await dvergr("calibrate", dir);
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.out, /NOT CALIBRATED: 1 problem\n/);
  assert.match(r.out, /- wrong still passes \[:found-all\]/);
});

Deno.test("dvergr calibrate on a malformed bundle or a wrong path exits 2 with a hint", async () => {
  const dir = await tempBundle({ "workflow.edn": "{:title" });
  const r = await dvergr("calibrate", dir);
  assert.equal(r.code, 2);
  assert.match(
    r.err,
    /^error\[BUNDLE_INVALID\]: Bundle "recall" is not well formed: workflow\.edn line 1/,
  );
  assert.match(r.err, /\nhint: /);
  const missing = await dvergr("calibrate", "/nonexistent/bundle");
  assert.equal(missing.code, 2);
  assert.match(
    missing.err,
    /error\[NOT_FOUND\]: Cannot read bundle "\/nonexistent\/bundle": no such directory/,
  );
});

Deno.test("dvergr check refuses a symlink leaving the bundle and a non-UTF-8 file", async () => {
  const dir = await tempBundle();
  await Deno.symlink("/etc/passwd", join(dir, "fixtures", "passwd"));
  const link = await dvergr("check", dir);
  assert.equal(link.code, 2);
  assert.match(link.err, /fixtures\/passwd is a symbolic link leaving the bundle/);
  const dir2 = await tempBundle();
  await Deno.writeFile(join(dir2, "fixtures", "latin1.txt"), new Uint8Array([0x4d, 0xfc, 0x6c]));
  const bad = await dvergr("check", dir2);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /fixtures\/latin1\.txt is not UTF-8 text/);
});

Deno.test("dvergr check and calibrate with two bundles exit 2 with a hint, as text and as JSON", async () => {
  const a = join(EXAMPLES, "meeting-actions");
  const b = join(EXAMPLES, "invoice-fields");
  for (const command of ["check", "calibrate"]) {
    const text = await dvergr(command, a, b);
    assert.equal(text.code, 2);
    assert.match(
      text.err,
      new RegExp(`^error\\[USAGE\\]: "dvergr ${command}" takes one bundle, got 2: .+\\n`),
    );
    assert.match(
      text.err,
      new RegExp(`\nhint: Run it once per bundle: dvergr ${command} path/to/bundle `),
    );
    assert.doesNotMatch(text.err, /\n\s+at /);
    const json = await dvergr(command, a, b, "--json");
    assert.equal(json.code, 2);
    const parsed = JSON.parse(json.out || json.err);
    assert.equal(parsed.error.code, "USAGE");
    assert.ok(parsed.error.hint, json.out + json.err);
  }
});

Deno.test("dvergr check makes a checker.js that does not parse a problem with its line, exit 2", async () => {
  const dir = await tempBundle({
    "checker.js":
      "export function check({ files }) {\n  const x = ;\n  return { checks: {}, reward: 0 };\n}\n",
  });
  const r = await dvergr("check", dir);
  assert.equal(r.code, 2, r.out + r.err);
  assert.ok(!r.out.includes("Problems  none"), r.out);
  assert.match(r.out, /1 problem:\n {2}- checker\.js line 2, column \d+: syntax error: /);
  const j = JSON.parse((await dvergr("check", dir, "--json")).out);
  assert.equal(j.ok, false);
  assert.equal(j.problems[0].file, "checker.js");
  assert.equal(j.problems[0].line, 2);
});

Deno.test("dvergr check makes a checker.js that throws while loading a problem", async () => {
  const dir = await tempBundle({
    "checker.js":
      'throw new Error("no");\nexport function check() { return { checks: {}, reward: 0 }; }\n',
  });
  const r = await dvergr("check", dir);
  assert.equal(r.code, 2, r.out + r.err);
  assert.match(r.out, /checker\.js line 1, column \d+: threw while loading Error: no/);
});

Deno.test("dvergr calibrate of a checker.js that does not load says so once, as check does: the bundle is broken, exit 2", async () => {
  for (
    const [checker, said] of [
      [
        "export function check({ files }) {\n  const x = ;\n}\n",
        /checker\.js line 2, column \d+: syntax error: /,
      ],
      [
        'throw new Error("no");\nexport function check() {}\n',
        /checker\.js line 1, column \d+: threw while loading Error: no/,
      ],
    ] as const
  ) {
    const dir = await tempBundle({ "checker.js": checker });
    const r = await dvergr("calibrate", dir);
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(r.err, /^error\[BUNDLE_INVALID\]: Bundle "recall" is not well formed: /);
    assert.match(r.err, said);
    assert.match(r.err, /hint: Fix checker\.js/);
    // No answer was graded as if it were wrong.
    assert.doesNotMatch(r.out, /NOT CALIBRATED|FAULT/);
    const j = JSON.parse((await dvergr("calibrate", dir, "--json")).out);
    assert.equal(j.error.code, "BUNDLE_INVALID");
    assert.equal(j.error.details.problems[0].file, "checker.js");
  }
  // One that loads and throws on an answer grades it as faulted: not calibrated, exit 1.
  const dir = await tempBundle({
    "checker.js": 'export function check() { throw new Error("no"); }\n',
  });
  const r = await dvergr("calibrate", dir);
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.out, /NOT CALIBRATED/);
  assert.match(r.out, /the reference: the checker faulted \(threw\)/);
});

Deno.test("dvergr calibrate says '1 damaged variant loses what it damages'", async () => {
  const dir = await tempBundle({
    "calibration.edn": `{:reference {"/out/list.md" "Wato, Dust"}
 :damaged {:one-missing {:files {"/out/list.md" "Wato"} :loses [:found-all]}}}`,
  });
  const r = await dvergr("calibrate", dir);
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(
    r.out,
    /^calibrated: the reference passes every check; 1 damaged variant loses what it damages$/m,
  );
});

Deno.test("dvergr calibrate --junit writes one test case per variant, a failure for a bad one", async () => {
  const dir = await tempBundle({
    "calibration.edn": `{:reference {"/out/list.md" "Wato, Dust"}
 :damaged {:one-missing {:files {"/out/list.md" "Wato"} :loses [:found-all]}
           :harmless {:files {"/out/list.md" "Wato, Dust"} :loses [:found-all]}}}`,
  });
  const file = join(await Deno.makeTempDir(), "ci", "calibration.xml");
  const r = await dvergr("calibrate", dir, "--junit", file);
  assert.equal(r.code, 1, r.out + r.err);
  const doc = await parse(await Deno.readTextFile(file)) as TestSuites;
  const cases = doc.testsuite![0].testcase!;
  assert.deepEqual(cases.map((c) => c.name), [
    "reference",
    "damaged harmless",
    "damaged one-missing",
  ]);
  assert.equal(doc.failures, 1);
  assert.match(cases[1].failure![0].message!, /^harmless still passes \[:found-all\]/);
});

Deno.test("dvergr check --answer names an answer directory that is missing or a file, exit 2", async () => {
  const bundle = join(EXAMPLES, "meeting-actions");
  const file = await Deno.makeTempFile();
  for (const answer of [join(await Deno.makeTempDir(), "missing"), file]) {
    const r = await dvergr("check", bundle, "--answer", answer);
    assert.equal(r.code, 2, r.err);
    assert.match(
      r.err,
      new RegExp(`Cannot read the answer directory "${answer}": it is not a directory`),
    );
    assert.doesNotMatch(r.err, /Cannot read bundle/);
  }
});

Deno.test("dvergr check --answer of a bundle with problems lists them (exit 2) before anything about the answer, which is read meanwhile", async () => {
  const dir = await tempBundle({ "gold.edn": "{:a" });
  const missing = join(await Deno.makeTempDir(), "missing");
  const r = await dvergr("check", dir, "--answer", missing);
  assert.equal(r.code, 2, r.out + r.err);
  assert.match(r.out, /gold\.edn/);
  assert.doesNotMatch(r.out + r.err, /answer directory/);
});

Deno.test("dvergr freeze refuses a --home that is a file (exit 2) and says a missing home holds nothing (exit 1)", async () => {
  const bundle = join(EXAMPLES, "tool-rivals");
  const file = await Deno.makeTempFile();
  const onFile = await dvergr("freeze", bundle, "--home", file);
  assert.equal(onFile.code, 2, onFile.err);
  assert.match(onFile.err, /it is a file, not a directory/);
  const missing = join(await Deno.makeTempDir(), "none");
  const none = await dvergr("freeze", bundle, "--home", missing);
  assert.equal(none.code, 1, none.err);
  assert.match(none.err, /Nothing to freeze: no fetched pages/);
  assert.equal(await Deno.stat(missing).then(() => true, () => false), false, "no home made");
});
