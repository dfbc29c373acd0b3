/**
 * The export format `dvergr-workflow/1` (docs/compatibility.md §5): one EDN map
 * `{:manifest {:format :name :bundle :title :dvergr-version :exported-at :calibration}
 *   :files {path text}}`, as the earlier system writes it, so exports travel both ways.
 *
 * This module writes exports; verify_export.ts reads them back. Pure: no I/O.
 */
import { DvergrError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { writeEdn } from "../edn/write.ts";
import { isEdnMap, mapGet } from "../edn/values.ts";
import { contentId } from "./content_id.ts";
import { type FileBundle, type FileMap, sortedFiles } from "./file_map.ts";
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
export function titleOf(files: FileMap): string {
  const wf = readEdn(files.get("workflow.edn")!, { file: "workflow.edn" });
  const title = isEdnMap(wf) ? mapGet(wf, "title") : undefined;
  return typeof title === "string" ? title : "";
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
