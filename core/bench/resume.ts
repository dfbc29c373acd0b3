/**
 * Where an experiment stands before a run, from the records the home holds: which cells
 * are kept (a verdict made with the same inputs), which still run and with which try
 * number, and which of those faulted last time. Pure: the runner and the benchmark's
 * preparation both read it, so resume is decided once.
 *
 * The records are read once, as they stream past, into a few bytes per planned cell
 * (CellStates: the latest try number and what it was), not held.
 */
import type { AttemptRecord } from "./records.ts";
import type { Cell, ExperimentPlan } from "./experiment.ts";

/** A cell this run still has to grade. */
export interface PendingCell {
  cell: Cell;
  tryNo: number;
  /** Extra tries within this run when it faults. */
  retriesLeft: number;
}

export interface ResumeState {
  /** Cells kept from earlier runs. */
  kept: number;
  /** Cells whose latest record is a fault. */
  faulted: Set<string>;
  /** Cells to run, in plan order. */
  pending: PendingCell[];
}

/** What a cell's latest record is (CellStates.state). */
export const CellState = {
  /** No record. */
  None: 0,
  /** A verdict made with the cell's inputs: the cell is kept. */
  Kept: 1,
  /** A fault, with the cell's inputs. */
  Fault: 2,
  /** A fault made with other inputs. */
  OtherFault: 3,
  /** A verdict made with other inputs (it runs again). */
  OtherVerdict: 4,
} as const;

/** Where every planned cell stands, by its index in `plan.cells`: a few bytes per cell. */
export interface CellStates {
  /** The latest try number of each cell; 0 without a record. */
  tryNo: Int32Array;
  state: Uint8Array;
}

/**
 * The index in `plan.cells` of the cell (candidate, case, repetition), or -1 when the plan
 * has no such cell. Computed from the plan's order (repetition, case, candidate) when its
 * cells are in that order, else looked up.
 */
export function cellIndexer(
  plan: ExperimentPlan,
): (candidate: string, caseId: string | null, repetition: number) => number {
  const names = plan.definition.candidates.map((c) => c.name);
  const cases = plan.definition.cases ?? [null];
  const candidateIndex = new Map(names.map((c, i) => [c, i]));
  const caseIndex = new Map<string | null, number>(cases.map((c, i) => [c, i]));
  const at = (candidate: string, caseId: string | null, repetition: number): number => {
    const a = candidateIndex.get(candidate);
    const k = caseIndex.get(caseId);
    if (a === undefined || k === undefined || !Number.isInteger(repetition) || repetition < 0) {
      return -1;
    }
    const i = (repetition * cases.length + k) * names.length + a;
    return i < plan.cells.length ? i : -1;
  };
  const ordered = plan.cells.every((c, i) => at(c.candidate, c.caseId, c.repetition) === i);
  if (ordered) return at;
  const byKey = new Map(plan.cells.map((c, i) => [c.key, i]));
  return (candidate, caseId, repetition) =>
    byKey.get(JSON.stringify([candidate, caseId, repetition])) ?? -1;
}

/**
 * Where every cell of `plan` stands after `latest` (the latest record of each cell, as the
 * state store streams them; records of cells not in the plan are left out, and of two for
 * one cell the later try counts).
 */
export async function readCellStates(
  plan: ExperimentPlan,
  latest: AsyncIterable<AttemptRecord> | Iterable<AttemptRecord>,
): Promise<CellStates> {
  const index = cellIndexer(plan);
  const states: CellStates = {
    tryNo: new Int32Array(plan.cells.length),
    state: new Uint8Array(plan.cells.length),
  };
  for await (const r of latest) {
    const i = index(r.candidate, r.caseId, r.repetition);
    if (i < 0 || r.tryNo < states.tryNo[i]) continue;
    const same = r.inputHash === plan.cells[i].inputHash;
    states.tryNo[i] = r.tryNo;
    states.state[i] = r.verdict !== null
      ? (same ? CellState.Kept : CellState.OtherVerdict)
      : (same ? CellState.Fault : CellState.OtherFault);
  }
  return states;
}

/** True when `record` is the kept result of `cell`: a verdict made with the cell's inputs. */
export function keeps(cell: Cell, record: AttemptRecord | null | undefined): boolean {
  return !!record && record.verdict !== null && record.inputHash === cell.inputHash;
}

/** The resume state of `plan` given where its cells stand; `retries` extra tries per faulting cell. */
export function resumeState(
  plan: ExperimentPlan,
  states: CellStates,
  retries: number,
): ResumeState {
  const pending: PendingCell[] = [];
  const faulted = new Set<string>();
  let kept = 0;
  plan.cells.forEach((cell, i) => {
    const state = states.state[i];
    if (state === CellState.Kept) kept++;
    else {
      if (state === CellState.Fault || state === CellState.OtherFault) faulted.add(cell.key);
      pending.push({ cell, tryNo: states.tryNo[i] + 1, retriesLeft: retries });
    }
  });
  return { kept, faulted, pending };
}

/** Cells with a verdict (kept) and cells whose latest try faulted, with the plan's inputs. */
export function cellCounts(states: CellStates): { graded: number; faults: number } {
  let graded = 0;
  let faults = 0;
  for (const s of states.state) {
    if (s === CellState.Kept) graded++;
    else if (s === CellState.Fault) faults++;
  }
  return { graded, faults };
}

/** The names of the candidates that still have cells to run. */
export function candidatesToRun(state: ResumeState): Set<string> {
  return new Set(state.pending.map((p) => p.cell.candidate));
}
