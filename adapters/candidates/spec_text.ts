/**
 * What the candidate kinds share when they read a spec: the error of a malformed one and
 * the shape of a candidate's name.
 */
import { DvergrError } from "../../core/errors.ts";

/** A candidate's name as the user gives it (`NAME=…`, a key of candidates.edn). */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** CANDIDATE_INVALID: `Cannot use candidate "SPEC": WHY`, with a hint. */
export function specError(spec: string, why: string, hint: string): DvergrError {
  return new DvergrError("CANDIDATE_INVALID", `Cannot use candidate "${spec}": ${why}`, { hint });
}
