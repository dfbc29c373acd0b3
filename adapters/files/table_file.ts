/**
 * The I/O edge of case packs: reading a table file and the attachments beside it.
 * Needs --allow-read for the table's directory.
 */
import { dirname, join, resolve, sep } from "node:path";
import { INPUT_LIMITS, readInputFile } from "./input_file.ts";
import { decodeText } from "../../core/casepack/decode.ts";
import {
  type AttachmentReader,
  casePackOf,
  collectAttachments,
} from "../../core/casepack/attachments.ts";
import type { CasePackBuild } from "../../core/casepack/generate.ts";
import type { CasePackSpec } from "../../core/casepack/spec.ts";
import { parseTable, type Table, tableFormatOf } from "../../core/casepack/table.ts";

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

/** Reads and parses a table file (see parseTable); a missing file is NOT_FOUND. */
export async function readTableFile(path: string, opts: ReadTableOptions = {}): Promise<Table> {
  const shown = opts.shown ?? path;
  const format = tableFormatOf(shown, opts.format);
  const bytes = await readInputFile(path, {
    shown,
    what: "table",
    maxBytes: INPUT_LIMITS.table,
    hint: "Give the path of a .csv, .tsv, .jsonl or .edn file (at most 512 MiB)",
  });
  const text = decodeText(bytes, { file: shown, encoding: opts.encoding });
  return parseTable(text, { file: shown, format, delimiter: opts.delimiter });
}

/**
 * Reads the attachments a table names, by the one rule of core/casepack/attachments.ts
 * (at or below the table's directory); on disk, links are followed and what they reach
 * must still lie below that directory and be a regular file.
 */
export async function readAttachmentFiles(
  tablePath: string,
  refs: string[],
  opts: { encoding?: string } = {},
): Promise<Map<string, string>> {
  if (refs.length === 0) return new Map();
  const { dir, read } = await attachmentReader(tablePath, opts.encoding);
  return await collectAttachments(dir, refs, read);
}

/** The table's directory and a reader of the files below it (links followed, kept inside). */
async function attachmentReader(
  tablePath: string,
  encoding?: string,
): Promise<{ dir: string; read: AttachmentReader }> {
  const dir = dirname(resolve(tablePath));
  const root = await Deno.realPath(dir);
  return { dir, read: (rel) => readInside(root, join(dir, rel), rel, encoding) };
}

async function readInside(
  root: string,
  path: string,
  shown: string,
  encoding?: string,
): Promise<string | null> {
  let real: string;
  try {
    real = await Deno.realPath(path);
  } catch {
    return null;
  }
  if (!real.startsWith(root + sep)) return null;
  let bytes: Uint8Array;
  try {
    bytes = await readInputFile(real, { shown, what: "attachment", maxBytes: INPUT_LIMITS.text });
  } catch {
    return null;
  }
  return decodeText(bytes, { file: shown, encoding, what: "attachment" });
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
  const { dir, read } = await attachmentReader(tablePath, opts.encoding);
  return { table, build: await casePackOf(table, spec, dir, read) };
}
