/**
 * Text from the bytes of a table or attachment: UTF-8 (with or without a byte-order
 * mark), UTF-16 with a byte-order mark (Excel's "Unicode text"), or the encoding the
 * user names. Text that is not UTF-8 is refused with a message saying how to convert it.
 */
import { DvergrError } from "../errors.ts";

/** The encoding names accepted for --encoding besides any WHATWG label. */
const ALIASES: Record<string, string> = {
  utf8: "utf-8",
  cp1252: "windows-1252",
  win1252: "windows-1252",
  ansi: "windows-1252",
  latin1: "iso-8859-1",
  "latin-1": "iso-8859-1",
  "iso8859-1": "iso-8859-1",
  "iso-latin-1": "iso-8859-1",
  "iso8859-15": "iso-8859-15",
  latin9: "iso-8859-15",
  utf16le: "utf-16le",
  utf16be: "utf-16be",
};

/**
 * The canonical name of an encoding, or a USAGE error listing common ones. Accepts
 * WHATWG labels (utf-8, windows-1252, iso-8859-1, iso-8859-15, utf-16le …) and the
 * aliases cp1252, latin1, ansi.
 */
export function encodingName(label: string): string {
  const l = label.trim().toLowerCase();
  const name = ALIASES[l] ?? l;
  if (name === "iso-8859-1") return name; // decoded byte by byte (see decodeWith)
  try {
    return new TextDecoder(name).encoding;
  } catch {
    throw new DvergrError("USAGE", `Cannot decode with --encoding "${label}": unknown encoding`, {
      hint: "Use utf-8, windows-1252 (Excel and DATEV on Windows), iso-8859-1, iso-8859-15 " +
        "or utf-16le",
    });
  }
}

function decodeWith(bytes: Uint8Array, name: string): string {
  if (name === "iso-8859-1") {
    // True ISO-8859-1: every byte is the code point of the same number. (WHATWG
    // decoders treat this label as windows-1252, which differs in 0x80–0x9F.)
    let out = "";
    for (let i = 0; i < bytes.length; i += 8192) {
      out += String.fromCharCode(...bytes.subarray(i, i + 8192));
    }
    return out;
  }
  return new TextDecoder(name).decode(bytes);
}

/** Offset of the first byte that is not part of valid UTF-8, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) [need, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [need, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [need, min] = [3, 0x10000];
    else return i;
    if (i + need >= n) return i; // truncated sequence at the end
    let cp = b & (need === 1 ? 0x1f : need === 2 ? 0x0f : 0x07);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if ((c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/**
 * Decodes a file's bytes as text. A UTF-8 or UTF-16 byte-order mark decides the
 * encoding (and is dropped); else `encoding` when given; else the bytes must be
 * UTF-8, or a TABLE_INVALID error names the line of the first foreign byte and says
 * how to convert the file. A PDF, an Office document (ZIP) or an image is refused by
 * its kind, and other text with NUL bytes as binary.
 */
export function decodeText(
  bytes: Uint8Array,
  opts: { file: string; encoding?: string; what?: string },
): string {
  const what = opts.what ?? "table";
  let text: string;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    text = decodeStrictUtf8(bytes.subarray(3), opts.file, what, 3);
  } else if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    text = new TextDecoder("utf-16le").decode(bytes.subarray(2));
  } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    text = new TextDecoder("utf-16be").decode(bytes.subarray(2));
  } else if (opts.encoding !== undefined && encodingName(opts.encoding) !== "utf-8") {
    text = decodeWith(bytes, encodingName(opts.encoding));
  } else {
    text = decodeStrictUtf8(bytes, opts.file, what, 0);
  }
  const nul = text.indexOf("\0");
  if (nul >= 0) {
    const line = text.slice(0, nul).split("\n").length;
    const kind = binaryKind(bytes);
    throw new DvergrError(
      "TABLE_INVALID",
      `Cannot read ${what} "${opts.file}": line ${line} holds a NUL byte, so it is not text` +
        (kind ? ` (it is ${kind.kind})` : ""),
      {
        hint: kind
          ? kind[what === "attachment" ? "attachment" : "table"]
          : what === "attachment"
          ? "Attachments are text files: extract the text first (e.g. pdftotext file.pdf file.txt)"
          : "Export the table as CSV, JSON lines or EDN text",
        details: { file: opts.file, line },
      },
    );
  }
  return text;
}

