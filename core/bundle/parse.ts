/**
 * The shape check and construction of a bundle from its file map (core/bundle/parse_core.ts),
 * its EDN files checked against their schemas with zod's issues as problems
 * (core/bundle/schema_problems.ts). Pure: no I/O.
 */
import type { FileBundle, FileMap } from "./file_map.ts";
import type { Bundle, BundleProblem } from "./types.ts";
import { analyseBundle, bundleOf } from "./parse_core.ts";
import { schemaCheck } from "./schema_problems.ts";

export * from "./parse_core.ts";

/** Every problem of a bundle's shape, in a stable order (file, then position). */
export function bundleProblems(files: FileMap): BundleProblem[] {
  return analyseBundle(files, schemaCheck).problems;
}

/**
 * Shape-checks a bundle and reads it into a Bundle value. Throws a BUNDLE_INVALID
 * DvergrError listing every problem (also as `details.problems`).
 */
export function parseBundle(fb: FileBundle): Bundle {
  return bundleOf(fb, analyseBundle(fb.files, schemaCheck));
}
