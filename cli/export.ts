import { resolve } from "node:path";
import { checkOutputFile } from "../adapters/files/output_file.ts";
import { writeFileAtomic } from "./write_atomic.ts";

import { parseBundleCommand, readBundleArg } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { withOpContext } from "./home_arg.ts";
import { EXPORT_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { exportFiles, type ExportOutcome } from "../core/ops/catalog_bundles.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";

export const HELP = `dvergr export <bundle|ROOM/NAME> [-o FILE] [--home DIR] [--json]

Exports a bundle as one EDN map in format dvergr-workflow/1: a manifest (name, content id,
title, dvergr version, time, and the calibration run now) and every file. \`dvergr import\`
installs it on another machine or in another room, after checking that its files are the
bundle the manifest names. Trust does not travel with it: the importing host promotes it
itself.

The bundle is a directory, or ROOM/NAME: workflows/NAME/ of room ROOM in the home.

Options:
  -o, --output FILE  write the export to FILE (atomically) instead of stdout
  --home DIR         the home of ROOM/NAME bundles (default: $DVERGR_HOME, else .dvergr)
  --json             print what was exported as JSON (with the export itself when no -o)
  -h, --help         show this help

Example:
  dvergr export contracts/recall -o recall.edn

Exit status: 0 exported; 2 bad input (no such bundle, a malformed one, a bad -o).
`;

export const OPTIONS = {
  output: { type: "string", short: "o" },
  home: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  return parseBundleCommand(
    "export",
    args,
    OPTIONS,
    "Run `dvergr export path/to/bundle -o bundle.edn`",
  );
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const fb = await readBundleArg("export", positionals[0], { home: values.home, ctx });
  let outcome: ExportOutcome;
  if (fb.source.kind === "room") {
    const { room, name, home } = fb.source;
    // Not catalog_export: that op gives the export in pages sized for a tool result.
    outcome = await withOpContext(ctx, home, {}, async (op) => ({
      room,
      ...await exportFiles(op, { name, files: fb.files }),
    }));
  } else {
    const pool = createCheckerPool({ workers: 2 });
    try {
      outcome = await exportFiles({ runner: pool, clock: () => new Date() }, fb);
    } finally {
      pool.close();
    }
  }

  const file = values.output !== undefined ? resolve(ctx.cwd, values.output) : null;
  if (file) {
    await checkOutputFile(file, "-o");
    await writeFileAtomic(file, outcome.export);
  }
  const { export: text, ...facts } = outcome;
  if (values.json) {
    printJson(ctx, EXPORT_FORMAT, file ? { ...facts, file } : outcome);
    return 0;
  }
  // The export itself, byte for byte (its strings are EDN-escaped).
  if (!file) ctx.raw.stdout(text);
  // With the export on stdout, the summary goes to stderr.
  const say = (s: string) => (file ? ctx.stdout : ctx.stderr)(s + "\n");
  say(
    `Exported ${outcome.bundle} ${outcome.bundleId} (${fb.files.size} files)${
      file ? ` to ${values.output}` : ""
    }`,
  );
  say(
    outcome.calibration.ok
      ? "Calibration: ok"
      : `Calibration: NOT ok (recorded in the manifest): ${
        outcome.calibration.problems.join("; ")
      }`,
  );
  return 0;
}