// File kinds a user may give where text belongs, by their first bytes.
const BINARY_KINDS: { magic: number[]; kind: string; table: string; attachment: string }[] = [
  {
    magic: [0x25, 0x50, 0x44, 0x46, 0x2d], // %PDF-
    kind: "a PDF document",
    table: "Export the table as CSV, JSON lines or EDN text",
    attachment: "Attachments are text: extract it first (pdftotext file.pdf file.txt) and " +
      "name the .txt file in the table",
  },
  {
    magic: [0x50, 0x4b, 0x03, 0x04], // PK.. (xlsx, docx, ods, odt are ZIP archives)
    kind: "a ZIP archive (an Office document such as .xlsx or .docx)",
    table: 'Save the sheet as CSV (File › Save as › "CSV UTF-8") and give that file',
    attachment: "Attachments are text: save the document as plain text (.txt) and name " +
      "that file in the table",
  },
  {
    magic: [0x89, 0x50, 0x4e, 0x47], // .PNG
    kind: "a PNG image",
    table: "Export the table as CSV, JSON lines or EDN text",
    attachment: "Attachments are text: give the text of the image (e.g. by OCR) as a .txt file",
  },
  {
    magic: [0xff, 0xd8, 0xff], // JPEG
    kind: "a JPEG image",
    table: "Export the table as CSV, JSON lines or EDN text",
    attachment: "Attachments are text: give the text of the image (e.g. by OCR) as a .txt file",
  },
];

function binaryKind(bytes: Uint8Array) {
  return BINARY_KINDS.find(({ magic }) => magic.every((b, i) => bytes[i] === b));
}

function refuseBinary(bytes: Uint8Array, file: string, what: string): void {
  const found = binaryKind(bytes);
  if (found === undefined) return;
  throw new DvergrError(
    "TABLE_INVALID",
    `Cannot read ${what} "${file}": it is ${found.kind}, not text`,
    { hint: what === "attachment" ? found.attachment : found.table, details: { file } },
  );
}

function decodeStrictUtf8(bytes: Uint8Array, file: string, what: string, skipped: number): string {
  const bad = firstInvalidUtf8(bytes);
  if (bad < 0) return new TextDecoder("utf-8").decode(bytes);
  refuseBinary(bytes, file, what);
  let line = 1;
  for (let i = 0; i < bad; i++) if (bytes[i] === 10) line++;
  const byte = bytes[bad];
  const as1252 = new TextDecoder("windows-1252").decode(bytes.subarray(bad, bad + 1));
  const hex = byte.toString(16).toUpperCase().padStart(2, "0");
  throw new DvergrError(
    "TABLE_INVALID",
    `Cannot read ${what} "${file}": it is not UTF-8 (line ${line} has the byte 0x${hex}, ` +
      `which Windows-1252 and ISO-8859-1 read as "${as1252}")`,
    {
      hint: `Excel and DATEV on Windows write Windows-1252: pass --encoding windows-1252, ` +
        `or convert the file: iconv -f WINDOWS-1252 -t UTF-8 "${file}" > "${utf8Name(file)}"`,
      details: { file, line, offset: bad + skipped },
    },
  );
}

function utf8Name(file: string): string {
  const slash = file.lastIndexOf("/");
  const dot = file.lastIndexOf(".");
  return dot > slash + 1 ? `${file.slice(0, dot)}.utf8${file.slice(dot)}` : `${file}.utf8`;
}
