/**
 * Generated worlds: what a bundle's generator.js is asked and how its answers become cases.
 * Pure.
 *
 * A bundle may have generator.js instead of cases/: an ES module exporting
 * `generate({seed, split, index, params})` → `{files, gold}`, run in the checker's sandbox.
 * A benchmark of N worlds of a split (`--cases N --split train|test`, default split test)
 * asks it for indexes 0..N-1; each world is a case, id `gen-<split>-<index>` (four digits
 * at least: `gen-test-0007`), its fixtures the shared fixtures/ overlaid by `files`, its
 * gold `gold`. `seed` is the world's own seed: the first 32 bits of the SHA-256 of
 * `<benchmark seed>/<split>/<index>`, so every world of every split draws other numbers and
 * the same world the same ones every time. Inside a generate call Math.random starts from
 * that seed too; `Date` reads the clock, which a generator must not let reach its world
 * (`dvergr check` generates every split's first world twice and compares).
 */
import type { GeneratedWorld, GenerateRequest } from "../checker.ts";
import { sha256Hex } from "../sha256.ts";
import { conflictText, fileDirConflict, relativePathProblem } from "./file_map.ts";
import { SANDBOX_NAMES } from "./sandbox_names.ts";
import type { Bundle, BundleCase, GeneratedIdentity } from "./types.ts";

export type { GeneratedIdentity };

/** The file a generator is: generator.js, else the earlier system's generator.clj. */
export const GENERATOR_FILE = "generator.js";
export const GENERATOR_FILES = [GENERATOR_FILE, "generator.clj"] as const;
export type GeneratorFile = (typeof GENERATOR_FILES)[number];

/** A bundle's generator: its file and source. */
export interface Generator {
  file: GeneratorFile;
  source: string;
}

export const SPLITS = ["train", "test"] as const;
export type Split = (typeof SPLITS)[number];

/** The split a benchmark generates when none is named. */
export const DEFAULT_SPLIT: Split = "test";

/** The benchmark seed when none is given: the fixed shuffle's (docs/compatibility.md §7.2). */
export const DEFAULT_GENERATOR_SEED = 20261001;

/** Which worlds a benchmark generates. */
export interface GeneratedSet {
  split: Split;
  /** Worlds 0..count-1. */
  count: number;
  /** The benchmark seed each world's seed is derived from. */
  seed: number;
}

/** The seed of world `index` of `split` under benchmark seed `seed`: an unsigned 32-bit number. */
export function worldSeed(seed: number, split: Split, index: number): number {
  return parseInt(sha256Hex(`${seed}/${split}/${index}`).slice(0, 8), 16);
}

/** The request generate gets for world `index` of `split`. */
export function generateRequest(
  set: { split: Split; seed: number },
  index: number,
  params: Record<string, unknown>,
): GenerateRequest {
  return { seed: worldSeed(set.seed, set.split, index), split: set.split, index, params };
}

/** A generated case's id: `gen-test-0007` (as many digits as the set's last index needs, 4 at least). */
export function generatedCaseId(split: Split, index: number, count = 0): string {
  const width = Math.max(4, String(Math.max(0, count - 1)).length);
  return `gen-${split}-${String(index).padStart(width, "0")}`;
}

/** The split and index a generated case id names, or null when it names none. */
export function readGeneratedCaseId(id: string): { split: Split; index: number } | null {
  const m = /^gen-(train|test)-(\d{4,7})$/.exec(id);
  return m ? { split: m[1] as Split, index: Number(m[2]) } : null;
}

/**
 * Why the files of a generated world cannot be a world, one line each: a path that is not
 * an absolute normalised world path, one under a directory the sandbox keeps for itself
 * (/.dvergr, /run, /proc… as for fixtures), one that is a file where another is a directory
 * (also against the shared fixtures). Empty when it is a world.
 */
export function worldProblems(
  world: GeneratedWorld,
  sharedFixtures: Record<string, string> = {},
): string[] {
  const problems: string[] = [];
  for (const path of Object.keys(world.files)) {
    const rel = path.startsWith("/") ? path.slice(1) : null;
    const why = rel === null
      ? "is not an absolute world path such as /docs/a.md"
      : relativePathProblem(rel, "world");
    if (why) {
      problems.push(`files: ${JSON.stringify(path)} ${why}`);
      continue;
    }
    const top = rel!.split("/")[0];
    if (SANDBOX_NAMES.has(top) && rel!.includes("/")) {
      problems.push(
        `files: ${JSON.stringify(path)} is under /${top}, which the sandbox of a command ` +
          "candidate keeps for itself: use another top-level directory, such as /docs",
      );
    }
  }
  if (problems.length > 0) return problems;
  const conflict = fileDirConflict(
    [...Object.keys(sharedFixtures), ...Object.keys(world.files)].map((p) => p.slice(1)),
  );
  if (conflict) {
    problems.push(
      `files: the world (fixtures/ overlaid by the generated files) cannot be made: world path ${
        conflictText({ file: "/" + conflict.file, inside: "/" + conflict.inside })
      }`,
    );
  }
  return problems;
}

/** A generated world as a case of the bundle. */
export function generatedCase(id: string, world: GeneratedWorld): BundleCase {
  return {
    id,
    gold: world.gold,
    fixtures: { ...world.files },
    ...(world.goldEdn !== undefined ? { goldEdn: world.goldEdn } : {}),
  };
}

/** The hash of one generated case (its id, files and gold), for GeneratedIdentity.worlds. */
export function caseHash(c: BundleCase): string {
  const files = Object.keys(c.fixtures).sort().map((p) => [p, c.fixtures[p]]);
  return sha256Hex(JSON.stringify([c.id, files, canonical(c.gold)]));
}

/** A value with object keys sorted at every level, so equal values print alike. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(Object.keys(o).sort().map((k) => [k, canonical(o[k])]));
  }
  return v;
}

/** The identity of a generated set, from the generator and the cases made. */
export function generatedIdentity(
  generator: Generator,
  set: GeneratedSet,
  cases: readonly BundleCase[],
): GeneratedIdentity {
  return {
    file: generator.file,
    generator: sha256Hex(generator.source),
    split: set.split,
    count: set.count,
    seed: set.seed,
    worlds: sha256Hex(cases.map(caseHash).join("\n")),
  };
}

/** The bundle's generator (generator.js wins over generator.clj), or null when it has none. */
export function generatorOf(bundle: Pick<Bundle, "files">): Generator | null {
  for (const file of GENERATOR_FILES) {
    const source = bundle.files.get(file);
    if (source !== undefined) return { file, source };
  }
  return null;
}
