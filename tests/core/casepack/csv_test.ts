import assert from "node:assert/strict";
import { detectDelimiter, parseCsv } from "../../../core/casepack/csv.ts";
import { DvergrError } from "../../../core/errors.ts";

const assertEquals = (a: unknown, b: unknown) => assert.deepEqual(a, b);
function assertThrows(fn: () => unknown, _type: typeof DvergrError): DvergrError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof DvergrError, `expected a DvergrError, got ${e}`);
    return e;
  }
  throw new assert.AssertionError({ message: "expected a DvergrError, nothing was thrown" });
}

const cells = (text: string, delimiter?: string) =>
  parseCsv(text, { delimiter }).map((r) => r.cells);

Deno.test("parseCsv() reads a comma table with a quoted semicolon", () => {
  assertEquals(cells('a,b\n1,"x;y"\n'), [["a", "b"], ["1", "x;y"]]);
});

Deno.test("parseCsv() drops the BOM and CRLF of a semicolon table", () => {
  assertEquals(cells("\uFEFFkonto;betrag\r\n4400;1.234,56\r\n"), [
    ["konto", "betrag"],
    ["4400", "1.234,56"],
  ]);
});

Deno.test("parseCsv() keeps doubled quotes and a line break inside a quoted field", () => {
  assertEquals(cells('t\n"say ""hi""\nthen go"\n'), [["t"], ['say "hi"\nthen go']]);
});

Deno.test("parseCsv() keeps CR inside quotes and drops it outside", () => {
  assertEquals(cells('a;b\r\n"x\r\ny";z\r\n'), [["a", "b"], ["x\r\ny", "z"]]);
  assertEquals(cells("a;b\r\n1\r;2\r\n"), [["a", "b"], ["1", "2"]]);
});

Deno.test("parseCsv() appends text after a closing quote and keeps a mid-field quote", () => {
  assertEquals(cells('a;b\n"ab"c;d"e\n'), [["a", "b"], ["abc", 'd"e']]);
});

Deno.test("parseCsv() skips blank lines and keeps a last row without newline", () => {
  assertEquals(cells("a;b\n\n1;2\n\n3;4"), [["a", "b"], ["1", "2"], ["3", "4"]]);
  assertEquals(cells("a;b\n;\n"), [["a", "b"], ["", ""]]);
});

Deno.test("parseCsv() gives the line each record starts on", () => {
  const recs = parseCsv('a;b\n\n"x\ny";1\n2;3\n', { delimiter: ";" });
  assertEquals(recs.map((r) => r.line), [1, 3, 5]);
});

Deno.test("parseCsv() names the line of an unclosed quote", () => {
  const e = assertThrows(
    () => parseCsv('a;b\n1;2\n3;"open\n4;5\n', { file: "t.csv" }),
    DvergrError,
  );
  assertEquals(e.code, "TABLE_INVALID");
  assertEquals(e.details?.line, 3);
  assertEquals(e.message.includes("line 3"), true);
  assertEquals(e.message.includes("t.csv"), true);
});

Deno.test("detectDelimiter() takes the most frequent of , ; tab on the first line", () => {
  assertEquals(detectDelimiter("a,b,c;d\n"), ",");
  assertEquals(detectDelimiter("a;b;c,d\n"), ";");
  assertEquals(detectDelimiter("a\tb\tc;d\n"), "\t");
  assertEquals(detectDelimiter("\uFEFFa;b\r\n1,2,3,4\r\n"), ";");
});

Deno.test("detectDelimiter() breaks ties toward the later of , ; tab", () => {
  assertEquals(detectDelimiter("a,b;c\n"), ";");
  assertEquals(detectDelimiter("a;b\tc\n"), "\t");
  assertEquals(detectDelimiter("abc\n1,2\n"), "\t");
  assertEquals(detectDelimiter('"x,y";z\n'), ";");
});

Deno.test("parseCsv() with a tab delimiter keeps commas and semicolons", () => {
  assertEquals(cells("a\tb\n1,5\tx;y\n"), [["a", "b"], ["1,5", "x;y"]]);
});

Deno.test("parseCsv() refuses a delimiter that is a quote or longer than one character", () => {
  assertThrows(() => parseCsv("a", { delimiter: '"' }), DvergrError);
  assertThrows(() => parseCsv("a", { delimiter: ";;" }), DvergrError);
});

Deno.test("parseCsv() takes the delimiter of an Excel sep= line and skips that line", () => {
  const recs = parseCsv("sep=,\r\na;b,c\r\n1;2,3\r\n");
  assertEquals(recs.map((r) => r.cells), [["a;b", "c"], ["1;2", "3"]]);
  assertEquals(recs.map((r) => r.line), [2, 3]);
  assertEquals(cells("\uFEFFsep=;\na;b\n"), [["a", "b"]]);
});

Deno.test("parseCsv() reads lines ending in CR alone as old Mac exports write them", () => {
  assertEquals(cells('a;b\r1;"x"\r2;y\r'), [["a", "b"], ["1", "x"], ["2", "y"]]);
});
