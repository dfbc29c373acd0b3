import assert from "node:assert/strict";
import { join } from "node:path";
import { casesArgs, dvergrIn as dvergr, tempDirWith } from "../helpers/cli.ts";
import { readBundleDir } from "../../adapters/files/bundle_dir.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { bundleProblems, parseBundle } from "../../core/bundle/parse.ts";
import { calibrate } from "../../core/calibrate/calibrate.ts";
import { readEdn } from "../../core/edn/read.ts";
import { toPlain } from "../../core/edn/plain.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import {
  bookingsCsv,
  kontenrahmenText,
  makeBookings,
} from "../../examples/tables/make_bookings.ts";

const TABLES = new URL("../../examples/tables/", import.meta.url).pathname;

const tempDir = (files: Record<string, string | Uint8Array> = {}) =>
  tempDirWith(files, "dvergr-cases-");

const plain = (text: string) => toPlain(readEdn(text));

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function assertCalibrates(dir: string): Promise<void> {
  const fb = await readBundleDir(dir);
  assert.deepEqual(bundleProblems(fb.files), []);
  const pool = createCheckerPool({ workers: 1 });
  try {
    const result = await calibrate(parseBundle(fb), pool);
    assert.deepEqual(result.problems, []);
    assert.equal(result.ok, true);
  } finally {
    pool.close();
  }
}

const BOOKING_ARGS = [
  "--id",
  "Beleg",
  "--inputs",
  "Datum,Betrag,Buchungstext",
  "--outcome",
  "Gegenkonto:exact",
  "--outcome",
  "BU:exact",
  "--outcome",
  "Netto:number:0.01",
];

Deno.test("make_bookings.ts reproduces examples/tables/bookings.csv and kontenrahmen.txt", async () => {
  assert.equal(await Deno.readTextFile(join(TABLES, "bookings.csv")), bookingsCsv(makeBookings()));
  assert.equal(await Deno.readTextFile(join(TABLES, "kontenrahmen.txt")), kontenrahmenText());
});

Deno.test("dvergr cases certifies the example bookings with the counts of its README", async () => {
  const out = join(await tempDir(), "bookings");
  const r = await dvergr(
    TABLES,
    "cases",
    "bookings.csv",
    ...BOOKING_ARGS,
    "--shared",
    "kontenrahmen.txt",
    "--out",
    out,
  );
  assert.equal(r.code, 0, r.err);
  const counts = "325 cases: 319 certified; excluded: 2 conflicting-outcomes, 2 duplicate-id, " +
    "1 outcome-not-gradable, 1 unlabelled";
  assert.equal(r.out.split("\n")[0], counts);
  const readme = await Deno.readTextFile(join(TABLES, "README.md"));
  assert.ok(readme.includes(counts), "README states the counts");
  assert.match(r.out, /^ {2}B0011 +line 13 +unlabelled \(Gegenkonto\)$/m);
  assert.match(r.out, /dvergr calibrate .*bookings$/m);
  assert.equal(
    await Deno.readTextFile(join(out, "fixtures/docs/kontenrahmen.txt")),
    kontenrahmenText(),
  );
  const cert = plain(await Deno.readTextFile(join(out, "certification.edn"))) as {
    excluded: { id: string }[];
  };
  assert.deepEqual(cert.excluded.map((e) => e.id), [
    "B0006",
    "B0011",
    "B0020",
    "B0323",
    "B0323",
    "B0325",
  ]);
  // Row 6 holds a line break inside quotes; its twin (B0325) conflicts with it.
  assert.equal(await exists(join(out, "cases/B0006")), false);
  assert.ok(await exists(join(out, "cases/B0007/gold.edn")));
  await assertCalibrates(out);
});

Deno.test("dvergr cases --json gives cases, certified, byReason, excluded and out", async () => {
  const dir = await tempDir({
    "inv.csv": "no,vendor,account\r\n1,ACME,4930\r\n1,Beta,4931\r\n3,Gamma,\r\n4,Delta,4940\r\n",
  });
  const r = await dvergr(
    dir,
    ...casesArgs("inv.csv", "account:exact", "pack", { id: "no", inputs: "vendor" }),
    "--json",
  );
  assert.equal(r.code, 0, r.err + r.out);
  assert.deepEqual(JSON.parse(r.out), {
    format: "dvergr-cases/1",
    cases: 4,
    certified: 1,
    byReason: { certified: 1, "duplicate-id": 2, unlabelled: 1 },
    excluded: [
      { id: "1", reasons: [{ reason: "duplicate-id" }] },
      { id: "1", reasons: [{ reason: "duplicate-id" }] },
      { id: "3", reasons: [{ reason: "unlabelled", fields: ["account"] }] },
    ],
    out: "pack",
  });
  assert.ok(await exists(join(dir, "pack/cases/4/gold.edn")));
});

