/**
 * The experiments of a home as `dvergr experiments` and `dvergr view` list them: bundle,
 * room, candidates, cells and how many have a verdict, newest first; and whether one that
 * is not complete is running now (a live lease on one of its cells without a verdict).
 */
import type { ExperimentDefinition } from "../bench/experiment.ts";
import { cellKey } from "../bench/records.ts";
import type { Home } from "../ports/home.ts";
import type { ExperimentMeta } from "../ports/state_store.ts";
import { experimentStanding } from "./scorecards.ts";

/** One experiment as listed. */
export interface ListedExperiment {
  experiment: string;
  /** The home it is in (its directory, or the store's URL without its password). */
  home: string;
  room: string;
  bundle: { name: string; id: string };
  createdAt: string;
  candidates: string[];
  cells: number;
  graded: number;
  complete: boolean;
}

/** The experiments of one home (or only the one of id `only`), as listed, in the store's order. */
export async function listedExperiments(
  home: Home,
  label: string,
  only?: string,
): Promise<ListedExperiment[]> {
  const out: ListedExperiment[] = [];
  for (const meta of await home.state.listExperiments()) {
    if (only !== undefined && meta.id !== only) continue;
    const def = meta.definition as unknown as ExperimentDefinition;
    const standing = await experimentStanding(home, meta);
    out.push({
      experiment: meta.id,
      home: label,
      room: meta.room,
      bundle: { name: meta.bundleName, id: meta.bundleId },
      createdAt: meta.createdAt,
      candidates: def.candidates.map((c) => c.name),
      cells: meta.cells,
      ...standing,
    });
  }
  return out;
}

/** Newest first; ids break ties so the order is the same every time. */
export function newestFirst<T extends { createdAt: string; experiment: string }>(
  list: T[],
): T[] {
  return list.sort((a, b) =>
    a.createdAt !== b.createdAt
      ? (a.createdAt < b.createdAt ? 1 : -1)
      : (a.experiment < b.experiment ? -1 : 1)
  );
}

/** Cells without a verdict whose leases are read to tell a running experiment. */
const LEASES_READ = 200;

/**
 * Whether an experiment that is not complete runs now: one of its first LEASES_READ cells
 * without a verdict (in plan order) holds a lease that has not expired at `now` (ms).
 */
export async function isRunning(home: Home, meta: ExperimentMeta, now: number): Promise<boolean> {
  const def = meta.definition as unknown as ExperimentDefinition;
  const graded = new Set<string>();
  for await (const r of home.state.streamCellRecords(meta.id)) {
    if (r.verdict !== null) graded.add(cellKey(r.candidate, r.caseId, r.repetition));
  }
  let read = 0;
  for (let repetition = 0; repetition < def.repetitions; repetition++) {
    for (const caseId of def.cases ?? [null]) {
      for (const { name } of def.candidates) {
        const key = cellKey(name, caseId, repetition);
        if (graded.has(key)) continue;
        const lease = await home.state.leaseOf(meta.id, key);
        if (lease !== null && lease.until > now) return true;
        if (++read >= LEASES_READ) return false;
      }
    }
  }
  return false;
}
