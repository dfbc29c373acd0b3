/**
 * parseBundle() (core/bundle/parse.ts) that loads zod only for a schema problem: zod's
 * modules and schemas (~30 ms of a command's start) load only when the schemas' success path
 * (core/bundle/schema_spec.ts, analyseAccepted()) cannot decide, that is for a bundle with a
 * schema problem, whose problems then come from zod's issues as parseBundle()'s do. For the
 * commands that read one bundle and go on (`check`, `calibrate`, `benchmark`, `freeze`).
 */
import { importLater } from "../import_later.ts";
import type { FileBundle } from "./file_map.ts";
import { analyseAccepted, analyseBundle, type Analysis, bundleOf } from "./parse_core.ts";
import type { Bundle } from "./types.ts";

/** A bundle's files read and shape-checked: every problem, and what was read. */
export async function analyseLazily(fb: FileBundle): Promise<Analysis> {
  return analyseAccepted(fb.files) ?? analyseBundle(
    fb.files,
    (await importLater<typeof import("./schema_problems.ts")>(
      "./schema_problems.ts",
      import.meta.url,
    )).schemaCheck,
  );
}

/**
 * Shape-checks a bundle and reads it into a Bundle value, as parseBundle() does: throws a
 * BUNDLE_INVALID DvergrError listing every problem (also as `details.problems`).
 */
export async function parseBundleLazily(fb: FileBundle): Promise<Bundle> {
  return bundleOf(fb, await analyseLazily(fb));
}
