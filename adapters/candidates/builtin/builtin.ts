/**
 * Built-in candidates, for smoke runs and for checking a bundle end to end:
 *
 * - `builtin:noop` writes nothing (every check that needs an answer should fail).
 * - `builtin:reference` writes the calibration reference's files. For a dataset whose
 *   reference is a single `/out/answer.edn` and whose cases' gold has the case-pack shape
 *   `{:expected {…}}`, it writes each case's own expected answer (`{"field" value …}`) to
 *   `/out/answer.edn`, so every case can pass; the calibration case itself gets the
 *   reference as written. For other bundles every case gets the reference files as they
 *   are, and only the calibration case is expected to pass.
 */
import { type Candidate, type CandidateOutcome, NO_USAGE } from "../../../core/bench/candidate.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import { caseOf } from "../../../core/bundle/case_of.ts";
import { writeEdn } from "../../../core/edn/write.ts";
import { DvergrError } from "../../../core/errors.ts";

export const BUILTIN_NAMES = ["noop", "reference"] as const;
export type BuiltinName = typeof BUILTIN_NAMES[number];

const ANSWER = "/out/answer.edn";

function done(evidence: Record<string, unknown>): CandidateOutcome {
  return {
    status: "completed",
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    evidence,
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The files `builtin:reference` writes for a case: the case's expected answer for a
 * case-pack-shaped dataset, else the calibration reference. Null when the bundle has no
 * calibration reference.
 */
export function referenceFilesFor(
  bundle: Bundle,
  caseId: string | null,
): Record<string, string> | null {
  const reference = bundle.calibration?.reference ?? null;
  if (reference === null) return null;
  const onlyAnswer = Object.keys(reference).length === 1 && ANSWER in reference;
  if (!onlyAnswer || caseId === null || caseId === bundle.calibration?.case) return reference;
  const kase = caseOf(bundle, caseId);
  const expected = isPlainObject(kase?.gold) ? kase.gold.expected : undefined;
  if (!isPlainObject(expected)) return reference;
  return { [ANSWER]: writeEdn(new Map(Object.entries(expected))) };
}

/** A built-in candidate by name ("noop" or "reference"). */
export function builtinCandidate(which: BuiltinName, bundle: Bundle, name?: string): Candidate {
  const display = name ?? `builtin:${which}`;
  if (which === "noop") {
    return {
      name: display,
      identity: { kind: "builtin", builtin: "noop" },
      run: () => Promise.resolve(done({ wrote: [] })),
    };
  }
  return {
    name: display,
    identity: { kind: "builtin", builtin: "reference" },
    preflight() {
      if (!bundle.calibration?.reference) {
        return Promise.reject(
          new DvergrError(
            "CANDIDATE_INVALID",
            `Cannot use builtin:reference on bundle "${bundle.name}": it has no calibration reference`,
            { hint: "Add calibration.edn with a :reference answer, or use another candidate" },
          ),
        );
      }
      return Promise.resolve();
    },
    async run(ctx) {
      const files = referenceFilesFor(bundle, ctx.caseId) ?? {};
      const paths = Object.keys(files).sort();
      for (const p of paths) await ctx.world.write(p, files[p]);
      return done({ wrote: paths });
    },
  };
}
