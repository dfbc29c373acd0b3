/**
 * Tables of historical cases (docs/compatibility.md §6.2): CSV/TSV, JSON lines or EDN, parsed
 * from text into named columns and rows of cells.
 */
import { DvergrError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { writeEdn } from "../edn/write.ts";
import { EdnList, EdnSymbol, type EdnValue, Keyword } from "../edn/values.ts";
import { parseCsv } from "./csv.ts";

export type TableFormat = "csv" | "tsv" | "jsonl" | "edn";

/** The formats by file extension (lower-cased); a path without extension is CSV. */
export const TABLE_EXTENSIONS: Record<string, TableFormat> = {
  csv: "csv",
  txt: "csv",
  tsv: "tsv",
  tab: "tsv",
  jsonl: "jsonl",
  ndjson: "jsonl",
  edn: "edn",
};

export interface TableRow {
  /** 1-based position among the data rows (blank lines do not count). */
  row: number;
  /** 1-based line of the file where the row starts (CSV, JSON lines); absent for EDN. */
  line?: number;
  /** Cells aligned with Table.columns; undefined where a JSON/EDN row has no such key. */
  values: (EdnValue | undefined)[];
}

export interface Table {
  /** The table's name in messages (its path as given). */
  file: string;
  format: TableFormat;
  /** Column names, each once, in first-seen order. */
  columns: string[];
  rows: TableRow[];
}

/**
 * The format of a table: `explicit` when given, else by the path's extension (csv,
 * txt, tsv, tab, jsonl, ndjson, edn; none → csv). Anything else is a TABLE_INVALID error.
 */
export function tableFormatOf(path: string, explicit?: string): TableFormat {
  const base = path.split(/[\\/]/).pop() ?? path;
  const dot = base.lastIndexOf(".");
  const fmt = (explicit ?? (dot > 0 ? base.slice(dot + 1) : "csv")).toLowerCase();
  const known = TABLE_EXTENSIONS[fmt] ?? (fmt === "json-lines" ? "jsonl" : undefined);
  if (known) return known;
  const hint = fmt === "xlsx" || fmt === "xls" || fmt === "ods"
    ? `Save the sheet as CSV (File › Save as › "CSV UTF-8") and give that file`
    : "Give a .csv, .tsv, .jsonl or .edn table, or name the format with --format csv|tsv|jsonl|edn";
  throw new DvergrError("TABLE_INVALID", `Not a table format: ${fmt} ("${path}")`, {
    hint,
    details: { file: path },
  });
}

/** The index of each column name in `table.columns`. */
export function columnIndex(table: Table): Map<string, number> {
  return new Map(table.columns.map((c, i) => [c, i]));
}

/**
 * Parses a table's text. CSV: the first row is the header (names trimmed; a name given
 * twice is a TABLE_INVALID error naming it, unnamed columns excepted; in a DATEV EXTF/DTVF
 * export, the row after the format line); missing trailing cells are ""; surplus cells must be
 * empty (an exporter's trailing delimiters) — a row wider than the header with text in
 * the surplus is an error naming its line. JSON lines: one object per non-blank line,
 * nested at most 100 levels, integers beyond ±2^53 − 1 read exactly (bigint, as in EDN).
 * EDN: a vector of maps (keyword keys become their name). Cells are not trimmed.
 */
export function parseTable(
  text: string,
  opts: { file: string; format: TableFormat; delimiter?: string },
): Table {
  switch (opts.format) {
    case "csv":
    case "tsv":
      return parseCsvTable(text, opts.file, opts.format, opts.delimiter);
    case "jsonl":
      return parseJsonLines(text, opts.file);
    case "edn":
      return parseEdnTable(text, opts.file);
  }
}

function tableError(file: string, message: string, hint: string, line?: number): DvergrError {
  return new DvergrError("TABLE_INVALID", `Cannot read "${file}": ${message}`, {
    hint,
    details: line === undefined ? { file } : { file, line },
  });
}

function parseCsvTable(
  text: string,
  file: string,
  format: "csv" | "tsv",
  delimiter?: string,
): Table {
  const records = parseCsv(text, {
    file,
    delimiter: delimiter ?? (format === "tsv" ? "\t" : undefined),
  });
  if (records.length === 0) {
    throw tableError(file, "it is empty (no header line)", "The first line names the columns");
  }
  // A DATEV export (EXTF/DTVF) starts with a line describing the file; the column
  // names follow on the next line.
  const datev = records.length > 1 && /^(EXTF|DTVF)$/.test(records[0].cells[0].trim());
  const headerAt = datev ? 1 : 0;
  const header = records[headerAt].cells.map((h) => h.trim());
  const columns: string[] = [];
  const at = new Map<string, number>();
  header.forEach((name, pos) => {
    if (at.has(name) && name !== "") {
      throw tableError(
        file,
        `the header names column "${name}" twice (columns ${at.get(name)! + 1} and ${pos + 1})`,
        "Rename one of them: a table with two columns of one name would lose one",
        records[headerAt].line,
      );
    }
    if (!at.has(name)) columns.push(name);
    at.set(name, pos); // unnamed columns: the later one wins
  });
  const positions = columns.map((c) => at.get(c)!);
  const width = header.length;
  const rows: TableRow[] = new Array(records.length - 1 - headerAt);
  for (let r = 1 + headerAt; r < records.length; r++) {
    const { cells, line } = records[r];
    if (cells.length > width) {
      const extra = cells.slice(width).filter((c) => c.trim() !== "");
      if (extra.length > 0) {
        throw tableError(
          file,
          `line ${line} has ${cells.length} cells but the header has ${width} (the surplus holds ${
            JSON.stringify(extra[0].length > 40 ? extra[0].slice(0, 40) + "…" : extra[0])
          })`,
          "A cell holding the delimiter must be quoted; check that line, or pass --delimiter " +
            "when the table is not delimited as detected",
          line,
        );
      }
    }
    const values = new Array<EdnValue>(positions.length);
    for (let j = 0; j < positions.length; j++) values[j] = cells[positions[j]] ?? "";
    rows[r - 1 - headerAt] = { row: r - headerAt, line, values };
  }
  return { file, format, columns, rows };
}

/** How deep a JSON line may nest (arrays and objects). */
const MAX_JSON_DEPTH = 100;

/** The nesting depth of a JSON text (brackets outside strings), stopping past `limit`. */
function jsonDepth(src: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * JSON.parse with numbers read exactly as the EDN reader reads them: an integer beyond
 * ±2^53 − 1 becomes a bigint (so 12345678901234567000 stays itself), not a float.
 */
function parseJsonExact(src: string): unknown {
  return JSON.parse(src, function (_key, value, context?: { source?: string }) {
    if (typeof value !== "number" || Number.isSafeInteger(value) || !context?.source) return value;
    const s = context.source;
    return /^-?\d+$/.test(s) ? BigInt(s) : value;
  });
}

/**
 * The first key a JSON object text names twice at its top level, or null. JSON.parse keeps
 * the last silently; a case with two values for one column must not lose one.
 */
function duplicateTopKey(src: string): string | null {
  const seen = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === "\\" ? 2 : 1;
      if (depth === 1 && expectKey) {
        const key = JSON.parse(src.slice(i, j + 1)) as string;
        if (seen.has(key)) return key;
        seen.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === "{" || c === "[") {
      depth++;
      if (depth === 1) expectKey = c === "{";
    } else if (c === "}" || c === "]") depth--;
    else if (c === "," && depth === 1) expectKey = true;
  }
  return null;
}

function jsonToEdn(v: unknown): EdnValue {
  if (
    v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean" ||
    typeof v === "bigint"
  ) {
    return v;
  }
  if (Array.isArray(v)) return v.map(jsonToEdn);
  const m = new Map<EdnValue, EdnValue>();
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, jsonToEdn(x));
  return m;
}

