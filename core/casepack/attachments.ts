/**
 * The one rule for the files a case pack's attachment columns name, whatever holds them
 * (a directory on disk, a room): a reference is a path relative to the table's directory
 * (or absolute in the same namespace), and only what lies at or below that directory is
 * attached. Anything else, and anything the source cannot read as a regular file, is left
 * out, so certification counts the row's attachment as missing.
 */
import { posix } from "node:path";
import { relativePathProblem } from "../bundle/file_map.ts";
import { attachmentRefs } from "./certify.ts";
import { buildCasePack, type CasePackBuild } from "./generate.ts";
import { type CasePackSpec, checkSpecColumns } from "./spec.ts";
import type { Table } from "./table.ts";

/**
 * The path, relative to `tableDir`, that `ref` names, or null when it is not at or below
 * `tableDir`. `tableDir` is absolute in the source's namespace (`/` is a room's root).
 */
export function attachmentPath(tableDir: string, ref: string): string | null {
  if (ref.includes("\0") || ref.includes("\\")) return null;
  const own = posix.normalize(ref);
  // Checked on the reference itself too: at a root directory, join() would clamp a "..".
  if (own === ".." || own.startsWith("../")) return null;
  const full = posix.isAbsolute(ref) ? own : posix.join(tableDir, own);
  const rel = posix.relative(tableDir, full);
  if (rel === "" || rel.startsWith("../") || rel === "..") return null;
  return relativePathProblem(rel) === null ? rel : null;
}

/** Reads one attached file by its path relative to the table's directory; null when it cannot. */
export type AttachmentReader = (relPath: string) => Promise<string | null>;

const READ_BATCH = 64;

/**
 * The attachments of `refs` by reference, read through `read` for the refs the rule lets
 * through (`tableDir` as for attachmentPath()).
 */
export async function collectAttachments(
  tableDir: string,
  refs: readonly string[],
  read: AttachmentReader,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < refs.length; i += READ_BATCH) {
    const batch = refs.slice(i, i + READ_BATCH);
    const texts = await Promise.all(batch.map((ref) => {
      const rel = attachmentPath(tableDir, ref);
      return rel === null ? null : read(rel);
    }));
    batch.forEach((ref, k) => {
      const t = texts[k];
      if (t !== null) out.set(ref, t);
    });
  }
  return out;
}

/**
 * Builds a case pack from a parsed table: the spec's columns must be in it, and its
 * attachments are read by the one rule through `read`.
 */
export async function casePackOf(
  table: Table,
  spec: CasePackSpec,
  tableDir: string,
  read: AttachmentReader,
): Promise<CasePackBuild> {
  checkSpecColumns(spec, table);
  const attachments = await collectAttachments(tableDir, attachmentRefs(table, spec), read);
  return buildCasePack(table, spec, attachments);
}
