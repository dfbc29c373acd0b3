/**
 * Calibration: proof that a bundle's checker grades right. The reference answer must
 * pass every check; each damaged variant must fail every check it names and score
 * strictly below the reference (docs/compatibility.md §4.1). Stricter than the earlier system:
 * a checker fault while grading is a problem (not a crash), a checker that does not load is
 * the bundle's BUNDLE_INVALID error (as `dvergr check` reports it), a variant naming no checks
 * or a check the checker never reports is a problem of its own.
 */
import { checkerInputFor } from "../bundle/checker_input.ts";
import { checkerLoadError } from "../bundle/checker_loads.ts";
import type { Bundle, DamagedVariant } from "../bundle/types.ts";
import type { CheckerRun, CheckerRunner } from "../checker.ts";
import type { AutoCalibration } from "./auto.ts";
import { generatorOf } from "../bundle/generator.ts";
import { importLater } from "../import_later.ts";

/** The automatic mutations (./auto.ts), loaded only with `auto`: ~2 ms of a start. */
const autoMutations = () => importLater<typeof import("./auto.ts")>("./auto.ts", import.meta.url);

export interface VariantResult {
  run: CheckerRun;
  /** Checks the variant should lose but still passes. */
  kept: string[];
  ok: boolean;
}

export interface CalibrationResult {
  ok: boolean;
  /** The bundle's content id. */
  bundleId: string;
  reference: CheckerRun | null;
  damaged: Record<string, VariantResult>;
  problems: string[];
  /** With `auto`: the automatic mutations of the reference (their problems are in `problems`). */
  auto?: AutoCalibration;
  /**
   * The generated world it graded against (a bundle with generator.js): calibration.edn's
   * `:case`, else `gen-test-0000`.
   */
  case?: string;
}

export interface CalibrateOptions {
  timeoutMs?: number;
  /** Also grade the automatic mutations of the reference, under this minimum margin. */
  auto?: { minMargin?: number };
}

/**
 * Runs the bundle's checker on its calibration and judges the result. With `auto`, the
 * automatic mutations are graded too, and they stand in for hand-written damaged
 * variants: a calibration without :damaged is then no problem.
 */
export async function calibrate(
  given: Bundle,
  runner: CheckerRunner,
  opts: CalibrateOptions = {},
): Promise<CalibrationResult> {
  // Generated worlds' module loads only for a bundle with generator.js.
  const world = generatorOf(given) === null
    ? { bundle: given, problem: undefined, case: undefined }
    : await (await importLater<typeof import("../bundle/generated_cases.ts")>(
      "../bundle/generated_cases.ts",
      import.meta.url,
    )).withCalibrationWorld(given, runner);
  if (world.problem !== undefined) {
    return {
      ok: false,
      bundleId: given.id,
      reference: null,
      damaged: {},
      problems: [world.problem],
    };
  }
  const result = await calibrateBundle(world.bundle, runner, opts);
  return world.case === undefined ? result : { ...result, case: world.case };
}

async function calibrateBundle(
  bundle: Bundle,
  runner: CheckerRunner,
  opts: CalibrateOptions,
): Promise<CalibrationResult> {
  const cal = bundle.calibration;
  if (!cal || !cal.reference) {
    return {
      ok: false,
      bundleId: bundle.id,
      reference: null,
      damaged: {},
      problems: [
        cal
          ? "calibration.edn has no :reference answer"
          : "no calibration.edn: nothing shows the checker grades right",
      ],
    };
  }
  const run = (files: Record<string, string>, v?: DamagedVariant) =>
    runner.check(
      bundle.checker,
      checkerInputFor(bundle, {
        files,
        caseId: cal.case ?? null,
        fetched: v?.fetched ?? cal.fetched,
        judgements: v?.judgements ?? cal.judgements,
      }),
      { timeoutMs: opts.timeoutMs },
    );

  const names = Object.keys(cal.damaged).sort();
  const [mutated, reference, ...runs] = await Promise.all([
    opts.auto
      ? autoMutations().then((m) => m.gradeMutations(bundle, runner, { timeoutMs: opts.timeoutMs }))
      : null,
    run(cal.reference),
    ...names.map((n) => run(cal.damaged[n].files, cal.damaged[n])),
  ]);

  const problems: string[] = [];
  if (!reference.ok) {
    // A checker that does not load grades nothing: the bundle is broken (exit 2), as `dvergr
    // check` says, not a calibration that failed once for every answer.
    const broken = checkerLoadError(bundle, reference);
    if (broken) throw broken;
    problems.push(`the reference: the checker faulted (${reference.fault}): ${reference.message}`);
  } else {
    const failed = Object.entries(reference.verdict.checks).filter(([, v]) => !v).map(([k]) => k);
    if (failed.length > 0) problems.push(`the reference fails ${checkList(failed)}`);
  }
  if (names.length === 0 && !opts.auto) {
    problems.push(
      "calibration.edn has no :damaged variants: nothing shows the checker notices damage",
    );
  }

  const damaged: Record<string, VariantResult> = {};
  names.forEach((name, i) => {
    const r = runs[i];
    const loses = cal.damaged[name].loses;
    if (!r.ok) {
      damaged[name] = { run: r, kept: [], ok: false };
      problems.push(`${name}: the checker faulted (${r.fault}): ${r.message}`);
      return;
    }
    const checks = r.verdict.checks;
    const kept = loses.filter((k) => checks[k] === true);
    const unknown = loses.filter((k) => !(k in checks));
    const below = reference.ok && r.verdict.reward < reference.verdict.reward;
    const ok = loses.length > 0 && kept.length === 0 && unknown.length === 0 && below;
    damaged[name] = { run: r, kept, ok };
    if (loses.length === 0) {
      problems.push(`${name} names no checks in :loses: say which checks this damage must fail`);
    } else if (unknown.length > 0) {
      problems.push(`${name} loses ${checkList(unknown)}, which the checker does not report`);
    } else if (kept.length > 0) {
      problems.push(`${name} still passes ${checkList(kept)}`);
    } else if (reference.ok && !below) {
      problems.push(
        `${name} does not score below the reference (${fmt(r.verdict.reward)} vs ${
          fmt(reference.verdict.reward)
        })`,
      );
    }
  });

  if (mutated === null) {
    return { ok: problems.length === 0, bundleId: bundle.id, reference, damaged, problems };
  }
  const auto = (await autoMutations()).judgeMutations(reference, mutated, opts.auto?.minMargin);
  problems.push(...auto.problems);
  return { ok: problems.length === 0, bundleId: bundle.id, reference, damaged, problems, auto };
}

function checkList(names: string[]): string {
  return `[${names.map((n) => `:${n}`).join(" ")}]`;
}

function fmt(x: number): string {
  return x.toFixed(3);
}
