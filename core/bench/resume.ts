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
  /** Its index in the plan's cells. */
  index: number;
  cell: Cell;
  tryNo: number;
  /** Extra tries within this run when it faults. */
  retriesLeft: number;
}

export interface ResumeState {
  /** Cells kept from earlier runs. */
  kept: number;
  /** Cells still to run (PendingQueue lists them). */
  toRun: number;
  /** 1 for each cell (by index) whose latest record is a fault. */
  faulted: Uint8Array;
  /** Cells whose latest record is a fault. */
  faults: number;
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
 * has no such cell.
 */
export function cellIndexer(
  plan: ExperimentPlan,
): (candidate: string, caseId: string | null, repetition: number) => number {
  return (candidate, caseId, repetition) => plan.cells.indexOf(candidate, caseId, repetition);
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
    if (i >= 0) noteRecord(states, i, r, plan.cells.inputHashAt(i));
  }
  return states;
}

/**
 * Counts `record` as the latest of the cell at index `i` (whose input hash is `inputHash`)
 * unless the cell already has a later try.
 */
export function noteRecord(
  states: CellStates,
  i: number,
  record: AttemptRecord,
  inputHash: string,
): void {
  if (record.tryNo < states.tryNo[i]) return;
  const same = record.inputHash === inputHash;
  states.tryNo[i] = record.tryNo;
  states.state[i] = record.verdict !== null
    ? (same ? CellState.Kept : CellState.OtherVerdict)
    : (same ? CellState.Fault : CellState.OtherFault);
}

/** True when `record` is the kept result of `cell`: a verdict made with the cell's inputs. */
export function keeps(cell: Cell, record: AttemptRecord | null | undefined): boolean {
  return !!record && record.verdict !== null && record.inputHash === cell.inputHash;
}

/**
 * How many cells of `plan` are kept, still to run (in a PendingQueue) and faulted, given
 * where they stand.
 */
export function resumeState(plan: ExperimentPlan, states: CellStates): ResumeState {
  const faulted = new Uint8Array(plan.cells.length);
  let kept = 0;
  let faults = 0;
  states.state.forEach((state, i) => {
    if (state === CellState.Kept) kept++;
    else if (state === CellState.Fault || state === CellState.OtherFault) {
      faulted[i] = 1;
      faults++;
    }
  });
  return { kept, toRun: plan.cells.length - kept, faulted, faults };
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
export function candidatesToRun(plan: ExperimentPlan, states: CellStates): Set<string> {
  const names = new Set<string>();
  states.state.forEach((state, i) => {
    if (state !== CellState.Kept) names.add(plan.cells.candidateAt(i));
  });
  return names;
}