const EXCEL_TABLE = "\uFEFFInvoice No;Vendor;Text;Document;Account;Amount;Tags;Due Date\r\n" +
  'R-1;ACME GmbH;"Paper; toner";docs/r1.txt;6815;119,00;"office, paper";14.03.2025\r\n' +
  'R-2;Beta AG;"Said ""urgent""\nsecond line";docs\\r2.txt;6800;"1.234,56";post;2025-03-15\r\n' +
  "R-3;Gamma;Chairs;;0650;300;furniture;2025-03-16\r\n" +
  "R-4;Delta;Desk;../secret.txt;0650;400;furniture;2025-03-17\r\n" +
  "R-5;Eta;Lamp;link.txt;0650;50;furniture;2025-03-18\r\n" +
  "R-6;Theta;Misc;docs/r1.txt;6300;about 20;misc;someday\r\n" +
  "R-7;Iota;Stamps;/etc/hostname;6800;12,50;post;2025-03-19\r\n";

const EXCEL_ARGS = [
  "--id",
  "Invoice No",
  "--inputs",
  "Vendor,Text",
  "--attachments",
  "Document",
  "--outcome",
  "Account:exact",
  "--outcome",
  "Amount:number:0.01",
  "--outcome",
  "Tags:set",
  "--outcome",
  "Due Date:date",
];

Deno.test("dvergr cases reads an Excel CSV with attachments, never from outside its directory", async () => {
  const root = await tempDir({ "secret.txt": "outside" });
  const dir = join(root, "export");
  await Deno.mkdir(join(dir, "docs"), { recursive: true });
  await Deno.writeTextFile(join(dir, "cases.csv"), EXCEL_TABLE);
  await Deno.writeTextFile(join(dir, "docs/r1.txt"), "Rechnung R-1: Papier und Toner");
  await Deno.writeTextFile(join(dir, "docs/r2.txt"), "Rechnung R-2: Porto");
  await Deno.symlink(join(root, "secret.txt"), join(dir, "link.txt"));
  const r = await dvergr(dir, "cases", "cases.csv", ...EXCEL_ARGS, "--out", "../pack", "--json");
  assert.equal(r.code, 0, r.err + r.out);
  const report = JSON.parse(r.out);
  assert.deepEqual(report.excluded, [
    { id: "R-3", reasons: [{ reason: "missing-attachment", columns: ["Document"] }] },
    { id: "R-4", reasons: [{ reason: "missing-attachment", columns: ["Document"] }] },
    { id: "R-5", reasons: [{ reason: "missing-attachment", columns: ["Document"] }] },
    {
      id: "R-6",
      reasons: [{ reason: "outcome-not-gradable", fields: ["Amount", "Due Date"] }],
    },
    { id: "R-7", reasons: [{ reason: "missing-attachment", columns: ["Document"] }] },
  ]);
  const pack = join(root, "pack");
  assert.deepEqual(plain(await Deno.readTextFile(join(pack, "cases/R-2/fixtures/docs/case.edn"))), {
    Vendor: "Beta AG",
    Text: 'Said "urgent"\nsecond line',
  });
  assert.equal(
    await Deno.readTextFile(join(pack, "cases/R-2/fixtures/docs/r2.txt")),
    "Rechnung R-2: Porto",
  );
  const w = plain(await Deno.readTextFile(join(pack, "workflow.edn"))) as { task: string };
  assert.ok(w.task.includes("Its documents are in /docs/ (Document column)."), w.task);
  assert.ok(w.task.includes('- "Due Date" (a date, yyyy-mm-dd)'), w.task);
  await assertCalibrates(pack);
});

