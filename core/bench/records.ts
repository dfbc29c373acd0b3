/**
 * The durable records of a benchmark: what the engine writes per attempt and what the
 * scorecard and report are computed from. Plain JSON, so they fit in Deno KV (large
 * evidence lives in blobs and is referenced by `evidenceRef`).
 */
import type { CandidateStatus, Usage } from "./candidate.ts";
import type { WebSummary } from "../web/record.ts";
import type { Verdict } from "../checker.ts";

export type TrustTier = "trusted" | "room" | "ad-hoc";

export interface AttemptFault {
  /**
   * Who failed: the candidate could not start, its model provider failed (the candidate ran),
   * the checker faulted, the host failed.
   */
  source: "candidate" | "provider" | "checker" | "host";
  kind: string;
  message: string;
  /** Trying again within the same run cannot help (a rejected API key). */
  permanent?: boolean;
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
  /** The model's prices are unknown: its tokens are counted, its cost is not known. */
  unpriced?: boolean;
  isolated: boolean;
  /** Trust tier of the verifier that scored it. */
  trust: TrustTier;
  /** What the attempt did on the web (searches, pages, denials); absent without a web. */
  web?: WebSummary;
  /** The judge's calls and their cost (included in billedMicros/listMicros); absent without one. */
  judge?: JudgeSummary;
  /** Blob id of the evidence (captured files, candidate evidence), or null. */
  evidenceRef: string | null;
  /**
   * Why the candidate's work ended as it did, bounded, so causes can be counted and shown
   * without reading the evidence blob. Absent in records written before it existed.
   */
  ending?: AttemptEnding;
  /**
   * The attempt this record grades again (`dvergr regrade`): its candidate did not run
   * again; the status, usage, cost and times above are that attempt's.
   */
  regradedFrom?: RegradeMark;
}

/** Where a re-graded record's evidence came from, and what its judge asked anew. */
export interface RegradeMark {
  experimentId: string;
  /** The try of the original cell whose evidence was graded. */
  tryNo: number;
  /** Judge requests answered from the original evidence (same judge, same prompt). */
  judgeReused: number;
  /** Judge requests asked anew, and what they cost (not in billedMicros/listMicros). */
  judgeAsked: number;
  judgeBilledMicros: number;
}

/** How a candidate's process or loop ended: its own words, exit status, stderr's last lines. */
export interface AttemptEnding {
  /** The outcome's message ("ended with exit status 2", "stopped by budget: …"), or null. */
  message: string | null;
  /** A command's exit code (null when killed by a signal or not a command). */
  exitCode: number | null;
  /** The signal that ended a command, e.g. "SIGKILL". */
  signal: string | null;
  /** The last lines of a command's stderr (at most STDERR_LINES lines, STDERR_CHARS characters). */
  stderrTail: string | null;
}

/** Lines of stderr kept on the record (the evidence blob keeps more). */
export const STDERR_LINES = 5;
/** Characters of stderr kept on the record. */
export const STDERR_CHARS = 1000;

/** The last `STDERR_LINES` non-empty lines of `text`, at most `STDERR_CHARS` characters. */
export function stderrTail(text: string | null | undefined): string | null {
  if (!text) return null;
  const lines = text.replace(/\s+$/, "").split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) return null;
  const tail = lines.slice(-STDERR_LINES).join("\n");
  return tail.length <= STDERR_CHARS ? tail : "…" + tail.slice(tail.length - STDERR_CHARS);
}

/** The judge's part of an attempt. */
export interface JudgeSummary {
  model: string;
  /** Requests answered. */
  calls: number;
  usage: Usage;
  billedMicros: number;
  /** At list price; null = equals the bill. */
  listMicros: number | null;
}

/** A cell's key within an experiment: candidate × case × repetition. */
export function cellKey(candidate: string, caseId: string | null, repetition: number): string {
  return JSON.stringify([candidate, caseId, repetition]);
}

/** True when `r` is a later try of its cell than `seen` (higher tryNo, then later start). */
export function isLaterTry(r: AttemptRecord, seen: AttemptRecord): boolean {
  return r.tryNo > seen.tryNo || (r.tryNo === seen.tryNo && r.startedAt > seen.startedAt);
}

/** The latest try of each cell (highest tryNo, then latest start). */
export function latestTries(records: readonly AttemptRecord[]): AttemptRecord[] {
  const byCell = new Map<string, AttemptRecord>();
  for (const r of records) {
    const key = cellKey(r.candidate, r.caseId, r.repetition);
    const seen = byCell.get(key);
    if (seen === undefined || isLaterTry(r, seen)) byCell.set(key, r);
  }
  return [...byCell.values()];
}
