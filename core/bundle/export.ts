/**
 * The export format `dvergr-workflow/1` (REFERENCE §5): one EDN map
 * `{:manifest {:format :name :bundle :title :dvergr-version :exported-at :calibration}
 *   :files {path text}}`, as the earlier system writes it, so exports travel both ways.
 *
 * Verification recomputes the content id from the files and refuses any export whose files
 * are not the bundle its manifest names. The manifest's calibration is what the exporting
 * host saw; trust never travels with it. Pure: no I/O.
 */
import { DvergrError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { writeEdn } from "../edn/write.ts";
import { EdnList, EdnUuid, type EdnValue, isEdnMap, Keyword, mapGet } from "../edn/values.ts";
import { contentId } from "./content_id.ts";
import {
  conflictText,
  type FileBundle,
  fileDirConflict,
  type FileMap,
  relativePathProblem,
  sortedFiles,
} from "./file_map.ts";
import { bundleProblems, formatProblem } from "./parse.ts";
import type { BundleProblem } from "./types.ts";
import { checkBundleName } from "./bundle_name.ts";

export const EXPORT_FORMAT = "dvergr-workflow/1";

/** What an export says about calibration on the exporting host. */
export interface CalibrationSummary {
  ok: boolean;
  problems: string[];
}

export interface ExportManifest {
  format: string;
  /** The name the bundle had where it was exported. */
  name: string | null;
  /** Content id the manifest names. */
  bundle: string;
  title: string | null;
  dvergrVersion: string | null;
  exportedAt: Date | null;
  /** Calibration on the exporting host (a claim: trust does not travel). */
  calibration: CalibrationSummary | null;
}

export interface VerifiedExport {
  manifest: ExportManifest;
  /** The bundle's files, sorted by path. Their content id is `id`. */
  files: FileMap;
  /** The name to install it as: `as`, else the manifest's. */
  name: string;
  id: string;
  /** The bundle's checker is checker.clj (the earlier system's Clojure checker). */
  clojureChecker: boolean;
}

/** Whether the checker these files run is checker.clj (they have no checker.js). */
export function hasOnlyClojureChecker(files: FileMap): boolean {
  return files.has("checker.clj") && !files.has("checker.js");
}

/** The shape problems that stop a bundle from travelling: all of them. */
export function exportProblems(files: FileMap): BundleProblem[] {
  return bundleProblems(files);
}

/**
 * Refuses a bundle that cannot be exported: a name outside `[a-z0-9][a-z0-9-]*` (USAGE) or
 * a malformed bundle (BUNDLE_INVALID, every problem listed).
 */
export function checkExportable(bundle: FileBundle): void {
  checkBundleName(
    bundle.name,
    "The name travels in the export and must be a workflow name: rename the directory",
  );
  const problems = exportProblems(bundle.files);
  if (problems.length > 0) {
    throw new DvergrError(
      "BUNDLE_INVALID",
      `Cannot export bundle "${bundle.name}": it is not well formed: ${
        problems.map(formatProblem).join("; ")
      }`,
      {
        hint: "Run `dvergr check` on it to list every problem",
        details: { bundle: bundle.name, problems },
      },
    );
  }
}

/**
 * The export of a bundle as EDN text in format dvergr-workflow/1: the manifest (name,
 * content id, title, program version, time of export, the calibration run for it) and the
 * sorted file map. Throws BUNDLE_INVALID for a malformed bundle and USAGE for a name outside `[a-z0-9][a-z0-9-]*`.
 */
export function exportBundle(
  bundle: FileBundle,
  calibration: CalibrationSummary,
  opts: { version: string; now: Date },
): string {
  checkExportable(bundle);
  const manifest = {
    format: EXPORT_FORMAT,
    name: bundle.name,
    bundle: contentId(bundle.files),
    title: titleOf(bundle.files),
    "dvergr-version": opts.version,
    "exported-at": opts.now,
    calibration: { "ok?": calibration.ok, problems: [...calibration.problems] },
  };
  return writeEdn({ manifest, files: sortedFiles(bundle.files) }, { pretty: true }) + "\n";
}

/** workflow.edn's :title (the bundle is known to be well formed). */
function titleOf(files: FileMap): string {
  const wf = readEdn(files.get("workflow.edn")!, { file: "workflow.edn" });
  const title = isEdnMap(wf) ? mapGet(wf, "title") : undefined;
  return typeof title === "string" ? title : "";
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

  const rawFiles = mapGet(top, "files");
  if (!isEdnMap(rawFiles)) {
    throw invalid(
      file,
      `:files is ${describe(rawFiles ?? null)}, not a map of path to text`,
      "The export is damaged; export the bundle again",
    );
  }
  const files: FileMap = new Map();
  for (const [k, v] of rawFiles) {
    if (typeof k !== "string") {
      throw invalid(
        file,
        `:files has the key ${writeEdn(k)}, not a path string`,
        "The export is damaged; export the bundle again",
      );
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
    files.set(k, v);
  }
  const conflict = fileDirConflict(files.keys());
  if (conflict) {
    throw invalid(
      file,
      `:files cannot be installed: ${conflictText(conflict)}`,
      "A bundle path is either a file or a directory; export the bundle again",
    );
  }

  const rawId = mapGet(m, "bundle");
  const manifestId = rawId instanceof EdnUuid ? rawId.value : rawId;
  if (typeof manifestId !== "string") {
    throw invalid(
      file,
      "the manifest has no :bundle content id",
      "The export is damaged; export the bundle again",
    );
  }
  const rawName = mapGet(m, "name");
  const manifestName = typeof rawName === "string" ? rawName : null;
  const name = opts.as ?? manifestName;
  if (name === null) {
    throw invalid(
      file,
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

  const id = contentId(files);
  if (id !== manifestId.toLowerCase()) {
    throw new DvergrError(
      "EXPORT_TAMPERED",
      `The files are not the bundle the manifest names: changed after export (manifest ${manifestId}, files ${id})`,
      {
        hint: "Nothing was written. Ask for a fresh export of the bundle; never edit an export",
        details: { file, manifest: manifestId, computed: id },
      },
    );
  }

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

  const rawTitle = mapGet(m, "title");
  const title = titleOf(files);
  if (typeof rawTitle === "string" && rawTitle !== title) {
    throw new DvergrError(
      "EXPORT_TAMPERED",
      `The manifest does not match its files: it says :title ${
        JSON.stringify(rawTitle)
      } but workflow.edn says ${JSON.stringify(title)}`,
      {
        hint: "Nothing was written. Ask for a fresh export of the bundle; never edit an export",
        details: { file, manifestTitle: rawTitle, title },
      },
    );
  }

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

/** The manifest as plain JSON (the time as ISO text), for --json and MCP results. */
export function manifestJson(m: ExportManifest): Record<string, unknown> {
  return {
    format: m.format,
    name: m.name,
    bundle: m.bundle,
    title: m.title,
    dvergrVersion: m.dvergrVersion,
    exportedAt: m.exportedAt?.toISOString() ?? null,
    calibration: m.calibration,
  };
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

/** The longest file or directory name file systems hold, in bytes of UTF-8. */
export const MAX_SEGMENT_BYTES = 255;

/**
 * Why a path cannot be written to a file system, or null: a segment (a file or directory
 * name) longer than 255 bytes of UTF-8.
 */
export function longSegmentProblem(path: string): string | null {
  const encoder = new TextEncoder();
  const long = path.split("/").find((seg) => encoder.encode(seg).length > MAX_SEGMENT_BYTES);
  return long === undefined
    ? null
    : `has a name longer than ${MAX_SEGMENT_BYTES} bytes ("${long.slice(0, 20)}…", ${
      encoder.encode(long).length
    } bytes), which no file system holds`;
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
