/**
 * Hostile tables: nothing a table, spec or shared file holds corrupts a case pack silently,
 * leaks the answer, reads forever, or ends in an internal error.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { casesArgs, dvergrIn as dvergr, tempDirWith } from "../helpers/cli.ts";
import { readEdn } from "../../core/edn/read.ts";
import { toPlain } from "../../core/edn/plain.ts";

const tempDir = (files: Record<string, string | Uint8Array> = {}) =>
  tempDirWith(files, "dvergr-hostile-");

const JSON_FLAGS = ["--id", "id", "--inputs", "text", "--outcome", "account:exact"];

Deno.test("dvergr cases refuses a CSV header that names a column twice, naming it", async () => {
  const dir = await tempDir({ "t.csv": "id,text,account,text\nB1,a,4400,b\nB2,c,4410,d\n" });
  const r = await dvergr(dir, "cases", "t.csv", ...JSON_FLAGS, "--out", "out");
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /column "text" twice \(columns 2 and 4\)/);
  await assert.rejects(() => Deno.stat(join(dir, "out")));
});

Deno.test("dvergr cases refuses a JSON line naming a key twice, naming it and the line", async () => {
  const dir = await tempDir({
    "t.jsonl": '{"id": "B1", "text": "a", "account": "4400"}\n' +
      '{"id": "B2", "text": "b", "note": {"account": 1}, "account": "1", "account": "4410"}\n',
  });
  const r = await dvergr(dir, "cases", "t.jsonl", ...JSON_FLAGS, "--out", "out");
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /line 2 names the key "account" twice/);
});

Deno.test("dvergr cases reads JSON-lines integers beyond 2^53 exactly: no false duplicate ids", async () => {
  const dir = await tempDir({
    "t.jsonl": '{"id": 12345678901234567000, "text": "a", "account": "4400"}\n' +
      '{"id": 12345678901234567001, "text": "b", "account": 98765432109876543210}\n',
  });
  const r = await dvergr(dir, "cases", "t.jsonl", ...JSON_FLAGS, "--out", "out", "--json");
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).certified, 2);
  const gold = await Deno.readTextFile(join(dir, "out/cases/12345678901234567001/gold.edn"));
  assert.match(gold, /98765432109876543210/);
  await Deno.stat(join(dir, "out/cases/12345678901234567000"));
});

Deno.test("dvergr cases excludes NaN and infinite outcomes as outcome-not-gradable", async () => {
  const dir = await tempDir({
    "t.edn": '[{:id "B1" :text "a" :account ##NaN} {:id "B2" :text "b" :account ##Inf} ' +
      '{:id "B3" :text "c" :account 4400}]',
    "t.jsonl": '{"id": "B1", "text": "a", "account": 1e400}\n' +
      '{"id": "B2", "text": "b", "account": 4400}\n',
  });
  for (const table of ["t.edn", "t.jsonl"]) {
    for (const rule of ["exact", "number"]) {
      const r = await dvergr(
        dir,
        ...casesArgs(table, `account:${rule}`, `out-${table}-${rule}`),
        "--json",
      );
      assert.equal(r.code, 0, r.err);
      const res = JSON.parse(r.out);
      assert.equal(res.certified, 1, `${table} ${rule}`);
      assert.equal(res.byReason["outcome-not-gradable"], table === "t.edn" ? 2 : 1);
    }
  }
});

Deno.test("dvergr cases refuses an outcome the agent would see: the id column, or a copy of it", async () => {
  const dir = await tempDir({
    "t.csv": "id,text,account,copy\nB1,a,4400,B1\nB2,c,4410,B2\n",
  });
  const same = await dvergr(dir, ...casesArgs("t.csv", "id:exact", "o1"));
  assert.equal(same.code, 2, same.err);
  assert.match(same.err, /column "id" is both the id and an expected outcome/);
  const copy = await dvergr(dir, ...casesArgs("t.csv", "copy:exact", "o2"));
  assert.equal(copy.code, 2, copy.err);
  assert.match(copy.err, /outcome column "copy" holds the case id of every row/);
});

Deno.test("dvergr cases refuses JSON lines nested deeper than 100 levels (exit 2, no stack)", async () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const dir = await tempDir({
    "t.jsonl": `{"id": "B1", "text": ${deep}, "account": "4400"}\n`,
  });
  const r = await dvergr(dir, "cases", "t.jsonl", ...JSON_FLAGS, "--out", "out");
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /line 1 nests arrays or objects deeper than 100 levels/);
  assert.doesNotMatch(r.err, /internal error|\s{4}at /);
});

Deno.test("dvergr cases reads only regular files: /dev/zero, a FIFO or a directory as table, --shared or --spec", async () => {
  const dir = await tempDir({ "t.csv": "id,text,account\nB1,a,4400\n" });
  const fifo = join(dir, "fifo");
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  const base = ["--id", "id", "--inputs", "text", "--outcome", "account:exact", "--out", "out"];
  for (
    const args of [
      ["cases", "/dev/zero", "--format", "csv", ...base],
      ["cases", fifo, "--format", "csv", ...base],
      ["cases", dir, "--format", "csv", ...base],
      ["cases", "t.csv", ...base, "--shared", "/dev/zero"],
      ["cases", "t.csv", ...base, "--shared", fifo],
      ["cases", "t.csv", "--spec", "/dev/zero", "--out", "out"],
    ]
  ) {
    const r = await dvergr(dir, ...args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.err}`);
    assert.match(r.err, /not a regular file|is a directory|is a device|is a FIFO/, r.err);
  }
});

Deno.test("dvergr cases removes what an interrupted run left beside --out", async () => {
  const dir = await tempDir({ "t.csv": "id,text,account\nB1,a,4400\nB2,b,4410\n" });
  await Deno.mkdir(join(dir, "out.tmp-interrupted/cases/B1"), { recursive: true });
  await Deno.writeTextFile(join(dir, "out.tmp-interrupted/cases/B1/gold.edn"), "{}");
  await Deno.mkdir(join(dir, "out.old-interrupted"));
  const r = await dvergr(dir, "cases", "t.csv", ...JSON_FLAGS, "--out", "out");
  assert.equal(r.code, 0, r.err);
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  assert.deepEqual(names.sort(), ["out", "t.csv"]);
  const cert = toPlain(readEdn(await Deno.readTextFile(join(dir, "out/certification.edn"))));
  assert.equal((cert as { certified: number }).certified, 2);
});
