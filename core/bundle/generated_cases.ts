/**
 * Generated worlds made: a bundle's generator.js asked (through the injected runner, which
 * runs it in the checker's sandbox) for the worlds of a benchmark, of `dvergr check` and of
 * calibration; the rules are in core/bundle/generator.ts. A generator that throws, hangs,
 * runs out of memory, returns something that is not a world, or a world that cannot be
 * made is a BUNDLE_INVALID error (exit 2) naming generator.js and the world.
 */
import { DvergrError } from "../errors.ts";
import type { CheckerRunner, GeneratorRun } from "../checker.ts";
import {
  caseHash,
  DEFAULT_GENERATOR_SEED,
  DEFAULT_SPLIT,
  generatedCase,
  generatedCaseId,
  generatedIdentity,
  type GeneratedSet,
  generateRequest,
  GENERATOR_FILE,
  generatorOf,
  readGeneratedCaseId,
  type Split,
  SPLITS,
  worldProblems,
} from "./generator.ts";
import type { Bundle, BundleCase, BundleProblem } from "./types.ts";

/** Worlds asked for at once: enough to keep the sandbox's workers busy. */
const WINDOW = 16;

/** One world made, or why it could not be. */
type Made = { ok: true; case: BundleCase } | { ok: false; problem: BundleProblem };

/** Asks the generator for world `index` of `set` and checks what it gave. */
async function makeWorld(
  bundle: Bundle,
  source: string,
  runner: CheckerRunner,
  set: { split: Split; seed: number; count: number },
  index: number,
  params: Record<string, unknown>,
): Promise<Made> {
  const id = generatedCaseId(set.split, index, set.count);
  const run = await runner.generate(source, generateRequest(set, index, params));
  if (!run.ok) return { ok: false, problem: runProblem(id, run) };
  const problems = worldProblems(run.world, bundle.fixtures);
  if (problems.length > 0) {
    return {
      ok: false,
      problem: {
        file: GENERATOR_FILE,
        message: `world ${id}: generate returned a world that cannot be made: ${
          problems.join("; ")
        }`,
      },
    };
  }
  return { ok: true, case: generatedCase(id, run.world) };
}

/** A failed generate call as a problem of generator.js, at its line when the sandbox gave one. */
function runProblem(id: string, run: Extract<GeneratorRun, { ok: false }>): BundleProblem {
  const at = /\(generator\.js line (\d+)(?:, column (\d+))?\)/.exec(run.message);
  return {
    file: GENERATOR_FILE,
    ...(at ? { line: Number(at[1]) } : {}),
    ...(at?.[2] ? { column: Number(at[2]) } : {}),
    message: `world ${id}: ${run.message}`,
  };
}

function invalid(bundle: Bundle, problems: BundleProblem[]): DvergrError {
  return new DvergrError(
    "BUNDLE_INVALID",
    `Bundle "${bundle.name}": generator.js could not make its worlds: ${
      problems.map((p) => p.message).join("; ")
    }`,
    {
      hint: "Fix generator.js; `dvergr check` runs it on the first world of every split",
      details: { bundle: bundle.name, problems },
    },
  );
}

function noGenerator(bundle: Bundle): DvergrError {
  return new DvergrError(
    "USAGE",
    `Cannot generate worlds of bundle "${bundle.name}": it has no generator.js`,
    {
      hint: bundle.cases.length > 0
        ? "Its worlds are its cases/: --cases N takes the first N of them, without --split or --seed"
        : "Leave out --cases, --split and --seed (a bundle with fixtures/ only is one world), " +
          "or add a generator.js exporting generate({seed, split, index, params})",
    },
  );
}

/**
 * The bundle with the `count` worlds of `set` as its cases (ids `gen-<split>-<index>`) and
 * their identity in `generated`; `params` are the run's (over workflow.edn's :params).
 */
export async function withGeneratedCases(
  bundle: Bundle,
  runner: CheckerRunner,
  set: GeneratedSet,
  params: Record<string, unknown> = {},
): Promise<Bundle> {
  const source = generatorOf(bundle);
  if (source === null) throw noGenerator(bundle);
  const merged = { ...bundle.definition.params, ...params };
  const cases: BundleCase[] = new Array(set.count);
  for (let start = 0; start < set.count; start += WINDOW) {
    const indexes = Array.from(
      { length: Math.min(WINDOW, set.count - start) },
      (_, i) => start + i,
    );
    const made = await Promise.all(
      indexes.map((i) => makeWorld(bundle, source, runner, set, i, merged)),
    );
    const failed = made.flatMap((m) => m.ok ? [] : [m.problem]);
    if (failed.length > 0) throw invalid(bundle, failed.slice(0, 3));
    made.forEach((m, i) => cases[start + i] = (m as { case: BundleCase }).case);
  }
  return { ...bundle, cases, generated: generatedIdentity(source, set, cases) };
}