Deno.test("dvergr cases --spec gives the same bundle as the flags, and flags override it", async () => {
  const spec = `{:name "invoices"
 :id "Invoice No"
 :inputs ["Vendor" "Text"]
 :attachments ["Document"]
 :expected {"Account" {:rule :exact :doc "the SKR04 account"}
            "Amount" {:rule :number :tolerance 0.01}
            "Tags" {:rule :set}
            "Due Date" {:rule :date}}
 :shared {"/docs/accounts.txt" "6815 Bürobedarf"}}`;
  const dir = await tempDir({
    "cases.csv": EXCEL_TABLE,
    "docs/r1.txt": "R1",
    "docs/r2.txt": "R2",
    "spec.edn": spec,
  });
  const a = await dvergr(dir, "cases", "cases.csv", "--spec", "spec.edn", "--out", "a");
  assert.equal(a.code, 0, a.err);
  const files = (await readBundleDir(join(dir, "a"))).files;
  assert.equal(files.get("fixtures/docs/accounts.txt"), "6815 Bürobedarf");
  const w = plain(files.get("workflow.edn")!) as { title: string; task: string };
  assert.equal(w.title, "invoices");
  assert.ok(w.task.includes('- "Account": the SKR04 account\n'), w.task);
  const b = await dvergr(
    dir,
    "cases",
    "cases.csv",
    "--spec",
    "spec.edn",
    "--outcome",
    "Account:ci",
    "--title",
    "Coding",
    "--out",
    "b",
  );
  assert.equal(b.code, 0, b.err);
  const wb = plain(await Deno.readTextFile(join(dir, "b/workflow.edn"))) as {
    title: string;
    params: { fields: Record<string, unknown> };
  };
  assert.equal(wb.title, "Coding");
  assert.deepEqual(wb.params.fields, { Account: { rule: "ci" } });
});

