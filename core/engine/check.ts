/**
 * The check use case, one path for `dvergr check` and MCP `catalog_check`: the shape check
 * of a bundle (every problem with its file and line), the case an answer is graded
 * against, and the checker's verdict on an answer given by world path.
 */
import { usageError } from "../errors.ts";
import type { FileBundle } from "../bundle/file_map.ts";
import type { Bundle } from "../bundle/types.ts";
import { bundleOf } from "../bundle/parse_core.ts";
import { analyseLazily } from "../bundle/parse_lazily.ts";
import type { BundleProblem } from "../bundle/types.ts";
import { contentId } from "../bundle/content_id.ts";
import { checkerInputFor } from "../bundle/checker_input.ts";
import type { CheckerRun, CheckerRunner } from "../checker.ts";
import {
  checkerFileLoadProblems,
  checkerLoadProblems,
  loadProblemsOf,
} from "../bundle/checker_loads.ts";
import { placeholderProblems } from "../bundle/task.ts";
import { generatorOf } from "../bundle/generator.ts";
import { importLater } from "../import_later.ts";

/** core/bundle/generated_cases.ts, loaded only for a bundle with generator.js. */
const generatedCases = () =>
  importLater<typeof import("../bundle/generated_cases.ts")>(
    "../bundle/generated_cases.ts",
    import.meta.url,
  );

/** A bundle that has problems (with its content id), or the parsed bundle. */
export type ShapeCheck =
  | { ok: false; name: string; id: string; problems: BundleProblem[] }
  | { ok: true; bundle: Bundle };

/** The shape check of a bundle's files. */
export async function shapeCheck(fb: FileBundle): Promise<ShapeCheck> {
  const analysis = await analyseLazily(fb);
  const { problems } = analysis;
  if (problems.length > 0) return { ok: false, name: fb.name, id: contentId(fb.files), problems };
  return { ok: true, bundle: bundleOf(fb, analysis) };
}

/**
 * The shape check with the checker's load problems (loaded even when the EDN has problems),
 * else the shape check, then the task's placeholders that neither its :params nor `params` (the
 * command's) fill, and whether checker.js loads in the sandbox: a syntax error, an import or
 * a throw while loading is a problem with its line (the shape check reads it as text); and
 * a generator.js's problems with the first world of every split (generatorProblems).
 */
export async function loadCheck(
  runner: CheckerRunner,
  fb: FileBundle,
  params: Record<string, unknown> = {},
): Promise<ShapeCheck> {
  return await loadCheckOf(runner, fb, await shapeCheck(fb), params);
}

/** loadCheck() of a bundle whose shape check is `shape`. */
async function loadCheckOf(
  runner: CheckerRunner,
  fb: FileBundle,
  shape: ShapeCheck,
  params: Record<string, unknown>,
): Promise<ShapeCheck> {
  if (!shape.ok) {
    // Every problem at once: the checker's own load problems beside the EDN's.
    const told = new Set(shape.problems.map((p) => p.file));
    const load = told.has("checker.js") || told.has("checker.clj")
      ? []
      : await checkerFileLoadProblems(fb.files, runner);
    return { ...shape, problems: [...shape.problems, ...load] };
  }
  const problems = [
    ...goldProblems(shape.bundle),
    ...placeholderProblems(shape.bundle, params),
    ...await checkerLoadProblems(shape.bundle, runner),
    ...(generatorOf(shape.bundle) === null
      ? []
      : await (await generatedCases()).generatorProblems(shape.bundle, runner, params)),
  ];
  if (problems.length === 0) return shape;
  return { ok: false, name: fb.name, id: shape.bundle.id, problems };
}

/**
 * loadCheck(), then `grade` of the bundle when it has no problems, with one checker call
 * fewer where the grading call tells what loadCheck()'s own would: a checker.js bundle
 * without generator.js and without problems of its own (gold, placeholders) is graded at
 * once. A checker.js module is evaluated before its input is read, so a run that succeeded
 * loaded it, and a run that failed while loading (a syntax error, a refused import, a throw
 * or a time-out) is the bundle's load problem as loadCheck()'s call finds it. Any other
 * failure, and a `grade` that throws (an answer not readable, an unknown case), ask
 * loadCheck()'s call after all, so that the bundle's problems come first as they would.
 */
