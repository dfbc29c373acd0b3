/**
 * The durable records of a benchmark: what the engine writes per attempt and what the
 * scorecard and report are computed from. Plain JSON, so they fit in Deno KV (large
 * evidence lives in blobs and is referenced by `evidenceRef`).
 */
import type { CandidateStatus, Usage } from "./candidate.ts";
import type { Verdict } from "../checker.ts";

export type TrustTier = "trusted" | "room" | "ad-hoc";

export interface AttemptFault {
  /** Who failed: the candidate could not start / its provider failed, the checker faulted, the host failed. */
  source: "candidate" | "checker" | "host";
  kind: string;
  message: string;
}

export interface AttemptRecord {
  experimentId: string;
  candidate: string;
  /** null for a bundle without cases. */
  caseId: string | null;
  /** 0-based. */
  repetition: number;
  /** Hash of everything that decides the cell's result; a different hash is not resumed. */
  inputHash: string;
  /** 1 for the first try of the cell, 2 for the retry… */
  tryNo: number;
  /** ISO time the attempt started. */
  startedAt: string;
  elapsedMs: number;
  /** How the candidate's work ended. */
  status: CandidateStatus;
  /** The final verdict (checker's checks + host's `completed?`), null when faulted. */
  verdict: Verdict | null;
  fault: AttemptFault | null;
  /**
   * Why a graded attempt failed before its checker could judge it (e.g. what the candidate
   * left could not be read back, or it went over a resource limit); absent otherwise.
   */
  failure?: { kind: string; message: string };
  /** Every check of the final verdict is true. */
  passed: boolean;
  usage: Usage;
  billedMicros: number;
  /** The same tokens at list price; null = equals the bill. */
  listMicros: number | null;
  isolated: boolean;
  /** Trust tier of the verifier that scored it. */
  trust: TrustTier;
  /** Blob id of the evidence (captured files, candidate evidence), or null. */
  evidenceRef: string | null;
}

/** A cell's key within an experiment: candidate × case × repetition. */
export function cellKey(candidate: string, caseId: string | null, repetition: number): string {
  return JSON.stringify([candidate, caseId, repetition]);
}
