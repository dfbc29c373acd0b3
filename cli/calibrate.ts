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
import { rangeFlag } from "./args.ts";
import { autoLines } from "./auto_text.ts";
import { usageError } from "../core/errors.ts";
import { DEFAULT_MIN_MARGIN } from "../core/calibrate/auto.ts";

export const HELP =
  `dvergr calibrate <bundle> [--auto [--min-margin M]] [--verbose] [--junit FILE] [--json]

The bundle is a directory, or ROOM/NAME: workflows/NAME/ of room ROOM in the home.

Proves that a bundle's checker grades right: the reference answer in calibration.edn
must pass every check, and each damaged variant must fail every check it names and
score below the reference.

With --auto the checker also grades mechanical mutations of the reference. Damaging
ones must score below it: no answer file, an empty answer, the task text as the answer,
the answer cut in half, map values swapped, numbers +1/-1/x10/negated, one character
of every string changed, a list entry dropped or repeated, another case's answer.
Invariances must score the same: other whitespace, map keys reordered, a trailing
newline, 1.0 for 1, (1 2) for [1 2]. The margin is the reference's reward minus the
highest damaging reward; a brittle mutation is an invariance that moved the reward.
Hand-written damaged variants are then optional.

Exit status: 0 calibrated; 1 not calibrated (CI fails the job; with --auto also when the
margin is under --min-margin or a mutation is brittle); 2 bad input.

Options:
  --auto          also grade the automatic mutations of the reference
  --min-margin M  with --auto: the least margin that calibrates, 0 to 1 (default 0.2;
                  0 asks only that every damage lowers the reward)
  --verbose   list every check of every variant
  --home DIR  the home of ROOM/NAME bundles (default: $DVERGR_HOME, else .dvergr)
  --junit FILE  also write the result as JUnit XML for CI (one test case per variant)
  --json      print the calibration result as JSON
  -h, --help  show this help

Example:
  dvergr calibrate examples/workflows/invoice-fields --auto --junit calibration.xml
`;

export const OPTIONS = {
  auto: { type: "boolean" },
  "min-margin": { type: "string" },
  verbose: { type: "boolean" },
  home: { type: "string" },
  junit: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const parsed = parseBundleCommand("calibrate", args, OPTIONS);
  const minMargin = rangeFlag("calibrate", "min-margin", parsed.values["min-margin"], "minMargin");
  if (minMargin !== undefined && !parsed.values.auto) {
    throw usageError(
      "Cannot use --min-margin without --auto",
      "Add --auto: the margin is measured on the automatic mutations",
    );
  }
  return { ...parsed, minMargin };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const bundle = parseBundle(
    await readBundleArg("calibrate", positionals[0], { home: values.home, ctx }),
  );
  const pool = createCheckerPool({ workers: 2 });
  let result;
  try {
    result = await calibrate(bundle, pool, {
      auto: values.auto ? { minMargin: opts.minMargin ?? DEFAULT_MIN_MARGIN } : undefined,
    });
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
  if (result.auto) autoLines(result.auto).forEach(out);
  if (result.ok) {
    const n = Object.keys(result.damaged).length;
    const auto = result.auto
      ? `; every automatic damage scores at least ${result.auto.margin!.toFixed(3)} lower, ` +
        "and no invariance moves the reward"
      : "";
    out(
      `calibrated: the reference passes every check; ${
        n === 1
          ? "1 damaged variant loses what it damages"
          : `${n} damaged variants lose what they damage`
      }${auto}`,
    );
    return 0;
  }
  out(
    `NOT CALIBRATED: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`,
  );
  for (const p of result.problems) out(`  - ${p}`);
  return 1;
}
