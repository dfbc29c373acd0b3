/**
 * An experiment's definition, its id and its cells. Pure.
 *
 * The definition holds everything that decides results: the bundle's content id (its
 * checker, fixtures, cases, gold), the candidates' identities, the selected case ids, the
 * repetitions, the run's params, the filled task, the time limit and the budget. Its id is
 * the SHA-256 of its canonical JSON (object keys sorted, no whitespace), written as a UUID
 * (the first 128 bits). Running the same definition again finds the same experiment and
 * resumes it; any change makes a new experiment beside the old one.
 */
import { checkRange } from "../ranges.ts";
import { DvergrError } from "../errors.ts";
import type { Bundle } from "../bundle/types.ts";
import type { GeneratedIdentity, Split } from "../bundle/generator.ts";
import { fillTask } from "../bundle/task.ts";
import type { Candidate } from "./candidate.ts";
import { cellKey } from "./records.ts";
import { selectCases } from "./shuffle.ts";
import { sha256Hex } from "../sha256.ts";

export const DEFAULT_TIMEOUT_MS = 600_000;
export const DEFAULT_BUDGET_MICROS = 500_000;

export interface ExperimentDefinition {
  format: "dvergr-experiment/1";
  bundle: string;
  candidates: { name: string; identity: Record<string, unknown> }[];
  /** Selected case ids in bundle order; null for a bundle without cases. */
  cases: string[] | null;
  repetitions: number;
  /** The run's params (merged over the definition's for the task and the checker). */
  params: Record<string, unknown>;
  task: string;
  timeoutMs: number;
  budgetMicros: number;
  /** What grades besides the bundle's checker (the judge model); absent when nothing does. */
  verifier?: Record<string, unknown>;
  /**
   * The worlds its cases are, when generator.js made them: the generator's hash, the split,
   * the count, the seed and a hash of the worlds (core/bundle/generator.ts).
   */
  generated?: GeneratedIdentity;
  /**
   * The experiment whose attempts' kept evidence this one grades again (`dvergr regrade`):
   * no candidate runs; absent for an experiment whose candidates ran.
   */
  regradeOf?: string;
}

export interface Cell {
  candidate: string;
  caseId: string | null;
  repetition: number;
  /** cellKey(candidate, caseId, repetition). */
  key: string;
  /** Decides resume: a record with another input hash is not this cell's result. */
  inputHash: string;
}

/**
 * An experiment's cells in run order (repetition, then case, then candidate), each computed
 * from its index when asked for; iterating yields them in that order.
 */
export interface PlanCells extends Iterable<Cell> {
  readonly length: number;
  /** The cell at index `i` (0 ≤ i < length), a new object each time. */
  at(i: number): Cell;
  /** The input hash of the cell at index `i`, without the rest of the cell. */
  inputHashAt(i: number): string;
  /** The candidate of the cell at index `i`. */
  candidateAt(i: number): string;
  /** The index of the cell (candidate, case, repetition), or -1 when the plan has none. */
  indexOf(candidate: string, caseId: string | null, repetition: number): number;
}

export interface ExperimentPlan {
  id: string;
  definition: ExperimentDefinition;
  /** Cells in run order: repetition, then case, then candidate. */
  cells: PlanCells;
}

export interface PlanOptions {
  /** The first N cases of the fixed shuffle (docs/compatibility.md §7.2). */
  cases?: number;
  /** Exactly these cases (bundle order). */
  caseIds?: string[];
  /** With a generator: the split its `cases` worlds are of (default test). */
  split?: Split;
  /** With a generator: the seed its worlds' seeds are derived from (default 20261001). */
  seed?: number;
  repetitions?: number;
  params?: Record<string, unknown>;
  timeoutMs?: number;
  budgetMicros?: number;
  /** The verifier's identity beyond the bundle (the judge: prepareEffects().identity). */
  verifier?: Record<string, unknown> | null;
}

/** JSON with object keys sorted at every level: one text per value. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]));
    }
    return v;
  });
}

/** SHA-256 of canonical JSON, as a UUID-shaped string of its first 128 bits. */
export function contentHash(value: unknown): string {
  return hashJson(canonicalJson(value));
}

/** SHA-256 of a JSON text, as a UUID-shaped string of its first 128 bits. */
function hashJson(json: string): string {
  // Not node:crypto: a run hashes each cell's inputs as it reads the cell's records, and
  // node:crypto's hash objects hold native memory until V8 collects them (sha256.ts).
  const h = sha256Hex(json);
  // One flat string: a template of slices is a tree of nine small strings (~450 bytes), and
  // a plan holds one per cell for the whole run.
  return h.slice(0, 32).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
}

/** The id of an experiment definition. */
export function experimentId(def: ExperimentDefinition): string {
  return contentHash(def);
}

