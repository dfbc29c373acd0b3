import assert from "node:assert/strict";
import { parseTable, tableFormatOf } from "../../../core/casepack/table.ts";
import { DvergrError } from "../../../core/errors.ts";
import { kw } from "../../../core/edn/values.ts";

const rowsOf = (text: string, format: "csv" | "tsv" | "jsonl" | "edn" = "csv") => {
  const t = parseTable(text, { file: "t", format });
  return { columns: t.columns, rows: t.rows.map((r) => r.values) };
};

function tableError(fn: () => unknown): DvergrError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof DvergrError && e.code === "TABLE_INVALID", String(e));
    return e;
  }
  throw new assert.AssertionError({ message: "expected a TABLE_INVALID error" });
}

Deno.test("parseTable() trims header names, pads short rows and keeps cells as written", () => {
  assert.deepEqual(rowsOf(" id ; text \n1; a \n2\n"), {
    columns: ["id", "text"],
    rows: [["1", " a "], ["2", ""]],
  });
});

Deno.test("parseTable() refuses two columns of one name, naming it; unnamed ones: the later wins", () => {
  const e = tableError(() => parseTable("k;v;k\n1;2;3\n", { file: "x.csv", format: "csv" }));
  assert.match(e.message, /column "k" twice \(columns 1 and 3\)/);
  assert.equal(e.details?.line, 1);
  assert.deepEqual(rowsOf("k;;v;\n1;;2;x\n"), { columns: ["k", "", "v"], rows: [["1", "x", "2"]] });
});

Deno.test("parseTable() drops empty surplus cells and refuses surplus text, naming the line", () => {
  assert.deepEqual(rowsOf("a;b\n1;2;;\n").rows, [["1", "2"]]);
  const e = tableError(() => parseTable("a;b\n1;2\n3;4;5\n", { file: "x.csv", format: "csv" }));
  assert.equal(e.details?.line, 3);
  assert.match(e.message, /^Cannot read "x\.csv": line 3 has 3 cells but the header has 2/);
  assert.ok(e.hint);
});

Deno.test("parseTable() numbers data rows without blank lines and gives their lines", () => {
  const t = parseTable("a;b\n\n1;2\n\n3;4\n", { file: "t", format: "csv" });
  assert.deepEqual(t.rows.map((r) => [r.row, r.line]), [[1, 3], [2, 5]]);
});

Deno.test("parseTable() reads a DATEV EXTF export by its second line", () => {
  const text = '"EXTF";700;21;"Buchungsstapel";13;20250130;;"RE";"";"";29098;55003\r\n' +
    "Umsatz (ohne Soll/Haben-Kz);Soll/Haben-Kennzeichen;Konto;Gegenkonto (ohne BU-Schlüssel);" +
    "BU-Schlüssel;Belegdatum;Belegfeld 1;Buchungstext\r\n" +
    '46,76;"S";1800;6815;"9";0101;"B0001";"Amazon EU S.a.r.l."\r\n';
  const t = parseTable(text, { file: "EXTF_Buchungsstapel.csv", format: "csv" });
  assert.equal(t.columns[3], "Gegenkonto (ohne BU-Schlüssel)");
  assert.deepEqual(t.rows.map((r) => [r.row, r.line, r.values[6], r.values[7]]), [
    [1, 3, "B0001", "Amazon EU S.a.r.l."],
  ]);
});

Deno.test("parseTable() refuses a CSV without a header", () => {
  tableError(() => parseTable("\uFEFF\r\n\r\n", { file: "t", format: "csv" }));
});

Deno.test("parseTable() reads JSON lines with JSON types and the union of keys", () => {
  const t = rowsOf(
    '\uFEFF{"id": 1, "a": "x"}\r\n\r\n{"id": "2", "b": [1, 2], "c": null}\n',
    "jsonl",
  );
  assert.deepEqual(t.columns, ["id", "a", "b", "c"]);
  assert.deepEqual(t.rows, [[1, "x", undefined, undefined], ["2", undefined, [1, 2], null]]);
});

Deno.test("parseTable() names the JSON line that is not an object or not JSON", () => {
  const e = tableError(() =>
    parseTable('{"a": 1}\n\n"text"\n', { file: "t.jsonl", format: "jsonl" })
  );
  assert.equal(e.details?.line, 3);
  assert.match(e.message, /line 3 is a string, expected a JSON object/);
  const f = tableError(() =>
    parseTable('{"a": 1}\n{"a": \n', { file: "t.jsonl", format: "jsonl" })
  );
  assert.match(f.message, /line 2 is not JSON/);
});

Deno.test("parseTable() reads an EDN vector of maps, keyword keys by their name", () => {
  const t = rowsOf('[{:id "1" :my/text "a"} {"id" 2 :k :x}]', "edn");
  assert.deepEqual(t.columns, ["id", "text", "k"]);
  assert.deepEqual(t.rows, [["1", "a", undefined], [2, undefined, kw("x")]]);
  tableError(() => parseTable('{:id "1"}', { file: "t.edn", format: "edn" }));
  const e = tableError(() => parseTable('[{:id "1"} [1]]', { file: "t.edn", format: "edn" }));
  assert.match(e.message, /element 2/);
});

Deno.test("tableFormatOf() goes by the extension, and refuses a spreadsheet with a hint", () => {
  assert.equal(tableFormatOf("a/b.CSV"), "csv");
  assert.equal(tableFormatOf("export"), "csv");
  assert.equal(tableFormatOf("x.txt"), "csv");
  assert.equal(tableFormatOf("x.tsv"), "tsv");
  assert.equal(tableFormatOf("x.ndjson"), "jsonl");
  assert.equal(tableFormatOf("x.edn"), "edn");
  assert.equal(tableFormatOf("x.dat", "jsonl"), "jsonl");
  const e = tableError(() => tableFormatOf("Buchungen.xlsx"));
  assert.equal(e.message, 'Not a table format: xlsx ("Buchungen.xlsx")');
  assert.match(e.hint!, /CSV UTF-8/);
});