function describeJson(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return `a ${typeof v}`;
}

function parseJsonLines(text: string, file: string): Table {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = body.split("\n");
  const objects: { row: number; line: number; obj: Record<string, unknown> }[] = [];
  const columns: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const src = lines[i].trim();
    if (src === "") continue;
    if (jsonDepth(src, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      throw tableError(
        file,
        `line ${i + 1} nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`,
        "A case is a flat object of cells; nest values a few levels at most",
        i + 1,
      );
    }
    let v: unknown;
    try {
      v = parseJsonExact(src);
    } catch (e) {
      throw tableError(
        file,
        `line ${i + 1} is not JSON (${e instanceof Error ? e.message : String(e)})`,
        "JSON lines hold one JSON object per line",
        i + 1,
      );
    }
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      throw tableError(
        file,
        `line ${i + 1} is ${describeJson(v)}, expected a JSON object`,
        'Each line is one case: an object such as {"id": "B1", "text": "…", "account": "6815"}',
        i + 1,
      );
    }
    const twice = duplicateTopKey(src);
    if (twice !== null) {
      throw tableError(
        file,
        `line ${i + 1} names the key ${JSON.stringify(twice)} twice`,
        "Give each column once per line: JSON keeps only the last of two",
        i + 1,
      );
    }
    const obj = v as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
    }
    objects.push({ row: objects.length + 1, line: i + 1, obj });
  }
  const rows = objects.map(({ row, line, obj }) => ({
    row,
    line,
    values: columns.map((c) => (Object.hasOwn(obj, c) ? jsonToEdn(obj[c]) : undefined)),
  }));
  return { file, format: "jsonl", columns, rows };
}

function ednKeyName(k: EdnValue): string {
  if (k instanceof Keyword || k instanceof EdnSymbol) return k.name;
  if (typeof k === "string") return k;
  if (typeof k === "number" || typeof k === "bigint") return String(k);
  return writeEdn(k);
}

function parseEdnTable(text: string, file: string): Table {
  const value = readEdn(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, { file });
  const items = Array.isArray(value) ? value : value instanceof EdnList ? value.items : null;
  if (items === null) {
    throw tableError(
      file,
      "an EDN table is a vector of maps, but the file holds something else",
      'Write it as [{:id "B1" :text "…" :account "6815"} …]',
    );
  }
  const columns: string[] = [];
  const seen = new Set<string>();
  const maps: Map<string, EdnValue>[] = [];
  items.forEach((item, i) => {
    if (!(item instanceof Map)) {
      throw tableError(
        file,
        `element ${i + 1} of the vector is not a map`,
        'Each element is one case: a map such as {:id "B1" :text "…" :account "6815"}',
      );
    }
    const m = new Map<string, EdnValue>();
    for (const [k, v] of item) {
      const name = ednKeyName(k);
      if (!seen.has(name)) {
        seen.add(name);
        columns.push(name);
      }
      m.set(name, v);
    }
    maps.push(m);
  });
  const rows = maps.map((m, i) => ({
    row: i + 1,
    values: columns.map((c) => (m.has(c) ? m.get(c)! : undefined)),
  }));
  return { file, format: "edn", columns, rows };
}
