/**
 * `dvergr calibrate --auto`: the examples and a generated case pack pass; checkers of
 * known weakness fail with the reason named; --json and --junit carry the mutations.
 */
import assert from "node:assert/strict";
import { junit10Problems } from "../helpers/junit_xsd.ts";
import { join } from "node:path";
import { parse, type TestSuites } from "junit2json";
import { writeTree } from "../../adapters/files/bundle_dir.ts";
import { casesArgs, dvergrIn } from "../helpers/cli.ts";
import {
  ANY_ANSWER_CHECKER,
  cityFiles,
  RIGHT_CHECKER,
  TEXT_CHECKER,
} from "../helpers/city_bundle.ts";

const EXAMPLES = new URL("../../examples/workflows/", import.meta.url).pathname;
const dvergr = (...args: string[]) => dvergrIn(Deno.cwd(), ...args);

async function cityDir(checker: string): Promise<string> {
  const dir = join(await Deno.makeTempDir(), "city");
  await writeTree(dir, cityFiles(checker));
  return dir;
}

for (const example of ["invoice-fields", "meeting-actions", "tool-rivals"]) {
  Deno.test(`dvergr calibrate --auto passes on examples/workflows/${example}`, async () => {
    const r = await dvergr("calibrate", join(EXAMPLES, example), "--auto");
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(
      r.out,
      /^margin (0\.[2-9]\d\d|1\.000) \(minimum 0\.200\): the closest damage is /m,
    );
    assert.match(r.out, /^brittle: none$/m);
    assert.match(r.out, /^ {2}damaging {3}no-answer {10}reward 0\.000/m);
  });
}

Deno.test("dvergr calibrate --auto passes on a generated case pack", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(
    join(dir, "t.csv"),
    'id,text,account,amount\n1,Office chairs,4930,"119,00"\n2,Train ticket,4670,"42,50"\n3,Coffee,4900,"8,20"\n',
  );
  const built = await dvergrIn(
    dir,
    ...casesArgs("t.csv", "account:exact", "pack"),
    "--outcome",
    "amount:number:0.01",
  );
  assert.equal(built.code, 0, built.out + built.err);
  const r = await dvergrIn(dir, "calibrate", "pack", "--auto");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /^ {2}damaging {3}other-case {9}reward 0\.000/m);
});

Deno.test("dvergr calibrate --auto fails a checker that rewards any answer, naming the margin", async () => {
  const r = await dvergr("calibrate", await cityDir(ANY_ANSWER_CHECKER), "--auto");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(
    r.out,
    /^ {2}damaging {3}task-as-answer {5}reward 1\.000 {2}checks 1\/1 {2}NOT LOWER$/m,
  );
  assert.match(
    r.out,
    /^ {2}- margin 0\.000 is under the minimum 0\.200: task-as-answer \(the task text as every answer file\) still earns 1\.000/m,
  );
});

Deno.test("dvergr calibrate --auto fails a whitespace-sensitive checker, naming the brittle mutations", async () => {
  const r = await dvergr("calibrate", await cityDir(TEXT_CHECKER), "--auto");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.out, /^ {2}invariance whitespace {9}reward 0\.000 {2}checks 0\/2 {2}BRITTLE$/m);
  assert.match(r.out, /^brittle: whitespace, key-order, trailing-newline, integer-as-float$/m);
  assert.match(r.out, /^ {2}- brittle mutation whitespace \(/m);
  assert.doesNotMatch(r.out, /- margin/);
});

Deno.test("dvergr calibrate --auto passes a right checker, and --min-margin above its margin fails it", async () => {
  const dir = await cityDir(RIGHT_CHECKER);
  const r = await dvergr("calibrate", dir, "--auto");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /^margin 0\.500 \(minimum 0\.200\)/m);
  assert.match(r.out, /^calibrated: .*every automatic damage scores at least 0\.500 lower/m);
  const strict = await dvergr("calibrate", dir, "--auto", "--min-margin", "0.6");
  assert.equal(strict.code, 1, strict.out);
  assert.match(strict.out, /- margin 0\.500 is under the minimum 0\.600/);
});

Deno.test("dvergr calibrate --auto --json and --junit carry every mutation, the margin and the brittle ones", async () => {
  const dir = await cityDir(TEXT_CHECKER);
  const file = join(await Deno.makeTempDir(), "cal.xml");
  const r = await dvergr("calibrate", dir, "--auto", "--json", "--junit", file);
  assert.equal(r.code, 1, r.err);
  assert.deepEqual(junit10Problems(await Deno.readTextFile(file)), []);
  const data = JSON.parse(r.out);
  assert.equal(data.ok, false);
  assert.equal(data.auto.minMargin, 0.2);
  assert.equal(data.auto.margin, 1);
  assert.deepEqual(data.auto.brittle, [
    "whitespace",
    "key-order",
    "trailing-newline",
    "integer-as-float",
  ]);
  const ws = data.auto.mutations.find((m: { name: string }) => m.name === "whitespace");
  assert.equal(ws.kind, "invariance");
  assert.equal(ws.ok, false);
  assert.equal(ws.run.verdict.reward, 0);
  const doc = await parse(await Deno.readTextFile(file)) as TestSuites;
  const cases = doc.testsuite![0].testcase!;
  const of = (name: string) => cases.find((c) => c.name === name)!;
  assert.equal(of("mutation whitespace").failure![0].type, "brittle");
  assert.equal(
    of("mutation other-case").skipped![0].message,
    "the bundle is not a dataset (it has no cases)",
  );
  assert.equal(of("mutation no-answer").failure, undefined);
  assert.equal(of("margin").failure, undefined);
  assert.equal(doc.failures, 4);
});

Deno.test("dvergr calibrate refuses --min-margin without --auto or outside 0 to 1, exit 2", async () => {
  const dir = await cityDir(RIGHT_CHECKER);
  const alone = await dvergr("calibrate", dir, "--min-margin", "0.3");
  assert.equal(alone.code, 2);
  assert.match(alone.err, /Cannot use --min-margin without --auto/);
  const big = await dvergr("calibrate", dir, "--auto", "--min-margin", "1.5");
  assert.equal(big.code, 2);
  assert.match(big.err, /Cannot use --min-margin "1\.5": expected from 0 to 1/);
});
