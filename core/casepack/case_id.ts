/**
 * Case ids (docs/compatibility.md §6.4): the id cell of a row, made safe as a directory name.
 */
import { EdnList, EdnSet, type EdnValue } from "../edn/values.ts";
import { writeEdn } from "../edn/write.ts";
import { gitAliasProblem } from "../bundle/file_map.ts";

/** Whether a cell is blank: nil, blank text, or an empty collection. */
export function isBlankCell(v: EdnValue | undefined): boolean {
  if (v === null || v === undefined) return true;
  if (typeof v === "string") return v.trim() === "";
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  if (v instanceof EdnSet || v instanceof EdnList) return v.items.length === 0;
  return false;
}

/** The longest case id; longer ones are shortened (file names end at 255 bytes). */
export const MAX_CASE_ID_LENGTH = 200;

/**
 * The case id of an id cell, or null when the cell is blank: the cell's text trimmed,
 * with every run of characters outside `[A-Za-z0-9._-]` replaced by `_`. Beyond the
 * reference, a case id is always one path segment that every bundle store accepts
 * (the reference would write outside the bundle or into git's own directory): an id
 * of dots only ("." or "..") has its dots replaced, an id git takes for `.git` (`.git`, `.GIT.`…)
 * has its first character replaced by `_`, and an id longer than MAX_CASE_ID_LENGTH keeps its start and ends in a
 * digest of the whole, so that long ids stay distinct.
 */
export function caseId(cell: EdnValue | undefined): string | null {
  if (cell === undefined || isBlankCell(cell)) return null;
  const text = typeof cell === "string"
    ? cell
    : typeof cell === "number" || typeof cell === "bigint"
    ? String(cell)
    : writeEdn(cell);
  let id = text.trim().replace(/[^A-Za-z0-9._-]+/g, "_");
  if (id === "") return null;
  if (/^\.+$/.test(id)) id = id.replace(/\./g, "_");
  else if (gitAliasProblem(id) !== null) id = "_" + id.slice(1);
  if (id.length > MAX_CASE_ID_LENGTH) {
    const digest = fnv1a(id).toString(16).padStart(8, "0");
    id = id.slice(0, MAX_CASE_ID_LENGTH - 9) + "_" + digest;
  }
  return id;
}

// 32-bit FNV-1a of a text's UTF-16 code units (ids are ASCII by then).
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
