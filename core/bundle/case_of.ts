/**
 * A bundle's case by id, found through an index built once per bundle: a run looks a case
 * up several times per cell (its world, its gold, its reference answer), and scanning the
 * list each time costs a 100,000-case run ~10^10 comparisons.
 */
import type { Bundle, BundleCase } from "./types.ts";

const indexes = new WeakMap<BundleCase[], Map<string, BundleCase>>();

/** The case of `bundle` whose id is `caseId`, or undefined (also for null). */
export function caseOf(bundle: Bundle, caseId: string | null): BundleCase | undefined {
  if (caseId === null) return undefined;
  let index = indexes.get(bundle.cases);
  if (!index) {
    index = new Map();
    // The first of equal ids wins, as Array.find does.
    for (const c of bundle.cases) if (!index.has(c.id)) index.set(c.id, c);
    indexes.set(bundle.cases, index);
  }
  return index.get(caseId);
}