/**
 * What `dvergr check` finds wrong with a bundle's generator: the first world of every split
 * is generated twice (each under the default seed and workflow.edn's :params merged with
 * `params`); a failed call, a world that cannot be made and two different answers to the
 * same request are problems of generator.js. None without a generator.
 */
export async function generatorProblems(
  bundle: Bundle,
  runner: CheckerRunner,
  params: Record<string, unknown> = {},
): Promise<BundleProblem[]> {
  const source = generatorOf(bundle);
  if (source === null) return [];
  const merged = { ...bundle.definition.params, ...params };
  const problems: BundleProblem[] = [];
  for (const split of SPLITS) {
    const set = { split, seed: DEFAULT_GENERATOR_SEED, count: 1 };
    const [a, b] = await Promise.all(
      [0, 0].map(() => makeWorld(bundle, source, runner, set, 0, merged)),
    );
    if (!a.ok || !b.ok) {
      problems.push(!a.ok ? a.problem : (b as { problem: BundleProblem }).problem);
      continue;
    }
    if (caseHash(a.case) !== caseHash(b.case)) {
      problems.push({
        file: GENERATOR_FILE,
        message: `world ${a.case.id}: generate answered the same request twice with different ` +
          `worlds (${differingPart(a.case, b.case)}): a generator must draw only from its ` +
          "seed (Math.random starts from it), never from the clock (Date)",
      });
    }
  }
  return problems;
}

/** Which part of two worlds of one request differs: a file's path, or the gold. */
function differingPart(a: BundleCase, b: BundleCase): string {
  const paths = new Set([...Object.keys(a.fixtures), ...Object.keys(b.fixtures)]);
  for (const p of [...paths].sort()) {
    if (a.fixtures[p] !== b.fixtures[p]) return `file ${JSON.stringify(p)} differs`;
  }
  return "the gold differs";
}

/** A generated bundle with one named world as its case, or why that world could not be made. */
export interface NamedWorld {
  bundle: Bundle;
  /** The generated case's id, when one was made. */
  case?: string;
  /** Why the world could not be made. */
  problem?: string;
}

/**
 * For a bundle with a generator: the world `id` names (a generated id such as
 * `gen-train-0003`; default `gen-test-0000`), generated under the default seed and
 * workflow.edn's :params and added to the bundle as its one case. Other bundles are given
 * back as they are.
 */
export async function withNamedWorld(
  bundle: Bundle,
  runner: CheckerRunner,
  id: string | undefined,
): Promise<NamedWorld> {
  const source = generatorOf(bundle);
  if (source === null || bundle.cases.length > 0) return { bundle };
  const which = id === undefined ? { split: DEFAULT_SPLIT, index: 0 } : readGeneratedCaseId(id);
  if (which === null) {
    return {
      bundle,
      problem: `"${id}" names no generated world: write gen-<split>-<index>, e.g. ` +
        `"gen-test-0000" or "gen-train-0003"`,
    };
  }
  const set = { split: which.split, seed: DEFAULT_GENERATOR_SEED, count: 0 };
  const made = await makeWorld(
    bundle,
    source,
    runner,
    set,
    which.index,
    bundle.definition.params,
  );
  if (!made.ok) return { bundle, problem: made.problem.message };
  // The id as written (its digits), so the case is found by it.
  const kase = { ...made.case, id: id ?? made.case.id };
  return { bundle: { ...bundle, cases: [kase] }, case: kase.id };
}

/**
 * The bundle calibration grades: for a bundle with a generator, the world calibration.edn's
 * `:case` names (else `gen-test-0000`) as its case, the calibration pointed at it.
 */
export async function withCalibrationWorld(
  bundle: Bundle,
  runner: CheckerRunner,
): Promise<NamedWorld> {
  const named = bundle.calibration?.case;
  const w = await withNamedWorld(bundle, runner, named);
  if (w.problem !== undefined && named !== undefined) {
    return { ...w, problem: `calibration.edn's :case ${w.problem}` };
  }
  if (w.case === undefined) return w;
  const cal = w.bundle.calibration;
  return { ...w, bundle: { ...w.bundle, calibration: cal ? { ...cal, case: w.case } : null } };
}
