/**
 * Where an experiment stands before a run, from the records the home holds: which cells
 * are kept (a verdict made with the same inputs), which still run and with which try
 * number, and which of those faulted last time. Pure: the runner and the benchmark's
 * preparation both read it, so resume is decided once.
 */
import { type AttemptRecord, cellKey } from "./records.ts";
import type { Cell, ExperimentPlan } from "./experiment.ts";

/** A cell this run still has to grade. */
export interface PendingCell {
  cell: Cell;
  tryNo: number;
  /** Extra tries within this run when it faults. */
  retriesLeft: number;
}

export interface ResumeState {
  /** The latest record of each cell, by cell key. */
  latest: Map<string, AttemptRecord>;
  /** Cells kept from earlier runs. */
  kept: number;
  /** Cells whose latest record is a fault. */
  faulted: Set<string>;
  /** Cells to run, in plan order. */
  pending: PendingCell[];
}

/** The latest record of each cell among `records` (a later try wins), by cell key. */
export function latestRecords(records: Iterable<AttemptRecord>): Map<string, AttemptRecord> {
  const latest = new Map<string, AttemptRecord>();
  for (const r of records) {
    const key = cellKey(r.candidate, r.caseId, r.repetition);
    const seen = latest.get(key);
    if (!seen || r.tryNo >= seen.tryNo) latest.set(key, r);
  }
  return latest;
}

/** True when `record` is the kept result of `cell`: a verdict made with the cell's inputs. */
export function keeps(cell: Cell, record: AttemptRecord | null | undefined): boolean {
  return !!record && record.verdict !== null && record.inputHash === cell.inputHash;
}

/** The resume state of `plan` given the cells' records; `retries` extra tries per faulting cell. */
export function resumeState(
  plan: ExperimentPlan,
  records: Iterable<AttemptRecord>,
  retries: number,
): ResumeState {
  const latest = latestRecords(records);
  const pending: PendingCell[] = [];
  const faulted = new Set<string>();
  let kept = 0;
  for (const cell of plan.cells) {
    const r = latest.get(cell.key);
    if (keeps(cell, r)) kept++;
    else {
      if (r && !r.verdict) faulted.add(cell.key);
      pending.push({ cell, tryNo: (r?.tryNo ?? 0) + 1, retriesLeft: retries });
    }
  }
  return { latest, kept, faulted, pending };
}

/** The names of the candidates that still have cells to run. */
export function candidatesToRun(state: ResumeState): Set<string> {
  return new Set(state.pending.map((p) => p.cell.candidate));
}
