/**
 * Case ids (REFERENCE.md §6.4): the id cell of a row, made safe as a directory name.
 */
import { EdnList, EdnSet, type EdnValue } from "../edn/values.ts";
import { writeEdn } from "../edn/write.ts";

/** Whether a cell is blank: nil, blank text, or an empty collection. */
export function isBlankCell(v: EdnValue | undefined): boolean {
  if (v === null || v === undefined) return true;
  if (typeof v === "string") return v.trim() === "";
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  if (v instanceof EdnSet || v instanceof EdnList) return v.items.length === 0;
  return false;
}

/**
 * The case id of an id cell, or null when the cell is blank: the cell's text trimmed,
 * with every run of characters outside `[A-Za-z0-9._-]` replaced by `_`. An id of dots
 * only ("." or "..") has its dots replaced too, so a case id is always one safe path
 * segment (a deliberate tightening of the reference, which would write outside the
 * bundle).
 */
export function caseId(cell: EdnValue | undefined): string | null {
  if (cell === undefined || isBlankCell(cell)) return null;
  const text = typeof cell === "string"
    ? cell
    : typeof cell === "number" || typeof cell === "bigint"
    ? String(cell)
    : writeEdn(cell);
  const id = text.trim().replace(/[^A-Za-z0-9._-]+/g, "_");
  if (id === "") return null;
  return /^\.+$/.test(id) ? id.replace(/\./g, "_") : id;
}
