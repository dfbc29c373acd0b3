/**
 * Reading an export (`dvergr-workflow/1`, see export.ts) back: verification recomputes the
 * content id from the files and refuses any export whose files are not the bundle its
 * manifest names. The manifest's calibration is what the exporting host saw; trust never
 * travels with it. Pure: no I/O.
 */
import { DvergrError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { writeEdn } from "../edn/write.ts";
import {
  EdnList,
  type EdnMap,
  EdnUuid,
  type EdnValue,
  isEdnMap,
  Keyword,
  mapGet,
} from "../edn/values.ts";
import { contentId } from "./content_id.ts";
import {
  conflictText,
  fileDirConflict,
  type FileMap,
  relativePathProblem,
  sortedFiles,
} from "./file_map.ts";
import { formatProblem } from "./parse.ts";
import { checkBundleName } from "./bundle_name.ts";
import {
  type CalibrationSummary,
  EXPORT_FORMAT,
  exportProblems,
  hasOnlyClojureChecker,
  longSegmentProblem,
  titleOf,
  type VerifiedExport,
} from "./export.ts";

const DAMAGED = "The export is damaged; export the bundle again";
const NEVER_EDIT =
  "Nothing was written. Ask for a fresh export of the bundle; never edit an export";

/**
 * Reads and verifies an export: EDN, format dvergr-workflow/1, text files at valid
 * relative paths, a workflow name (`opts.as`, else the manifest's), files whose
 * recomputed content id is the manifest's :bundle (else EXPORT_TAMPERED, with both ids),
 * a manifest :title that is workflow.edn's, and a well-formed bundle (checker.js or the
 * earlier system's checker.clj). Throws a DvergrError naming what is wrong.
 */
export function verifyExport(
  text: string,
  opts: { file: string; as?: string },
): VerifiedExport {
  const { file } = opts;
  const { top, m } = readExport(text, file);
  const files = exportedFiles(mapGet(top, "files"), file);
  const manifestId = manifestBundleId(m, file);
  const rawName = mapGet(m, "name");
  const manifestName = typeof rawName === "string" ? rawName : null;
  const name = installName(manifestName, opts);
  const id = contentId(files);
  if (id !== manifestId.toLowerCase()) {
    throw new DvergrError(
      "EXPORT_TAMPERED",
      `The files are not the bundle the manifest names: changed after export (manifest ${manifestId}, files ${id})`,
      { hint: NEVER_EDIT, details: { file, manifest: manifestId, computed: id } },
    );
  }
  checkWellFormed(files, file, name);
  const rawTitle = mapGet(m, "title");
  checkTitle(rawTitle, files, file);
  const version = mapGet(m, "dvergr-version");
  const at = mapGet(m, "exported-at");
  return {
    manifest: {
      format: EXPORT_FORMAT,
      name: manifestName,
      bundle: manifestId,
      title: typeof rawTitle === "string" ? rawTitle : null,
      dvergrVersion: typeof version === "string" ? version : null,
      exportedAt: at instanceof Date ? at : null,
      calibration: calibrationOf(mapGet(m, "calibration")),
    },
    files: sortedFiles(files),
    name,
    id,
    clojureChecker: hasOnlyClojureChecker(files),
  };
}

/** The export's top-level map and its manifest, which names this format. */
function readExport(text: string, file: string): { top: EdnMap; m: EdnMap } {
  let top: EdnValue;
  try {
    top = readEdn(text, { file });
  } catch (e) {
    if (e instanceof DvergrError) {
      throw new DvergrError("EDN_SYNTAX", `Not a workflow export: ${e.message}`, {
        hint: e.hint,
        details: e.details,
      });
    }
    throw e;
  }
  if (!isEdnMap(top)) {
    throw notExport(undefined, `the file holds ${describe(top)}, not a map`, file);
  }
  const m = mapGet(top, "manifest");
  if (!isEdnMap(m)) {
    throw notExport(undefined, "it has no :manifest map", file);
  }
  const format = mapGet(m, "format");
  if (format !== EXPORT_FORMAT) {
    throw notExport(format, `dvergr reads "${EXPORT_FORMAT}"`, file);
  }
  return { top, m };
}

/** The export's :files: UTF-8 texts at relative paths that can all be installed. */
function exportedFiles(rawFiles: EdnValue | undefined, file: string): FileMap {
  if (!isEdnMap(rawFiles)) {
    throw invalid(
      file,
      `:files is ${describe(rawFiles ?? null)}, not a map of path to text`,
      DAMAGED,
    );
  }
  const files: FileMap = new Map();
  for (const [k, v] of rawFiles) {
    const path = exportedPath(k, file);
    files.set(path, exportedText(path, v, file));
  }
  const conflict = fileDirConflict(files.keys());
  if (conflict) {
    throw invalid(
      file,
      `:files cannot be installed: ${conflictText(conflict)}`,
      "A bundle path is either a file or a directory; export the bundle again",
    );
  }
  return files;
}

/** A :files key that is a relative path a file system can hold. */
function exportedPath(k: EdnValue, file: string): string {
  if (typeof k !== "string") {
    throw invalid(file, `:files has the key ${writeEdn(k)}, not a path string`, DAMAGED);
  }
  const why = relativePathProblem(k) ??
    (k.isWellFormed() ? null : `is not UTF-8 text: ${surrogateAt(k)}`) ??
    longSegmentProblem(k);
  if (why) {
    throw invalid(
      file,
      `:files path ${JSON.stringify(k)} ${why}`,
      "Bundle paths are relative POSIX paths such as `fixtures/docs/a.md`",
    );
  }
  return k;
}

/** A :files value that is UTF-8 text. */
function exportedText(k: string, v: EdnValue, file: string): string {
  if (typeof v !== "string") {
    throw invalid(
      file,
      `:files ${JSON.stringify(k)} is ${describe(v)}, not text`,
      "Bundle files are UTF-8 text; export the bundle again",
    );
  }
  if (!v.isWellFormed()) {
    // Stored as UTF-8 it would become U+FFFD: the installed files would not be the
    // bundle verified here (and the JVM hashes it as "?": another id there too).
    throw invalid(
      file,
      `:files ${JSON.stringify(k)} is not UTF-8 text: ${surrogateAt(v)}`,
      "Bundle files are UTF-8 text; export the bundle again from its source",
    );
  }
  return v;
}

/** The content id the manifest names (a string, or a #uuid from the earlier system). */
function manifestBundleId(m: EdnMap, file: string): string {
  const rawId = mapGet(m, "bundle");
  const manifestId = rawId instanceof EdnUuid ? rawId.value : rawId;
  if (typeof manifestId !== "string") {
    throw invalid(file, "the manifest has no :bundle content id", DAMAGED);
  }
  return manifestId;
}

/** The name to install as: `as`, else the manifest's; a workflow name either way. */
function installName(manifestName: string | null, opts: { file: string; as?: string }): string {
  const name = opts.as ?? manifestName;
  if (name === null) {
    throw invalid(
      opts.file,
      "the manifest has no :name",
      "Give the bundle a name with --as NAME (the `as` parameter)",
    );
  }
  checkBundleName(
    name,
    opts.as === undefined
      ? `Import it under another name with --as NAME (the \`as\` parameter)`
      : undefined,
  );
  return name;
}

function checkWellFormed(files: FileMap, file: string, name: string): void {
  const problems = exportProblems(files);
  if (problems.length > 0) {
    throw new DvergrError(
      "BUNDLE_INVALID",
      `Cannot import "${file}": bundle "${name}" is not well formed: ${
        problems.map(formatProblem).join("; ")
      }`,
      {
        hint: "Nothing was written. Fix the bundle where it was authored and export it again",
        details: { file, bundle: name, problems },
      },
    );
  }
}

/** A manifest :title, when there is one, is workflow.edn's. */
function checkTitle(rawTitle: EdnValue | undefined, files: FileMap, file: string): void {
  const title = titleOf(files);
  if (typeof rawTitle === "string" && rawTitle !== title) {
    throw new DvergrError(
      "EXPORT_TAMPERED",
      `The manifest does not match its files: it says :title ${
        JSON.stringify(rawTitle)
      } but workflow.edn says ${JSON.stringify(title)}`,
      { hint: NEVER_EDIT, details: { file, manifestTitle: rawTitle, title } },
    );
  }
}

function notExport(format: EdnValue | undefined, why: string, file: string): DvergrError {
  return new DvergrError(
    "EXPORT_INVALID",
    `Not a workflow export (format ${writeEdn(format ?? null)}): ${why}`,
    {
      hint:
        `An export is the EDN map {:manifest {:format "${EXPORT_FORMAT}" …} :files {…}} that \`dvergr export\` writes`,
      details: { file },
    },
  );
}

function invalid(file: string, why: string, hint: string): DvergrError {
  return new DvergrError("EXPORT_INVALID", `Cannot import "${file}": ${why}`, {
    hint,
    details: { file },
  });
}

function calibrationOf(v: EdnValue | undefined): CalibrationSummary | null {
  if (!isEdnMap(v)) return null;
  const ok = mapGet(v, "ok?");
  const problems = mapGet(v, "problems");
  if (typeof ok !== "boolean") return null;
  return {
    ok,
    // A vector, or a list: the earlier system prints a lazy seq of problems as one.
    problems:
      (Array.isArray(problems) ? problems : problems instanceof EdnList ? problems.items : [])
        .filter((p): p is string => typeof p === "string"),
  };
}

/** Where the first unpaired surrogate of a string that is not well formed is. */
function surrogateAt(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    } else if (c < 0xdc00 || c > 0xdfff) continue;
    return `it holds an unpaired surrogate (\\u${c.toString(16)}) at character ${i + 1}`;
  }
  return "it holds an unpaired surrogate";
}

function describe(v: EdnValue): string {
  if (v === null) return "nil";
  if (Array.isArray(v)) return "a vector";
  if (isEdnMap(v)) return "a map";
  if (typeof v === "string") return "a string";
  if (typeof v === "number" || typeof v === "bigint") return "a number";
  if (typeof v === "boolean") return "a boolean";
  if (v instanceof Keyword) return `the keyword ${writeEdn(v)}`;
  return "a " + (v as object).constructor.name.replace(/^Edn/, "").toLowerCase();
}
