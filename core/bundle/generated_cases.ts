/**
 * Generated worlds made: a bundle's generator.js (or generator.clj) asked (through the
 * injected runner, which runs it in the checker's sandbox) for the worlds of a benchmark, of
 * `dvergr check` and of calibration; the rules are in core/bundle/generator.ts. A generator
 * that throws, hangs, runs out of memory, returns something that is not a world, or a world
 * that cannot be made is a BUNDLE_INVALID error (exit 2) naming the generator and the world.
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
  type Generator,
  generatorOf,
  readGeneratedCaseId,
  type Split,
  SPLITS,
  worldProblems,
} from "./generator.ts";
import type { Bundle, BundleCase, BundleProblem } from "./types.ts";
import { clojureEdnFor } from "./clojure_input.ts";

/** Worlds asked for at once: enough to keep the sandbox's workers busy. */
const WINDOW = 16;

/** One world made, or why it could not be. */
type Made = { ok: true; case: BundleCase } | { ok: false; problem: BundleProblem };

/**
 * Asks the generator for world `index` of `set` and checks what it gave; `params` are the
 * run's (over workflow.edn's :params).
 */
async function makeWorld(
  bundle: Bundle,
  gen: Generator,
  runner: CheckerRunner,
  set: { split: Split; seed: number; count: number },
  index: number,
  params: Record<string, unknown>,
): Promise<Made> {
  const id = generatedCaseId(set.split, index, set.count);
  const request = generateRequest(set, index, { ...bundle.definition.params, ...params });
  const run = gen.file === "generator.clj"
    ? await runner.generate(
      gen.source,
      { ...request, clojure: { params: clojureEdnFor(bundle, { files: {}, params }).params } },
      { file: gen.file },
    )
    : await runner.generate(gen.source, request);
  if (!run.ok) return { ok: false, problem: runProblem(gen.file, id, run) };
  const problems = worldProblems(run.world, bundle.fixtures);
  if (problems.length > 0) {
    return {
      ok: false,
      problem: {
        file: gen.file,
        message: `world ${id}: generate returned a world that cannot be made: ${
          problems.join("; ")
        }`,
      },
    };
  }
  return { ok: true, case: generatedCase(id, run.world) };
}

/** A failed generate call as a problem of the generator, at its line when the sandbox gave one. */
function runProblem(
  file: Generator["file"],
  id: string,
  run: Extract<GeneratorRun, { ok: false }>,
): BundleProblem {
  const at = new RegExp(`\\(${file.replace(".", "\\.")} line (\\d+)(?:, column (\\d+))?\\)`)
    .exec(run.message);
  return {
    file,
    ...(at ? { line: Number(at[1]) } : {}),
    ...(at?.[2] ? { column: Number(at[2]) } : {}),
    message: `world ${id}: ${run.message}`,
  };
}

function invalid(bundle: Bundle, gen: Generator, problems: BundleProblem[]): DvergrError {
  return new DvergrError(
    "BUNDLE_INVALID",
    `Bundle "${bundle.name}": ${gen.file} could not make its worlds: ${
      problems.map((p) => p.message).join("; ")
    }`,
    {
      hint: `Fix ${gen.file}; \`dvergr check\` runs it on the first world of every split`,
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
          "or add a generator.js exporting generate({seed, split, index, params}) (or a " +
          "generator.clj defining generate)",
    },
  );
}

/**
 * The world `caseId` of `set` made again (the viewer shows an attempt's files against the
 * world it was given), or why not: `caseId` is not one of the set's, or the generator fails
 * now. Only that world is made; `params` are the run's.
 */
export async function generatedCaseAgain(
  bundle: Bundle,
  runner: CheckerRunner,
  set: GeneratedSet,
  caseId: string,
  params: Record<string, unknown> = {},
): Promise<{ ok: true; case: BundleCase } | { ok: false; why: string }> {
  const gen = generatorOf(bundle);
  if (gen === null) return { ok: false, why: "the bundle has no generator" };
  const at = readGeneratedCaseId(caseId);
  if (
    at === null || at.split !== set.split || at.index >= set.count ||
    generatedCaseId(set.split, at.index, set.count) !== caseId
  ) {
    return { ok: false, why: `${caseId} is not one of the experiment's generated worlds` };
  }
  const made = await makeWorld(bundle, gen, runner, set, at.index, params);
  return made.ok ? made : { ok: false, why: made.problem.message };
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
  const gen = generatorOf(bundle);
  if (gen === null) throw noGenerator(bundle);
  const cases: BundleCase[] = new Array(set.count);
  for (let start = 0; start < set.count; start += WINDOW) {
    const indexes = Array.from(
      { length: Math.min(WINDOW, set.count - start) },
      (_, i) => start + i,
    );
    const made = await Promise.all(
      indexes.map((i) => makeWorld(bundle, gen, runner, set, i, params)),
    );
    const failed = made.flatMap((m) => m.ok ? [] : [m.problem]);
    if (failed.length > 0) throw invalid(bundle, gen, failed.slice(0, 3));
    made.forEach((m, i) => cases[start + i] = (m as { case: BundleCase }).case);
  }
  return { ...bundle, cases, generated: generatedIdentity(gen, set, cases) };
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
  const gen = generatorOf(bundle);
  if (gen === null) return [];
  const problems: BundleProblem[] = [];
  for (const split of SPLITS) {
    const set = { split, seed: DEFAULT_GENERATOR_SEED, count: 1 };
    const [a, b] = await Promise.all(
      [0, 0].map(() => makeWorld(bundle, gen, runner, set, 0, params)),
    );
    if (!a.ok || !b.ok) {
      problems.push(!a.ok ? a.problem : (b as { problem: BundleProblem }).problem);
      continue;
    }
    if (caseHash(a.case) !== caseHash(b.case)) {
      problems.push({
        file: gen.file,
        message: `world ${a.case.id}: generate answered the same request twice with different ` +
          `worlds (${differingPart(a.case, b.case)}): a generator must draw only from its ` +
          "seed (Math.random and rand start from it), never from the clock (Date)",
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
  const gen = generatorOf(bundle);
  if (gen === null || bundle.cases.length > 0) return { bundle };
  const which = id === undefined ? { split: DEFAULT_SPLIT, index: 0 } : readGeneratedCaseId(id);
  if (which === null) {
    return {
      bundle,
      problem: `"${id}" names no generated world: write gen-<split>-<index>, e.g. ` +
        `"gen-test-0000" or "gen-train-0003"`,
    };
  }
  const set = { split: which.split, seed: DEFAULT_GENERATOR_SEED, count: 0 };
  const made = await makeWorld(bundle, gen, runner, set, which.index, {});
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
