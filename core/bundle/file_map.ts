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
 * relative, normalised; no `..`, `.`, empty segments, absolute paths, NUL or backslashes,
 * and no segment that git or a common file system takes for `.git` (see gitAliasProblem).
 * `within` names what the path is relative to in the message ("bundle", "room").
 */
export function relativePathProblem(path: string, within = "bundle"): string | null {
  if (path.length === 0) return "is empty";
  if (path.includes("\0")) return "contains a NUL character";
  if (path.includes("\\")) return "contains a backslash (use /)";
  if (path.startsWith("/")) return `is absolute (${within} paths are relative)`;
  for (const seg of path.split("/")) {
    if (seg === "") return "has an empty segment (// or a trailing /)";
    if (seg === "..") return `leaves the ${within} ("..")`;
    if (seg === ".") return 'is not normalised (".")';
    const git = gitAliasProblem(seg);
    if (git) return git;
  }
  return null;
}

/** Code points HFS+ ignores in names, so ".g\u200cit" is ".git" there (as git's fsck knows). */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Why a path segment is one that git or a common file system treats as `.git`, or null:
 * `.git` in any case, with trailing dots or spaces (Windows drops them), with an NTFS stream
 * suffix (`.git::$INDEX_ALLOCATION`), with code points HFS+ ignores, or the 8.3 short name
 * `git~1`. Such a segment would write into a repository's own data, and `git fsck --strict`
 * refuses trees holding one.
 */
export function gitAliasProblem(segment: string): string | null {
  // Most segments start with an ASCII character other than ".", "g" and "G": dropping the
  // code points HFS+ ignores (none is ASCII) and lowercasing (no other character becomes "g"
  // or ".") leave it first, so the segment can be neither alias. A bundle's paths are checked
  // when it is read, parsed and installed in its room: ~8,000 segments each time for 1,000
  // cases, each two regular expression replaces, a lowercase copy and a split on the slow path.
  const first = segment.charCodeAt(0);
  if (first < 0x80 && first !== 0x2e && first !== 0x67 && first !== 0x47) return null;
  const plain = segment.replace(HFS_IGNORED, "").toLowerCase();
  const stem = plain.split(":")[0].replace(/[. ]+$/, "");
  if (stem === ".git" || /^git~\d+$/.test(plain.replace(/[. ]+$/, ""))) {
    return `has the segment ${JSON.stringify(segment)}, which git or the file system takes ` +
      'for ".git" (a repository\'s own data, never part of a bundle or a room)';
  }
  return null;
}

/**
 * The first path that is also a directory of another path in `paths` (a file "a" beside
 * "a/b"), as `{ file, inside }`, or null. Such a map cannot be written to a directory or a
 * git tree without losing one of the two.
 */
export function fileDirConflict(paths: Iterable<string>): { file: string; inside: string } | null {
  const all = new Set(paths);
  for (const p of all) {
    for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) {
      const ancestor = p.slice(0, i);
      if (all.has(ancestor)) return { file: ancestor, inside: p };
    }
  }
  return null;
}

/** The message part for a conflict found by fileDirConflict. */
export function conflictText(c: { file: string; inside: string }): string {
  return `"${c.file}" is a file and also the directory of "${c.inside}"`;
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