Deno.test("dvergr cases refuses Windows-1252 text with a hint, and decodes it with --encoding", async () => {
  const bytes = new Uint8Array([
    ...new TextEncoder().encode("Beleg;Text;Konto\r\nB1;B"),
    0xfc, // ü in Windows-1252
    ...new TextEncoder().encode("robedarf;6815\r\nB2;Porto;6800\r\n"),
  ]);
  const dir = await tempDir({ "datev.csv": bytes });
  const args = [
    "cases",
    "datev.csv",
    "--id",
    "Beleg",
    "--inputs",
    "Text",
    "--outcome",
    "Konto:exact",
  ];
  const r = await dvergr(dir, ...args, "--out", "x");
  assert.equal(r.code, 2);
  assert.match(r.err, /error\[TABLE_INVALID\]: .*"datev\.csv".* not UTF-8 \(line 2/);
  assert.match(r.err, /hint: .*--encoding windows-1252.*iconv -f WINDOWS-1252 -t UTF-8/);
  assert.equal(await exists(join(dir, "x")), false);
  const ok = await dvergr(dir, ...args, "--encoding", "windows-1252", "--out", "x");
  assert.equal(ok.code, 0, ok.err);
  assert.equal(
    await Deno.readTextFile(join(dir, "x/cases/B1/fixtures/docs/case.edn")),
    '{"Text" "Bürobedarf"}\n',
  );
});

Deno.test("dvergr cases reads UTF-16 Unicode text, .tsv, JSON lines and EDN tables", async () => {
  const utf16 = (s: string) => {
    const out = new Uint8Array(2 + s.length * 2);
    out.set([0xff, 0xfe]);
    for (let i = 0; i < s.length; i++) {
      out[2 + 2 * i] = s.charCodeAt(i) & 0xff;
      out[3 + 2 * i] = s.charCodeAt(i) >> 8;
    }
    return out;
  };
  const dir = await tempDir({
    "unicode.txt": utf16("id\ttext\tk\r\n1\tä, b\tx\r\n2\tc\ty\r\n"),
    "t.tsv": "id\ttext\tk\n1\ta;b\tx\n2\tc\ty\n",
    "t.jsonl": '{"id": 1, "text": "a", "k": 4210}\n\n{"id": 2, "text": "c", "k": "y"}\r\n',
    "t.edn": '[{:id "1" :text "a" :k "x"} {:id 2 :text "c" :k :y}]',
  });
  for (const table of ["unicode.txt", "t.tsv", "t.jsonl", "t.edn"]) {
    const out = "out-" + table.replace(".", "-");
    const r = await dvergr(dir, ...casesArgs(table, "k:exact", out), "--json");
    assert.equal(r.code, 0, table + r.err + r.out);
    assert.equal(JSON.parse(r.out).certified, 2, table);
  }
  assert.equal(
    await Deno.readTextFile(join(dir, "out-unicode-txt/cases/1/fixtures/docs/case.edn")),
    '{"text" "ä, b"}\n',
  );
  assert.equal(
    await Deno.readTextFile(join(dir, "out-t-jsonl/cases/1/gold.edn")),
    '{:expected {"k" 4210}}\n',
  );
  await assertCalibrates(join(dir, "out-t-jsonl"));
});

Deno.test("dvergr cases names the line of a malformed table", async () => {
  const dir = await tempDir({
    "quote.csv": 'id;text;k\n1;a;x\n2;"open;y\n3;c;z\n',
    "wide.csv": "id;text;k\n1;a;x\n2;b;y;surplus\n",
    "trailing.csv": "id;text;k\n1;a;x;\n2;b;y;;\n",
    "bad.jsonl": '{"id": 1, "text": "a", "k": "x"}\n["id", 2]\n',
    "broken.jsonl": '{"id": 1, "text": "a", "k": "x"}\n{"id": 2,\n',
  });
  const cases = (t: string) => dvergr(dir, ...casesArgs(t, "k:exact", "o-" + t));
  const expect: [string, RegExp][] = [
    ["quote.csv", /"quote\.csv".*line 3 opens a quoted field that is never closed/],
    ["wide.csv", /"wide\.csv": line 3 has 4 cells but the header has 3/],
    ["bad.jsonl", /"bad\.jsonl": line 2 is an array, expected a JSON object/],
    ["broken.jsonl", /"broken\.jsonl": line 2 is not JSON/],
  ];
  for (const [t, re] of expect) {
    const r = await cases(t);
    assert.equal(r.code, 2, t);
    assert.match(r.err, re);
    assert.match(r.err, /^hint: /m);
    assert.equal(await exists(join(dir, "o-" + t)), false);
  }
  const ok = await cases("trailing.csv");
  assert.equal(ok.code, 0, ok.err);
});

Deno.test("dvergr cases names an unknown column, where it was named, and a near match", async () => {
  const dir = await tempDir({ "t.csv": "Beleg;Text;Gegenkonto\nB1;x;6815\n" });
  const r = await dvergr(
    dir,
    ...casesArgs("t.csv", "gegenkonto:exact", "o", { id: "Beleg", inputs: "Text" }),
  );
  assert.equal(r.code, 2);
  assert.match(
    r.err,
    /error\[SPEC_INVALID\]: .*column "gegenkonto" \(--outcome\) is not in "t\.csv"/,
  );
  assert.match(r.err, /hint: Did you mean "Gegenkonto"\?/);
});

Deno.test("dvergr cases refuses bad flags with exit 2", async () => {
  const dir = await tempDir({ "t.csv": "id;text;k\n1;x;y\n" });
  const base = ["cases", "t.csv", "--id", "id", "--inputs", "text"];
  const runs: [string[], RegExp][] = [
    [[...base, "--outcome", "k", "--out", "o"], /--outcome "k": no rule/],
    [[...base, "--outcome", "k:fuzzy", "--out", "o"], /--outcome "k:fuzzy"/],
    [[...base, "--outcome", "k:exact:0.1", "--out", "o"], /tolerance applies to the number rule/],
    [[...base, "--outcome", "k:exact"], /needs --out/],
    [[...base, "--outcome", "text:exact", "--out", "o"], /both an input and an expected outcome/],
    [
      ["cases", "t.csv", "--inputs", "text", "--outcome", "k:exact", "--out", "o"],
      /no column names a case/,
    ],
    [[...base, "--outcome", "k:exact", "--out", "o", "--delimiter", ";;"], /--delimiter/],
    [
      [...base, "--outcome", "k:exact", "--out", "o", "--encoding", "klingon"],
      /--encoding "klingon"/,
    ],
    [
      ["cases", "t.xlsx", "--id", "id", "--inputs", "text", "--outcome", "k:exact", "--out", "o"],
      /Not a table format: xlsx/,
    ],
    [
      ["cases", "nope.csv", "--id", "id", "--inputs", "text", "--outcome", "k:exact", "--out", "o"],
      /no such file/,
    ],
  ];
  for (const [args, re] of runs) {
    const r = await dvergr(dir, ...args);
    assert.equal(r.code, 2, args.join(" ") + r.err);
    assert.match(r.err, re);
  }
  assert.equal(await exists(join(dir, "o")), false);
});

Deno.test("dvergr cases refuses a non-empty --out unless --force", async () => {
  const dir = await tempDir({ "t.csv": "id;text;k\n1;x;y\n", "o/old.txt": "keep" });
  const args = [
    "cases",
    "t.csv",
    "--id",
    "id",
    "--inputs",
    "text",
    "--outcome",
    "k:exact",
    "--out",
    "o",
  ];
  const r = await dvergr(dir, ...args);
  assert.equal(r.code, 2);
  assert.match(r.err, /error\[TARGET_EXISTS\]/);
  assert.equal(await Deno.readTextFile(join(dir, "o/old.txt")), "keep");
  const f = await dvergr(dir, ...args, "--force");
  assert.equal(f.code, 0, f.err);
  assert.equal(await exists(join(dir, "o/old.txt")), false);
  assert.ok(await exists(join(dir, "o/cases/1/gold.edn")));
});

Deno.test("dvergr cases says why when no case is certified, writes nothing, exit 1", async () => {
  const dir = await tempDir({ "t.csv": "id;text;k\n1;x;a\n2;x;b\n;y;c\n" });
  const r = await dvergr(dir, ...casesArgs("t.csv", "k:exact", "o"));
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /error\[NOT_CERTIFIED\]: No case of "t\.csv" is certified, so nothing was written: 3 cases: 0 certified; excluded: 2 conflicting-outcomes, 1 no-id/,
  );
  assert.match(r.err, /hint: Rows with the same inputs have different outcomes/);
  assert.equal(await exists(join(dir, "o")), false);
  const j = await dvergr(dir, ...casesArgs("t.csv", "k:exact", "o"), "--json");
  assert.equal(j.code, 1);
  assert.equal(JSON.parse(j.out).error.details.byReason["conflicting-outcomes"], 2);
});