export async function loadCheckGrading<T extends { run: CheckerRun }>(
  runner: CheckerRunner,
  fb: FileBundle,
  params: Record<string, unknown>,
  grade: (bundle: Bundle) => Promise<T>,
): Promise<{ shape: ShapeCheck; graded?: T }> {
  const shape = await shapeCheck(fb);
  const atOnce = shape.ok && shape.bundle.checkerFile === "checker.js" &&
    generatorOf(shape.bundle) === null && goldProblems(shape.bundle).length === 0 &&
    placeholderProblems(shape.bundle, params).length === 0;
  if (atOnce) {
    let graded: T | undefined;
    let failure: { error: unknown } | undefined;
    try {
      graded = await grade(shape.bundle);
    } catch (error) {
      failure = { error };
    }
    if (graded?.run.ok) return { shape, graded };
    const load = graded ? loadProblemsOf("checker.js", graded.run) : [];
    if (load.length > 0) {
      return { shape: { ok: false, name: fb.name, id: shape.bundle.id, problems: load } };
    }
    const loaded = await loadCheckOf(runner, fb, shape, params);
    if (!loaded.ok || graded) return { shape: loaded, ...(loaded.ok ? { graded } : {}) };
    throw failure!.error;
  }
  const loaded = await loadCheckOf(runner, fb, shape, params);
  return loaded.ok ? { shape: loaded, graded: await grade(loaded.bundle) } : { shape: loaded };
}

/**
 * Cases without gold: a case with no gold.edn gets the bundle's, and with neither its checker
 * gets gold nil, which a checker that grades against gold cannot use (every cell of the case
 * would fail to grade). When some case or the bundle has gold, a case with none is a problem;
 * a bundle with no gold anywhere has a checker that does not read it.
 */
export function goldProblems(bundle: Pick<Bundle, "cases" | "files">): BundleProblem[] {
  const has = (file: string) => bundle.files.has(file);
  if (has("gold.edn")) return [];
  const without = bundle.cases.filter((c) => !has(`cases/${c.id}/gold.edn`));
  if (without.length === 0 || without.length === bundle.cases.length) return [];
  return without.map((c) => ({
    file: `cases/${c.id}/gold.edn`,
    message: `is missing: case "${c.id}" has no gold.edn while other cases have one, and the ` +
      "bundle has no gold.edn to fall back on, so its checker would get gold nil: write the " +
      "case's gold.edn (or a gold.edn at the bundle's top for the cases without their own)",
  }));
}

/**
 * The case an answer is graded against: `requested` when the bundle has it (else a USAGE
 * error naming its cases), else the calibration's case, else the first, else null.
 */
export function answerCase(bundle: Bundle, requested?: string): string | null {
  if (requested !== undefined && !bundle.cases.some((c) => c.id === requested)) {
    throw usageError(
      `Bundle "${bundle.name}" has no case "${requested}"`,
      bundle.cases.length
        ? `Its cases include: ${bundle.cases.slice(0, 10).map((c) => c.id).join(", ")}`
        : "It is a single-environment bundle: leave out the case",
    );
  }
  return requested ?? bundle.calibration?.case ?? bundle.cases[0]?.id ?? null;
}

/**
 * The bundle and case an answer is graded against: answerCase() for a bundle without a
 * generator; for one with generator.js, the generated world `requested` names (else
 * calibration.edn's :case, else gen-test-0000), made now and added as the bundle's case.
 */
export async function answerWorld(
  bundle: Bundle,
  runner: CheckerRunner,
  requested?: string,
): Promise<{ bundle: Bundle; caseId: string | null }> {
  if (generatorOf(bundle) === null) return { bundle, caseId: answerCase(bundle, requested) };
  const { withNamedWorld } = await generatedCases();
  const w = await withNamedWorld(bundle, runner, requested ?? bundle.calibration?.case);
  if (w.problem !== undefined || w.case === undefined) {
    throw usageError(
      `Cannot grade the answer in a generated world of bundle "${bundle.name}": ${w.problem}`,
      "Name a world as gen-<split>-<index> (--case gen-test-0000), and see `dvergr check` " +
        "for generator.js's problems",
    );
  }
  return { bundle: w.bundle, caseId: w.case };
}

/** The checker's verdict on an answer, with the case and the world paths it graded. */
export interface AnswerVerdict {
  case: string | null;
  files: string[];
  run: CheckerRun;
}

/** Grades an answer (world path → text) with the bundle's checker. */
export async function gradeAnswer(
  bundle: Bundle,
  runner: CheckerRunner,
  answer: {
    files: Record<string, string>;
    caseId: string | null;
    params?: Record<string, unknown>;
    /** Pages the checker gets as `fetched` (default none). */
    fetched?: Record<string, string>;
    /** The judge's answers the checker gets as `judgements` (default none). */
    judgements?: Record<string, string>;
  },
): Promise<AnswerVerdict> {
  const run = await runner.check(bundle.checker, checkerInputFor(bundle, answer));
  return { case: answer.caseId, files: Object.keys(answer.files), run };
}
