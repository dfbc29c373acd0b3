import { parseCommandArgs, rangeFlag } from "./args.ts";
import type { CliContext } from "./context.ts";
import { PLAN_FORMAT } from "../core/ops/grading.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { EXPERIMENT_HOME_HELP, withExperiment } from "./experiment_homes.ts";
import { type PilotPlan, planFromPilot } from "../core/engine/plan_from_pilot.ts";
import { DEFAULT_ALPHA, DEFAULT_DELTA } from "../core/bench/sequential.ts";
import { formatFixed } from "../core/bench/format_fixed.ts";
import type { ComparisonPlan, FixedPlan } from "../core/bench/power_plan.ts";
import { composeServices } from "../adapters/compose.ts";

export const HELP = `dvergr plan <experiment> --half-width H [--alpha A] [options]

Plans a benchmark from a pilot: reads the paired reward differences of each candidate
against the baseline in a finished (or partial) experiment and prints how many cases ×
repetitions a fixed-size paired interval of half-width H needs, and how many cells a run
with --stop-when-decided is expected to use on that plan (simulated from the pilot's pairs).
The experiment is its id or a unique prefix (the benchmark prints it).

Options:
  --half-width H  the half-width of the planned interval of the reward difference
                  (required; e.g. 0.05)
  --alpha A       the error level: a (1 - A) interval (default 0.05)
  --delta D       the equivalence margin of the simulated stopping rule (default 0.02)
  --baseline NAME the candidate the others are compared with, as benchmark --baseline
                  names it (a model candidate also by its model id or alias; default:
                  the pilot's leaderboard top)
${EXPERIMENT_HOME_HELP}
  --json          print the plan as JSON
  -h, --help      show this help

Example: a pilot of 20 cases, then the plan for a ±0.05 interval
  dvergr benchmark bundle --candidate mine=cmd:./agent.sh --candidate builtin:noop --cases 20
  dvergr plan 3f2a --half-width 0.05 --baseline builtin:noop

Exit status: 0 planned; 1 the pilot has fewer than two pairs graded for every comparison,
so none could be planned; 2 bad input.
`;

export const OPTIONS = {
  "half-width": { type: "string" },
  alpha: { type: "string" },
  delta: { type: "string" },
  baseline: { type: "string" },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("plan", args, OPTIONS);
  if (positionals.length !== 1) {
    throw usageError(
      `"dvergr plan" takes one experiment, got ${positionals.length}`,
      "Write dvergr plan <experiment> --half-width 0.05",
    );
  }
  const halfWidth = rangeFlag("plan", "half-width", values["half-width"], "halfWidth");
  if (halfWidth === undefined) {
    throw usageError(
      "Cannot plan without --half-width",
      "Say how precise the paired interval should be, e.g. --half-width 0.05",
    );
  }
  return {
    experiment: positionals[0],
    halfWidth,
    alpha: rangeFlag("plan", "alpha", values.alpha, "alpha") ?? DEFAULT_ALPHA,
    delta: rangeFlag("plan", "delta", values.delta, "delta") ?? DEFAULT_DELTA,
    baseline: values.baseline,
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    json: values.json === true,
  };
}

const pct = (x: number) => `${formatFixed(100 * x, 0)}%`;
const signed = (x: number) => (x > 0 ? "+" : "") + formatFixed(x, 3);
const cellsOf = (f: FixedPlan) =>
  `${f.cases} case${f.cases === 1 ? "" : "s"} × ${f.repetitions} (${f.cells} cells)`;

/** The plan of one comparison in lines a person reads. */
function comparisonLines(p: PilotPlan, candidate: string, plan: ComparisonPlan | null): string[] {
  const head = `${candidate} vs ${p.baseline}`;
  if (plan === null) return [`${head}: fewer than two pairs graded in the pilot, nothing to plan`];
  const { pilot, sequential: s } = plan;
  const level = formatFixed(100 * (1 - p.alpha), 0);
  const within = pilot.sdWithinCases === null
    ? "within cases unknown: one repetition per case"
    : `within cases ${formatFixed(pilot.sdWithinCases, 3)}`;
  const lines = [
    `${head}: ${pilot.pairs} pairs over ${pilot.cases} cases, mean difference ${
      signed(pilot.meanDifference)
    }, sd ${formatFixed(pilot.sd, 3)} (between cases ${
      formatFixed(pilot.sdBetweenCases, 3)
    }, ${within})`,
    `  a fixed-size ${level}% interval of ±${p.halfWidth} needs:`,
    ...plan.fixed.map((f) =>
      `    ${f.repetitions} repetition${
        f.repetitions === 1 ? "" : "s"
      }: ${f.cases} cases (${f.cells} cells)` +
      (p.casesAvailable !== null && f.cases > p.casesAvailable
        ? ` — more than the bundle's ${p.casesAvailable}`
        : "")
    ),
  ];
  if (pilot.sd === 0) {
    lines.push(
      "  (the pilot's differences do not vary, so any size gives a zero-width interval: a " +
        "larger pilot says how much the cases really vary)",
    );
  }
  lines.push(
    plan.recommended
      ? `  cheapest that fits: ${cellsOf(plan.recommended)}`
      : `  none fits the bundle's ${p.casesAvailable} cases: more repetitions cannot make up for cases`,
  );
  const on = plan.recommended ?? plan.fixed[0];
  lines.push(
    `  with --stop-when-decided on ${cellsOf(on)}: expected ${formatFixed(s.expectedCells, 0)} ` +
      `cells (${pct(1 - s.expectedCells / on.cells)} fewer; runs decided ${pct(s.decided)}, ` +
      `equivalent ${pct(s.equivalent)}, open ${pct(s.open)} of ${s.runs} simulated)`,
  );
  return lines;
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const plan = await withExperiment(
    ctx,
    { home: opts.home, store: opts.store, blobs: opts.blobs },
    opts.experiment,
    "plan from",
    (home, meta) =>
      planFromPilot(home, meta, {
        halfWidth: opts.halfWidth,
        alpha: opts.alpha,
        delta: opts.delta,
        baseline: opts.baseline,
      }, composeServices().candidates),
  );
  const planned = plan.comparisons.some((c) => c.plan !== null);
  if (opts.json) printJson(ctx, PLAN_FORMAT, plan);
  else {
    const out = (s: string) => ctx.stdout(s + "\n");
    out(
      `Pilot ${plan.experiment} (bundle ${plan.bundle}${
        plan.casesAvailable !== null ? `, ${plan.casesAvailable} cases` : ""
      }), baseline ${plan.baseline}`,
    );
    for (const c of plan.comparisons) comparisonLines(plan, c.candidate, c.plan).forEach(out);
  }
  return planned ? 0 : 1;
}