Deno.test("dvergr cases --help describes the command and is listed in dvergr --help", async () => {
  const h = await dvergr(TABLES, "cases", "--help");
  assert.equal(h.code, 0);
  assert.match(h.out, /^dvergr cases TABLE --id COL/);
  assert.match(h.out, /--outcome col:rule\[:tolerance\]/);
  const main = await dvergr(TABLES, "--help");
  assert.match(main.out, /^ {2}cases +turn a table of historical cases/m);
});

Deno.test("dvergr cases writes cases whose ids are .git, dots or longer than a file name", async () => {
  const long = "Buchung " + "x".repeat(400);
  const dir = await tempDir({
    "t.csv": `id,x,y\n.git,a,1\n..,b,2\n"${long}",c,3\n"${long}y",d,4\n`,
  });
  const r = await dvergr(
    dir,
    "cases",
    "t.csv",
    ...["--id", "id", "--inputs", "x", "--outcome", "y:exact", "--out", "out", "--json"],
  );
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).certified, 4);
  const ids = [];
  for await (const e of Deno.readDir(join(dir, "out", "cases"))) ids.push(e.name);
  assert.equal(ids.length, 4);
  assert.ok(ids.includes("_git") && ids.includes("__"), ids.join(" "));
  assert.ok(ids.every((id) => id.length <= 200));
  await assertCalibrates(join(dir, "out"));
});

Deno.test("dvergr cases --force never replaces a directory holding its table, spec or attachments", async () => {
  const dir = await tempDir({
    "t.csv": "id;text;doc;k\n1;x;docs/a.txt;y\n",
    "docs/a.txt": "Rechnung",
    "spec/s.edn": '{:id "id" :inputs ["text"] :expected {"k" {:rule :exact}}}',
  });
  const base = ["cases", "t.csv", "--attachments", "doc", "--force"];
  const flags = ["--id", "id", "--inputs", "text", "--outcome", "k:exact"];
  for (
    const args of [
      [...base, ...flags, "--out", "."],
      [...base, ...flags, "--out", "docs"],
      [...base, "--spec", "spec/s.edn", "--out", "spec"],
    ]
  ) {
    const r = await dvergr(dir, ...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.err, /error\[TARGET_EXISTS\].*(holds|would delete)/, r.err);
    assert.equal(await Deno.readTextFile(join(dir, "t.csv")), "id;text;doc;k\n1;x;docs/a.txt;y\n");
    assert.equal(await Deno.readTextFile(join(dir, "docs/a.txt")), "Rechnung");
    assert.ok(await exists(join(dir, "spec/s.edn")));
  }
  const ok = await dvergr(dir, ...base, ...flags, "--out", "pack");
  assert.equal(ok.code, 0, ok.err);
});

