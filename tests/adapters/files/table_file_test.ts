import assert from "node:assert/strict";
import { join } from "node:path";
import {
  casePackFromTable,
  readAttachmentFiles,
  readTableFile,
} from "../../../adapters/files/table_file.ts";
import { completeSpec, parseOutcome } from "../../../core/casepack/spec.ts";
import { DvergrError } from "../../../core/errors.ts";

async function layout(files: Record<string, string | Uint8Array>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "dvergr-table-" });
  for (const [p, c] of Object.entries(files)) {
    await Deno.mkdir(join(root, p, ".."), { recursive: true });
    if (typeof c === "string") await Deno.writeTextFile(join(root, p), c);
    else await Deno.writeFile(join(root, p), c);
  }
  return root;
}

Deno.test("readAttachmentFiles() reads only regular files at or below the table's directory", async () => {
  const root = await layout({
    "outside.txt": "secret",
    "t/table.csv": "x",
    "t/a.txt": "A",
    "t/sub/b.txt": "B",
    "t/dir/.keep": "",
  });
  await Deno.symlink(join(root, "outside.txt"), join(root, "t/link-out.txt"));
  await Deno.symlink(join(root, "t/a.txt"), join(root, "t/link-in.txt"));
  const got = await readAttachmentFiles(join(root, "t/table.csv"), [
    "a.txt",
    "sub/b.txt",
    "sub/../a.txt",
    "../outside.txt",
    join(root, "outside.txt"),
    join(root, "t/a.txt"),
    "link-out.txt",
    "link-in.txt",
    "dir",
    "missing.txt",
  ]);
  assert.deepEqual(Object.fromEntries(got), {
    "a.txt": "A",
    "sub/b.txt": "B",
    "sub/../a.txt": "A",
    [join(root, "t/a.txt")]: "A",
    "link-in.txt": "A",
  });
});

Deno.test("readAttachmentFiles() decodes with the encoding and refuses foreign bytes without it", async () => {
  const root = await layout({
    "table.csv": "x",
    "r.txt": new Uint8Array([0x47, 0x72, 0xfc, 0xdf]),
  });
  const table = join(root, "table.csv");
  await assert.rejects(
    () => readAttachmentFiles(table, ["r.txt"]),
    (e: unknown) =>
      e instanceof DvergrError && /attachment "r\.txt": it is not UTF-8/.test(e.message),
  );
  const got = await readAttachmentFiles(table, ["r.txt"], { encoding: "windows-1252" });
  assert.equal(got.get("r.txt"), "Grüß");
});

Deno.test("readTableFile() names a missing table and a directory", async () => {
  const root = await layout({ "d/x.csv/.keep": "" });
  for (const p of [join(root, "nope.csv"), join(root, "d/x.csv")]) {
    await assert.rejects(
      () => readTableFile(p, { shown: "given.csv" }),
      (e: unknown) =>
        e instanceof DvergrError && e.code === "NOT_FOUND" && e.message.includes('"given.csv"'),
    );
  }
});

Deno.test("casePackFromTable() reads the table and its attachments and builds the pack", async () => {
  const root = await layout({
    "cases.csv": "no;text;doc;k\n1;a;one.txt;x\n2;b;two.txt;y\n",
    "one.txt": "first",
  });
  const spec = completeSpec({
    name: "p",
    id: "no",
    inputs: ["text"],
    attachments: ["doc"],
    expected: [parseOutcome("k:exact")],
  });
  const { table, build } = await casePackFromTable(join(root, "cases.csv"), spec, {
    shown: "cases.csv",
  });
  assert.equal(table.file, "cases.csv");
  assert.deepEqual(build.certification.verdicts.map((v) => [v.id, v.reasons]), [
    ["1", []],
    ["2", [{ reason: "missing-attachment", columns: ["doc"] }]],
  ]);
  assert.equal(build.files?.get("cases/1/fixtures/docs/one.txt"), "first");
});
