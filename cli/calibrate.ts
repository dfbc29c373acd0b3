import { parseBundleCommand, readBundleArg } from "./bundle_arg.ts";
import { generatorOf } from "../core/bundle/generator.ts";
import type { CliContext } from "./context.ts";
import { printJson } from "./render.ts";
import { checkLines, runLine } from "./verdict_text.ts";
import { parseBundleLazily } from "../core/bundle/parse_lazily.ts";
import { calibrate } from "../core/calibrate/calibrate.ts";
import { commandCheckerPool } from "../sandbox/checker_pool.ts";
import { writeFileAtomic as writeAtomic } from "./write_atomic.ts";
import { resolve } from "../adapters/files/resolve.ts";
import { rangeFlag } from "./args.ts";
import { autoLines } from "./auto_text.ts";
import { usageError } from "../core/errors.ts";
import type { ReviewCalibration } from "../core/engine/review_calibration.ts";
import type { BundleArg } from "./bundle_arg.ts";
import type { Bundle } from "../core/bundle/types.ts";
import type { CheckerRunner } from "../core/checker.ts";
import type { CalibrationResult } from "../core/calibrate/calibrate.ts";
import type { AskJudge, JudgeConsistency } from "../core/calibrate/judge_consistency.ts";
import { judgeLines } from "./judge_text.ts";
import { importLater } from "./import_later.ts";

