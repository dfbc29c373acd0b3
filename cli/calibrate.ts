import { parseBundleCommand, readBundleArg } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { printJson } from "./render.ts";
import { checkLines, runLine } from "./verdict_text.ts";
import { parseBundle } from "../core/bundle/parse.ts";
import { calibrate } from "../core/calibrate/calibrate.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import { calibrationJunit } from "../core/bench/junit.ts";
import { writeFileAtomic as writeAtomic } from "./write_atomic.ts";
import { resolve } from "node:path";

export const HELP = `dvergr calibrate <bundle> [--verbose] [--junit FILE] [--json]

The bundle is a directory, or ROOM/NAME: workflows/NAME/ of room ROOM in the home.

Proves that a bundle's checker grades right: the reference answer in calibration.edn
must pass every check, and each damaged variant must fail every check it names and
score below the reference.

Exit status: 0 calibrated; 1 not calibrated (CI fails the job); 2 bad input.

Options:
  --verbose   list every check of every variant
  --home DIR  the home of ROOM/NAME bundles (default: $DVERGR_HOME, else .dvergr)
  --junit FILE  also write the result as JUnit XML for CI (one test case per variant)
  --json      print the calibration result as JSON
  -h, --help  show this help
`;

export const OPTIONS = {
  verbose: { type: "boolean" },
  home: { type: "string" },
  junit: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  return parseBundleCommand("calibrate", args, OPTIONS);
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const bundle = parseBundle(
    await readBundleArg("calibrate", positionals[0], { home: values.home, ctx }),
  );
  const pool = createCheckerPool({ workers: 2 });
  let result;
  try {
    result = await calibrate(bundle, pool);
  } finally {
    pool.close();
  }
  if (values.junit !== undefined) {
    await writeAtomic(resolve(ctx.cwd, values.junit), calibrationJunit(bundle.name, result));
  }
  if (values.json) {
    printJson(ctx, { name: bundle.name, ...result });
    return result.ok ? 0 : 1;
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  out(`Calibrating ${bundle.name}  ${bundle.id}`);
  if (result.reference) {
    out(`  reference                 ${runLine(result.reference)}`);
    if (values.verbose || !result.ok) checkLines(result.reference, "      ").forEach(out);
  }
  const width = Math.max(24, ...Object.keys(result.damaged).map((n) => n.length + 2));
  for (const [name, v] of Object.entries(result.damaged)) {
    const loses = bundle.calibration!.damaged[name].loses;
    const mark = v.ok ? "ok  " : "BAD ";
    out(
      `  ${mark}${name.padEnd(width - 2)}${runLine(v.run)}  loses [${
        loses.map((l) => ":" + l).join(" ")
      }]`,
    );
    if (values.verbose) checkLines(v.run, "      ").forEach(out);
  }
  if (result.ok) {
    const n = Object.keys(result.damaged).length;
    out(
      `calibrated: the reference passes every check; ${
        n === 1
          ? "1 damaged variant loses what it damages"
          : `${n} damaged variants lose what they damage`
      }`,
    );
    return 0;
  }
  out(
    `NOT CALIBRATED: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`,
  );
  for (const p of result.problems) out(`  - ${p}`);
  return 1;
}
