/**
 * The CSV dialect of case packs (docs/compatibility.md §6.1), as Excel and DATEV write it:
 * a byte-order mark, `,` `;` or tab (given, or the one the first line has most of),
 * quoted fields holding delimiters, doubled quotes and line breaks, CRLF.
 */
import { DvergrError } from "../errors.ts";

/** One parsed record: its cells and the (1-based) line it starts on. */
export interface CsvRecord {
  cells: string[];
  line: number;
}

/** The delimiters auto-detection chooses from, in tie-breaking order (later wins). */
export const DETECTABLE_DELIMITERS = [",", ";", "\t"] as const;

/**
 * The delimiter of a CSV text: the most frequent of `,` `;` tab on its first line
 * (not quote-aware); a tie goes to the later of `,` `;` tab, so a line without any
 * delimiter selects tab.
 */
export function detectDelimiter(text: string): string {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const nl = body.indexOf("\n");
  const first = nl < 0 ? body : body.slice(0, nl);
  let best: string = DETECTABLE_DELIMITERS[0];
  let bestCount = -1;
  for (const d of DETECTABLE_DELIMITERS) {
    const n = first.split(d).length - 1;
    if (n >= bestCount) {
      best = d;
      bestCount = n;
    }
  }
  return best;
}

const QUOTE = 34;
const LF = 10;
const CR = 13;

/**
 * Parses CSV text into records. A `"` at the very start of a field opens quoted mode
 * (`""` is a quote, a lone `"` closes it); outside quotes CR is dropped and LF ends the
 * record; blank lines are skipped. An unclosed quote is a TABLE_INVALID error naming
 * the line where it opened.
 *
 * Two conventions of spreadsheet exports beyond the reference dialect: a first line
 * `sep=;` (Excel's delimiter hint) names the delimiter and is not a record, and a text
 * whose lines end in CR alone (old Mac exports) has its CRs read as line breaks.
 */
export function parseCsv(
  text: string,
  opts: { delimiter?: string; file?: string } = {},
): CsvRecord[] {
  const file = opts.file ?? "table";
  if (text.indexOf("\n") < 0 && text.indexOf("\r") >= 0) text = text.replaceAll("\r", "\n");
  let hinted: string | undefined;
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const sep = /^sep=([^\r\n])\r?(\n|$)/.exec(text.slice(start, start + 8));
  if (sep) {
    hinted = sep[1];
    start += sep[0].length;
  }
  const delimiter = opts.delimiter ?? hinted ?? detectDelimiter(text.slice(start));
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === "\n" || delimiter === "\r") {
    throw new DvergrError(
      "TABLE_INVALID",
      `Cannot read "${file}" as CSV: the delimiter ${
        JSON.stringify(delimiter)
      } is not one character other than a quote or a line break`,
      { hint: 'Pass --delimiter ";" (or ",", "tab")', details: { file } },
    );
  }
  const delim = delimiter.charCodeAt(0);
  const records: CsvRecord[] = [];
  const n = text.length;
  let line = sep ? 2 : 1;
  let recordLine = line;
  let cells: string[] = [];
  let field = "";
  let fieldStart = true;
  let quoted = false;
  let quoteLine = 0;
  // Unquoted text is appended in slices [runStart, i) rather than char by char.
  let runStart = start;

  const endRecord = () => {
    if (!(cells.length === 0 && field === "")) {
      cells.push(field);
      records.push({ cells, line: recordLine });
    }
    cells = [];
    field = "";
    fieldStart = true;
  };

  let i = start;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (quoted) {
      if (c === QUOTE) {
        field += text.slice(runStart, i);
        if (text.charCodeAt(i + 1) === QUOTE) {
          field += '"';
          i += 2;
        } else {
          quoted = false;
          i += 1;
        }
        runStart = i;
        continue;
      }
      if (c === LF) line++;
      i++;
      continue;
    }
    if (c === QUOTE && fieldStart) {
      quoted = true;
      quoteLine = line;
      fieldStart = false;
      i++;
      runStart = i;
      continue;
    }
    if (c === delim) {
      field += text.slice(runStart, i);
      cells.push(field);
      field = "";
      fieldStart = true;
      i++;
      runStart = i;
      continue;
    }
    if (c === CR) {
      field += text.slice(runStart, i);
      i++;
      runStart = i;
      continue;
    }
    if (c === LF) {
      field += text.slice(runStart, i);
      endRecord();
      line++;
      recordLine = line;
      i++;
      runStart = i;
      continue;
    }
    fieldStart = false;
    i++;
  }
  if (quoted) {
    throw new DvergrError(
      "TABLE_INVALID",
      `Cannot read "${file}" as CSV: line ${quoteLine} opens a quoted field that is never closed`,
      {
        hint: 'A quote inside a quoted field is written twice ("" ); check that line, or pass ' +
          "--delimiter if the file is not delimited as detected",
        details: { file, line: quoteLine },
      },
    );
  }
  field += text.slice(runStart, n);
  endRecord();
  return records;
}