Deno.test("dvergr cases --room writes the bundle into the room as one commit, with no directory tree", async () => {
  const home = await tempDir();
  try {
    assert.equal((await dvergr(home, "room", "create", "books", "--home", home)).code, 0);
    const before = new Set<string>();
    for await (const e of Deno.readDir(home)) before.add(e.name);
    const into = ["--room", "books", "--home", home];
    const shared = ["--shared", "kontenrahmen.txt"];
    const r = await dvergr(
      TABLES,
      "cases",
      "bookings.csv",
      ...BOOKING_ARGS,
      ...shared,
      ...into,
      "--json",
    );
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out);
    assert.equal(out.certified, 319);
    assert.equal(out.room, "books");
    assert.equal(out.bundle, "bookings");
    assert.match(out.commit, /^[0-9a-f]{40}$/);
    // Nothing but the home's own files appeared: no bundle directory anywhere.
    const after = new Set<string>();
    for await (const e of Deno.readDir(home)) after.add(e.name);
    assert.deepEqual([...after].filter((n) => !before.has(n) && n !== "state.kv"), []);
    assert.equal(await exists(join(TABLES, "bookings")), false);
    const fromRoom = await openHome(home);
    try {
      const files = await fromRoom.rooms.readFiles("books", "workflows/bookings");
      assert.equal(files.size, 643);
      assert.ok(files.has("workflows/bookings/cases/B0007/gold.edn"));
      assert.deepEqual(
        (await fromRoom.rooms.log("books")).map((c) => c.message),
        ["Case pack bookings from bookings.csv (319 cases)", "Create room books"],
      );
    } finally {
      await fromRoom.close();
    }
    const calibrated = await dvergr(TABLES, "calibrate", "books/bookings", "--home", home);
    assert.equal(calibrated.code, 0, calibrated.err + calibrated.out);

    // Once there, it is not written over without --force; with --force it is replaced.
    const again = ["cases", "bookings.csv", ...BOOKING_ARGS, "--room", "books", "--home", home];
    const refused = await dvergr(TABLES, ...again);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /workflows\/bookings\/ already holds files/);
    const forced = await dvergr(TABLES, ...again, "--force");
    assert.equal(forced.code, 0, forced.err);
    const missing = await dvergr(
      TABLES,
      "cases",
      "bookings.csv",
      ...BOOKING_ARGS,
      "--room",
      "nope",
      "--home",
      home,
    );
    assert.equal(missing.code, 2);
    assert.match(missing.err, /no such room/);
    const both = await dvergr(TABLES, ...again, "--out", join(home, "x"));
    assert.equal(both.code, 2);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/** The command lines under "Next:" of a cases summary, as shell words after "dvergr". */
function nextCommands(out: string): string[][] {
  const lines = out.slice(out.indexOf("Next:\n") + 6).trimEnd().split("\n");
  return lines.map((line) => {
    const words: string[] = [];
    // Single quotes as a shell reads them; a # starts a comment.
    for (const m of line.split(" #")[0].matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) {
      words.push(m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2]);
    }
    assert.equal(words[0], "dvergr", line);
    return words.slice(1);
  });
}

Deno.test("dvergr cases prints next commands that run as printed, for a directory and a room", async () => {
  const dir = await tempDir({
    "inv.csv": "no,vendor,account\r\n1,ACME,4930\r\n2,Beta,4931\r\n3,Gamma,4940\r\n",
  });
  const r = await dvergr(
    dir,
    ...casesArgs("inv.csv", "account:exact", "my pack", { id: "no", inputs: "vendor" }),
  );
  assert.equal(r.code, 0, r.err + r.out);
  const next = nextCommands(r.out);
  assert.deepEqual(next.map((c) => c.slice(0, 2)), [
    ["check", "my pack"],
    ["calibrate", "my pack"],
    ["benchmark", "my pack"],
  ]);
  for (const args of next) {
    const ran = await dvergr(dir, ...args);
    assert.equal(ran.code, 0, `${args.join(" ")}: ${ran.out}${ran.err}`);
  }

  const home = join(dir, "home");
  assert.equal((await dvergr(dir, "room", "create", "books", "--home", home)).code, 0);
  const room = await dvergr(
    dir,
    "cases",
    "inv.csv",
    "--id",
    "no",
    "--inputs",
    "vendor",
    "--outcome",
    "account:exact",
    "--room",
    "books",
    "--home",
    home,
  );
  assert.equal(room.code, 0, room.err + room.out);
  const inRoom = nextCommands(room.out);
  assert.deepEqual(inRoom[2].slice(0, 4), ["benchmark", "books/inv", "--home", home]);
  for (const args of inRoom) {
    const ran = await dvergr(dir, ...args);
    assert.equal(ran.code, 0, `${args.join(" ")}: ${ran.out}${ran.err}`);
  }
});
