/**
 * The I/O edge of case packs: reading a table file and the attachments beside it.
 * Needs --allow-read for the table's directory.
 */
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { DvergrError } from "../errors.ts";
import { decodeText } from "../casepack/decode.ts";
import { attachmentRefs } from "../casepack/certify.ts";
import { buildCasePack, type CasePackBuild } from "../casepack/generate.ts";
import { type CasePackSpec, checkSpecColumns } from "../casepack/spec.ts";
import { parseTable, type Table, tableFormatOf } from "../casepack/table.ts";

export interface ReadTableOptions {
  /** csv, tsv, jsonl or edn; else by extension. */
  format?: string;
  /** The CSV delimiter; else tab for .tsv, else detected. */
  delimiter?: string;
  /** The text encoding when the file is not UTF-8 (e.g. windows-1252). */
  encoding?: string;
  /** The table's name in messages (default: the path). */
  shown?: string;
}

const READ_BATCH = 64;

/** Reads and parses a table file (see parseTable); a missing file is NOT_FOUND. */
export async function readTableFile(path: string, opts: ReadTableOptions = {}): Promise<Table> {
  const shown = opts.shown ?? path;
  const format = tableFormatOf(shown, opts.format);
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new DvergrError("NOT_FOUND", `Cannot read the table "${shown}": no such file`, {
        hint: "Give the path of a .csv, .tsv, .jsonl or .edn file",
        details: { file: shown },
      });
    }
    if (e instanceof Deno.errors.IsADirectory || (await isDirectory(path))) {
      throw new DvergrError("NOT_FOUND", `Cannot read the table "${shown}": it is a directory`, {
        hint: "Give the path of a .csv, .tsv, .jsonl or .edn file",
        details: { file: shown },
      });
    }
    throw e;
  }
  const text = decodeText(bytes, { file: shown, encoding: opts.encoding });
  return parseTable(text, { file: shown, format, delimiter: opts.delimiter });
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Reads the attachments a table names, resolved relative to the table's directory.
 * Only regular files at or below that directory are read (after following links);
 * anything else is left out of the result, so certification counts it as missing.
 */
export async function readAttachmentFiles(
  tablePath: string,
  refs: string[],
  opts: { encoding?: string } = {},
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (refs.length === 0) return out;
  const root = await Deno.realPath(dirname(resolve(tablePath)));
  for (let i = 0; i < refs.length; i += READ_BATCH) {
    const batch = refs.slice(i, i + READ_BATCH);
    const texts = await Promise.all(batch.map((ref) => readInside(root, ref, opts.encoding)));
    batch.forEach((ref, k) => {
      const t = texts[k];
      if (t !== null) out.set(ref, t);
    });
  }
  return out;
}

async function readInside(root: string, ref: string, encoding?: string): Promise<string | null> {
  const candidate = isAbsolute(ref) ? ref : join(root, ref);
  let real: string;
  try {
    real = await Deno.realPath(candidate);
  } catch {
    return null;
  }
  if (!real.startsWith(root + sep)) return null;
  let bytes: Uint8Array;
  try {
    const st = await Deno.stat(real);
    if (!st.isFile) return null;
    bytes = await Deno.readFile(real);
  } catch {
    return null;
  }
  return decodeText(bytes, { file: ref, encoding, what: "attachment" });
}

/**
 * Reads a table and its attachments and builds the case pack (certification, and the
 * bundle's files when a case is certified). The spec's columns must be in the table.
 */
export async function casePackFromTable(
  tablePath: string,
  spec: CasePackSpec,
  opts: ReadTableOptions = {},
): Promise<{ table: Table; build: CasePackBuild }> {
  const table = await readTableFile(tablePath, opts);
  checkSpecColumns(spec, table);
  const attachments = await readAttachmentFiles(tablePath, attachmentRefs(table, spec), {
    encoding: opts.encoding,
  });
  return { table, build: buildCasePack(table, spec, attachments) };
}
