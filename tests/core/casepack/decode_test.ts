import assert from "node:assert/strict";
import { decodeText, encodingName, firstInvalidUtf8 } from "../../../core/casepack/decode.ts";
import { DvergrError } from "../../../core/errors.ts";

const bytes = (...parts: (string | number[])[]) =>
  new Uint8Array(
    parts.flatMap((p) => typeof p === "string" ? [...new TextEncoder().encode(p)] : p),
  );

function decodeError(fn: () => unknown): DvergrError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof DvergrError, String(e));
    return e;
  }
  throw new assert.AssertionError({ message: "expected a DvergrError" });
}

Deno.test("decodeText() reads UTF-8 with and without a byte-order mark", () => {
  assert.equal(decodeText(bytes("Bürobedarf"), { file: "t" }), "Bürobedarf");
  assert.equal(decodeText(bytes([0xef, 0xbb, 0xbf], "a;b"), { file: "t" }), "a;b");
});

Deno.test("decodeText() reads UTF-16 by its byte-order mark", () => {
  assert.equal(decodeText(new Uint8Array([0xff, 0xfe, 0x61, 0, 0xfc, 0]), { file: "t" }), "aü");
  assert.equal(decodeText(new Uint8Array([0xfe, 0xff, 0, 0x61, 0, 0xfc]), { file: "t" }), "aü");
});

Deno.test("decodeText() refuses Windows-1252 naming the line, and decodes it when told", () => {
  const b = bytes("Konto;Text\r\n6815;B", [0xfc], "robedarf\r\n");
  const e = decodeError(() => decodeText(b, { file: "export.csv" }));
  assert.equal(e.code, "TABLE_INVALID");
  assert.equal(e.details?.line, 2);
  assert.match(e.message, /"export\.csv": it is not UTF-8 \(line 2 has the byte 0xFC, .*"ü"\)/);
  assert.match(e.hint!, /--encoding windows-1252/);
  assert.match(e.hint!, /iconv -f WINDOWS-1252 -t UTF-8 "export\.csv" > "export\.utf8\.csv"/);
  assert.equal(
    decodeText(b, { file: "t", encoding: "windows-1252" }),
    "Konto;Text\r\n6815;Bürobedarf\r\n",
  );
  assert.equal(decodeText(bytes([0x80]), { file: "t", encoding: "cp1252" }), "€");
  assert.equal(decodeText(bytes([0x80, 0xe4]), { file: "t", encoding: "latin1" }), "\u0080ä");
});

Deno.test("decodeText() refuses text with NUL bytes as binary", () => {
  const e = decodeError(() =>
    decodeText(bytes("%PDF-1.7\n", [0, 1, 2]), { file: "a.pdf", what: "attachment" })
  );
  assert.match(e.message, /attachment "a\.pdf": line 2 holds a NUL byte/);
  assert.match(e.hint!, /pdftotext/);
});

Deno.test("firstInvalidUtf8() finds overlong, truncated and surrogate sequences", () => {
  assert.equal(firstInvalidUtf8(bytes("añ€😀")), -1);
  assert.equal(firstInvalidUtf8(new Uint8Array([0x61, 0xc0, 0x80])), 1);
  assert.equal(firstInvalidUtf8(new Uint8Array([0x61, 0xe2, 0x82])), 1);
  assert.equal(firstInvalidUtf8(new Uint8Array([0xed, 0xa0, 0x80])), 0);
  assert.equal(firstInvalidUtf8(new Uint8Array([0xf4, 0x90, 0x80, 0x80])), 0);
});

Deno.test("encodingName() accepts aliases and refuses unknown encodings", () => {
  assert.equal(encodingName("CP1252"), "windows-1252");
  assert.equal(encodingName("latin1"), "iso-8859-1");
  assert.equal(encodingName("utf8"), "utf-8");
  assert.equal(decodeError(() => encodingName("klingon")).code, "USAGE");
});

Deno.test("decodeText() names a PDF, an Office file or an image instead of an encoding", () => {
  const pdf = decodeError(() =>
    decodeText(bytes("%PDF-1.4\n", [0xe2, 0xe3, 0xcf, 0xd3], "\n"), {
      file: "docs/r.pdf",
      what: "attachment",
    })
  );
  assert.match(pdf.message, /attachment "docs\/r\.pdf": it is a PDF document, not text/);
  assert.match(pdf.hint ?? "", /pdftotext/);
  assert.doesNotMatch(pdf.hint ?? "", /iconv|encoding/);
  const xlsx = decodeError(() =>
    decodeText(bytes("PK", [3, 4, 20, 0, 6, 0]), { file: "t.csv", encoding: "windows-1252" })
  );
  assert.match(xlsx.message, /line 1 holds a NUL byte, so it is not text \(it is a ZIP archive/);
  assert.match(xlsx.hint ?? "", /CSV/);
  const png = decodeError(() =>
    decodeText(bytes([0x89], "PNG\r\n", [0x1a, 0x0a]), { file: "a.png", what: "attachment" })
  );
  assert.match(png.message, /is a PNG image/);
});

Deno.test("decodeText() with --encoding utf-8 still refuses bytes that are not UTF-8", () => {
  const e = decodeError(() =>
    decodeText(bytes("a;b\n", [0xc4], "pfel;1\n"), { file: "t.csv", encoding: "UTF-8" })
  );
  assert.match(e.message, /line 2 has the byte 0xC4/);
  assert.equal(decodeText(bytes("Äpfel"), { file: "t.csv", encoding: "utf8" }), "Äpfel");
});