/** The bundle's case ids an experiment runs (null for a bundle without cases). */
export function selectBundleCases(
  bundle: Bundle,
  opts: { cases?: number; caseIds?: string[] },
): string[] | null {
  const all = bundle.cases.map((c) => c.id);
  if (opts.caseIds !== undefined && opts.cases !== undefined) {
    throw new DvergrError("USAGE", "Cannot use --cases and --case-ids together", {
      hint: "Give either the number of cases (--cases N) or their ids (--case-ids a,b)",
    });
  }
  if (opts.caseIds !== undefined) {
    if (all.length === 0) {
      throw new DvergrError(
        "USAGE",
        `Cannot select cases of bundle "${bundle.name}": it has no cases/ (one environment)`,
        { hint: "Leave out --case-ids" },
      );
    }
    const known = new Set(all);
    const unknown = opts.caseIds.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new DvergrError(
        "USAGE",
        `Cannot select case${unknown.length > 1 ? "s" : ""} ${
          unknown.map((u) => `"${u}"`).join(", ")
        }: bundle "${bundle.name}" has no such case`,
        { hint: `Its cases include ${all.slice(0, 5).map((a) => `"${a}"`).join(", ")}` },
      );
    }
    const wanted = new Set(opts.caseIds);
    return all.filter((id) => wanted.has(id));
  }
  if (all.length === 0) return null;
  if (opts.cases !== undefined) return selectCases(all, opts.cases);
  return all;
}

/** The definition, id and cells of an experiment over `bundle` with `candidates`. */
export function planExperiment(
  bundle: Bundle,
  candidates: Candidate[],
  opts: PlanOptions = {},
): ExperimentPlan {
  const repetitions = checkRange("repetitions", opts.repetitions ?? 1, "repetitions");
  if (opts.cases !== undefined) checkRange("cases", opts.cases, "cases");
  const timeoutMs = checkRange(
    "timeoutMs",
    opts.timeoutMs ?? bundle.definition.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    "the time limit per attempt (timeout-ms)",
  );
  const budgetMicros = opts.budgetMicros ?? DEFAULT_BUDGET_MICROS;
  checkRange("budgetDollars", budgetMicros / 1e6, "the budget per attempt in dollars");
  const cases = selectBundleCases(bundle, opts);
  checkRange(
    "cells",
    candidates.length * Math.max(1, cases?.length ?? 1) * repetitions,
    "the number of cells (candidates × cases × repetitions)",
  );
  const params = opts.params ?? {};
  const definition: ExperimentDefinition = {
    format: "dvergr-experiment/1",
    bundle: bundle.id,
    candidates: candidates.map((c) => ({ name: c.name, identity: c.identity })),
    cases,
    repetitions,
    params,
    task: fillTask(bundle.definition.task, { ...bundle.definition.params, ...params }),
    timeoutMs,
    budgetMicros,
    ...(opts.verifier ? { verifier: opts.verifier } : {}),
    ...(bundle.generated ? { generated: bundle.generated } : {}),
  };
  const id = experimentId(definition);
  return { id, definition, cells: planCells(id, candidates, cases, repetitions) };
}

/**
 * The plan of a recorded definition (an experiment's `definition` as the home keeps it):
 * the same id and cells planExperiment() gave it.
 */
export function planOfDefinition(
  definition: ExperimentDefinition,
  id: string = experimentId(definition),
): ExperimentPlan {
  return {
    id,
    definition,
    cells: planCells(id, definition.candidates, definition.cases, definition.repetitions),
  };
}

/**
 * The cells of experiment `id` in run order, computed from their index when asked for: a
 * 100,000-cell plan holds its candidates and cases, not an object per cell. A cell's input
 * hash is contentHash({experiment, candidate: identity, caseId, repetition}); its canonical
 * JSON is put together from parts made once.
 */
function planCells(
  id: string,
  candidates: readonly Pick<Candidate, "name" | "identity">[],
  cases: readonly string[] | null,
  repetitions: number,
): PlanCells {
  const names = candidates.map((c) => c.name);
  const identities = candidates.map((c) => canonicalJson(c.identity));
  const caseIds: readonly (string | null)[] = cases ?? [null];
  const caseJson = caseIds.map((c) => JSON.stringify(c));
  const candidateIndex = new Map(names.map((c, i) => [c, i]));
  const caseIndex = new Map<string | null, number>(caseIds.map((c, i) => [c, i]));
  const experiment = JSON.stringify(id);
  const length = names.length * caseIds.length * repetitions;
  const check = (i: number) => {
    if (!Number.isInteger(i) || i < 0 || i >= length) {
      throw new RangeError(`No cell ${i} in a plan of ${length} cells`);
    }
  };
  /** Candidate index, case index and repetition of the cell at index `i`. */
  const place = (i: number): [number, number, number] => {
    check(i);
    const a = i % names.length;
    const rest = (i - a) / names.length;
    const k = rest % caseIds.length;
    return [a, k, (rest - k) / caseIds.length];
  };
  const hashOf = ([a, k, repetition]: [number, number, number]) =>
    hashJson(
      `{"candidate":${identities[a]},"caseId":${
        caseJson[k]
      },"experiment":${experiment},"repetition":${repetition}}`,
    );
  const at = (i: number): Cell => {
    const p = place(i);
    const [a, k, repetition] = p;
    const candidate = names[a];
    const caseId = caseIds[k];
    return {
      candidate,
      caseId,
      repetition,
      key: cellKey(candidate, caseId, repetition),
      inputHash: hashOf(p),
    };
  };
  return {
    length,
    at,
    inputHashAt: (i) => hashOf(place(i)),
    candidateAt: (i) => names[place(i)[0]],
    indexOf: (candidate, caseId, repetition) => {
      const a = candidateIndex.get(candidate);
      const k = caseIndex.get(caseId);
      if (a === undefined || k === undefined || !Number.isInteger(repetition) || repetition < 0) {
        return -1;
      }
      const i = (repetition * caseIds.length + k) * names.length + a;
      return i < length ? i : -1;
    },
    *[Symbol.iterator]() {
      for (let i = 0; i < length; i++) yield at(i);
    },
  };
}
