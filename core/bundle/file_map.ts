/**
 * A bundle as data: its name and a map from relative POSIX path to UTF-8 text.
 * The same shape whether it came from a directory, a room's git tree or an export.
 */
export type FileMap = Map<string, string>;

export interface FileBundle {
  name: string;
  files: FileMap;
}

/**
 * Why a relative bundle path is refused, or null when it is acceptable: POSIX,
 * relative, normalised; no `..`, `.`, empty segments, absolute paths, NUL or backslashes.
 */
export function relativePathProblem(path: string): string | null {
  if (path.length === 0) return "is empty";
  if (path.includes("\0")) return "contains a NUL character";
  if (path.includes("\\")) return "contains a backslash (use /)";
  if (path.startsWith("/")) return "is absolute (bundle paths are relative)";
  for (const seg of path.split("/")) {
    if (seg === "") return "has an empty segment (// or a trailing /)";
    if (seg === "..") return 'leaves the bundle ("..")';
    if (seg === ".") return 'is not normalised (".")';
  }
  return null;
}

/** The file map with its paths in sorted (code unit) order. */
export function sortedFiles(files: FileMap): FileMap {
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The sub-map of files under `prefix/`, with the prefix removed. */
export function filesUnder(files: FileMap, prefix: string): FileMap {
  const p = prefix.endsWith("/") ? prefix : prefix + "/";
  const out: FileMap = new Map();
  for (const [k, v] of files) if (k.startsWith(p)) out.set(k.slice(p.length), v);
  return out;
}