export const HELP = `dvergr calibrate <bundle> [--auto [--min-margin M]]
    [--judge-consistency [--k N] [--accept-judge-noise]] [--verbose] [--junit FILE] [--json]

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

With --judge-consistency (bundles with :judge) the judge model is asked each judge
request of the calibration (the checker's judgeRequests on the reference and on every
damaged variant) k times, through the model registry as attempts ask it; a prompt that
lists options (lines starting A) B) C), 1. 2. 3. or - bullets) gets them rotated between
asks, and the answers are read back to the option chosen. It reports agreement (Fleiss'
kappa), the flip rate (requests answered in more than one way), the position bias (asks
where the judge kept the position, not the option, when the options moved) and whether
calibration.edn's :judgements say what the judge's majority says. Kappa under 0.6 is not
calibrated unless --accept-judge-noise. Needs the judge's API key; each ask is billed.

Exit status: 0 calibrated; 1 not calibrated (CI fails the job; with --auto also when the
margin is under --min-margin or a mutation is brittle; with --judge-consistency when
kappa is under 0.6 or calibration.edn disagrees with the judge); 2 bad input.

Options:
  --auto          also grade the automatic mutations of the reference
  --min-margin M  with --auto: the least margin that calibrates, 0 to 1 (default 0.2;
                  0 asks only that every damage lowers the reward)
  --judge-consistency  ask the judge each calibration judge request k times
  --k N           with --judge-consistency: asks per request, 2 to 20 (default 3)
  --accept-judge-noise  with --judge-consistency: kappa under 0.6 does not fail
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
  "judge-consistency": { type: "boolean" },
  k: { type: "string" },
  "accept-judge-noise": { type: "boolean" },
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
  const k = rangeFlag("calibrate", "k", parsed.values.k, "judgeAsks");
  for (
    const [flag, given] of [["k", k !== undefined], [
      "accept-judge-noise",
      parsed.values["accept-judge-noise"],
    ]] as const
  ) {
    if (given && !parsed.values["judge-consistency"]) {
      throw usageError(
        `Cannot use --${flag} without --judge-consistency`,
        "Add --judge-consistency: it asks the judge each calibration request k times",
      );
    }
  }
  return { ...parsed, minMargin, k };
}

/** The home whose models.edn the judge and the reviewer are read with. */
async function calibrationHome(
  ctx: CliContext,
  bundle: Bundle,
  arg: BundleArg,
  home: string | undefined,
): Promise<string> {
  if (arg.source.kind === "room") return arg.source.home;
  const { resolveHomeDir } = await importLater<typeof import("../adapters/store/kv/home.ts")>(
    "../adapters/store/kv/home.ts",
    import.meta.url,
  );
  return resolveHomeDir({
    flag: home,
    env: ctx.env,
    cwd: ctx.cwd,
    bundleName: bundle.name,
  });
}

/** The bundle's judge, asked through the model registry and gateway path attempts use. */
async function judgeAsk(
  ctx: CliContext,
  bundle: Bundle,
  arg: BundleArg,
  home: string | undefined,
): Promise<AskJudge> {
  if (!bundle.definition.judge) {
    throw usageError(
      `Cannot measure the judge of bundle "${bundle.name}": its workflow.edn has no :judge`,
      "Use --judge-consistency on a bundle with :judge {:model M}",
    );
  }
  const homeDir = await calibrationHome(ctx, bundle, arg, home);
  const [{ prepareEffects }, { composeServices }] = await Promise.all([
    importLater<typeof import("../core/engine/attempt_effects.ts")>(
      "../core/engine/attempt_effects.ts",
      import.meta.url,
    ),
    importLater<typeof import("../adapters/compose.ts")>("../adapters/compose.ts", import.meta.url),
  ]);
  const effects = await prepareEffects(bundle, { env: ctx.env, homeDir }, composeServices());
  effects.preflight({ web: false });
  return async (prompt) => {
    const a = await effects.judge!.ask(prompt);
    return a.ok ? { ok: true, answer: a.answer } : { ok: false, message: a.message };
  };
}

/**
 * calibration.edn's :reviews put to the bundle's :review (null without any): the modules of
 * the home and the model registry load only for a bundle that has them.
 */
async function reviewsOf(
  ctx: CliContext,
  bundle: Bundle,
  arg: BundleArg,
  home: string | undefined,
  pool: CheckerRunner,
): Promise<ReviewCalibration | null> {
  if (Object.keys(bundle.calibration?.reviews ?? {}).length === 0) return null;
  const [{ calibrateReviews }, { composeServices }] = await Promise.all([
    importLater<typeof import("../core/engine/review_calibration.ts")>(
      "../core/engine/review_calibration.ts",
      import.meta.url,
    ),
    importLater<typeof import("../adapters/compose.ts")>("../adapters/compose.ts", import.meta.url),
  ]);
  return await calibrateReviews(bundle, pool, {
    services: composeServices(),
    env: ctx.env,
    homeDir: await calibrationHome(ctx, bundle, arg, home),
  });
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const arg = await readBundleArg("calibrate", positionals[0], { home: values.home, ctx });
  // The sandbox starts while the bundle is parsed: a few verdicts need one worker, a thread
  // of this process (see commandCheckerPool).
  const pool = commandCheckerPool();
  pool.warm(arg.files.has("checker.js") ? "checker.js" : "checker.clj");
  let bundle: Bundle;
  let ask: AskJudge | null;
  try {
    bundle = await parseBundleLazily(arg);
    // The judge's key is checked before any checker runs.
    ask = values["judge-consistency"] ? await judgeAsk(ctx, bundle, arg, values.home) : null;
  } catch (e) {
    pool.close();
    throw e;
  }
  let result: CalibrationResult;
  let judge: JudgeConsistency | undefined;
  let reviews: ReviewCalibration | null = null;
  try {
    result = await calibrate(bundle, pool, {
      // No --min-margin: judgeMutations()'s default (core/calibrate/auto.ts, loaded with --auto).
      auto: values.auto ? { minMargin: opts.minMargin } : undefined,
    });
    reviews = await reviewsOf(ctx, bundle, arg, values.home, pool);
    if (ask) {
      const { measureCalibrationJudge } = await importLater<
        typeof import("../core/calibrate/judge_consistency.ts")
      >("../core/calibrate/judge_consistency.ts", import.meta.url);
      judge = await measureCalibrationJudge(bundle, pool, ask, {
        k: opts.k,
        acceptNoise: values["accept-judge-noise"],
      });
    }
  } finally {
    pool.close();
  }
  const ok = result.ok && (judge?.ok ?? true) && (reviews?.ok ?? true);
  const problems = [...result.problems, ...(judge?.problems ?? []), ...(reviews?.problems ?? [])];
  if (values.junit !== undefined) {
    const { calibrationJunit } = await importLater<typeof import("../core/bench/junit.ts")>(
      "../core/bench/junit.ts",
      import.meta.url,
    );
    await writeAtomic(
      resolve(ctx.cwd, values.junit),
      calibrationJunit(bundle.name, { ...result, ok, problems }, judge),
    );
  }
  if (values.json) {
    // Its format's schemas load only here (~10 ms of a text-only calibrate's start).
    const { CALIBRATE_FORMAT } = await importLater<typeof import("../core/ops/check_formats.ts")>(
      "../core/ops/check_formats.ts",
      import.meta.url,
    );
    printJson(ctx, CALIBRATE_FORMAT, {
      bundle: bundle.name,
      ...result,
      ok,
      problems,
      ...(judge ? { judgeConsistency: judge } : {}),
      ...(reviews ? { reviews } : {}),
    });
    return ok ? 0 : 1;
  }
  printText(ctx, bundle, result, judge, values.verbose === true);
  for (const c of reviews?.cases ?? []) {
    ctx.stdout(
      `  ${c.ok ? "ok  " : "BAD "}review ${c.name.padEnd(17)}${c.got} (expected ${c.expect})` +
        (c.reviewer ? `  reviewer: ${c.reviewer.verdict ?? c.reviewer.problem}` : "") + "\n",
    );
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  if (ok) {
    const n = reviews?.cases.length ?? 0;
    out(
      calibratedLine(result, judge) +
        (n > 0 ? `; the review decides ${n} update${n === 1 ? "" : "s"} as expected` : ""),
    );
    return 0;
  }
  out(`NOT CALIBRATED: ${problems.length} problem${problems.length === 1 ? "" : "s"}`);
  for (const p of problems) out(`  - ${p}`);
  return 1;
}

function printText(
  ctx: CliContext,
  bundle: Bundle,
  result: CalibrationResult,
  judge: JudgeConsistency | undefined,
  verbose: boolean,
): void {
  const out = (s: string) => ctx.stdout(s + "\n");
  out(`Calibrating ${bundle.name}  ${bundle.id}`);
  if (result.case !== undefined) {
    out(`  world ${result.case} (made by ${generatorOf(bundle)?.file ?? "generator.js"})`);
  }
  if (result.reference) {
    out(`  reference                 ${runLine(result.reference)}`);
    if (verbose || !result.ok) checkLines(result.reference, "      ").forEach(out);
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
    if (verbose) checkLines(v.run, "      ").forEach(out);
  }
  if (result.auto) autoLines(result.auto).forEach(out);
  if (judge) judgeLines(judge).forEach(out);
}

function calibratedLine(result: CalibrationResult, judge: JudgeConsistency | undefined): string {
  const n = Object.keys(result.damaged).length;
  const auto = result.auto
    ? `; every automatic damage scores at least ${result.auto.margin!.toFixed(3)} lower, ` +
      "and no invariance moves the reward"
    : "";
  const judged = judge
    ? judge.noiseAccepted
      ? `; the judge's noise (kappa ${judge.kappa!.toFixed(2)}) is accepted`
      : "; the judge agrees with itself and with calibration.edn"
    : "";
  return `calibrated: the reference passes every check; ${
    n === 1
      ? "1 damaged variant loses what it damages"
      : `${n} damaged variants lose what they damage`
  }${auto}${judged}`;
}
