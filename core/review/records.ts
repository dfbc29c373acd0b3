/**
 * What a production run and its review leave in the home: a run record (one attempt of a
 * room's bundle on the room's own tree, its changes kept as the fork `runs/<id>`), a review
 * record (immutable: the checks with their evidence, the reviewer's verdict, the spot check
 * and the decision) and, later, a person's decision on a review that was held for one.
 */
import type { Verdict } from "../checker.ts";

/** Where a run stands: running, ended (whatever its attempt's outcome), or left by a dead process. */
export type RunStatus = "running" | "ended" | "interrupted";

export interface RunRecord {
  /** `YYYYMMDD-HHMMSS-xxxxxx` (UTC start, then random): sortable, a branch name's segment. */
  id: string;
  room: string;
  /** The bundle: `workflows/<name>/` of the room. */
  name: string;
  /** The bundle's content id. */
  bundle: string;
  /** The candidate as given (`--candidate`). */
  candidate: string;
  /** Parameters given (`--param`), as text. */
  params: Record<string, string>;
  /** The room's head the world was made from: the fork's parent. */
  base: string;
  status: RunStatus;
  startedAt: string;
  endedAt: string | null;
  /** The process that runs it (a run of a dead one is interrupted, never resumed). */
  owner: { pid: number; host: string };
  /** The schedule that started it and the slot (ISO time) it was due at. */
  schedule?: { id: string; slot: string };
  /** The attempt, once ended. */
  attempt?: RunAttempt;
  /** The fork: branch `runs/<id>` and its commit; null when the world was left unchanged. */
  fork?: { branch: string; commit: string } | null;
  /** Room paths the fork changes (written or removed), sorted. */
  changed?: string[];
  /** The review of the fork (absent while there is none: no `:review`, or nothing changed). */
  review?: string;
}

/** The attempt of a run, as its record keeps it. */
export interface RunAttempt {
  status: "completed" | "crashed" | "timeout" | "budget" | "fault";
  message: string | null;
  /** The checker's verdict on the world without gold (null for a fault). */
  verdict: Verdict | null;
  elapsedMs: number;
  billedMicros: number;
  /** The attempt's evidence in the home's blobs. */
  evidenceRef: string | null;
  /** Files the capture did not keep (too large, binary…): not in the fork. */
  skipped: number;
}

/** One deterministic check of a review (or the reviewer), with what it saw. */
export interface CheckResult {
  check: string;
  ok: boolean;
  /** What was found: the paths at fault, the count, the reward… */
  evidence: string;
}

export type ReviewDecision = "merged" | "proposed" | "escalated" | "discarded";

/** The reviewer model's part of a review. */
export interface ReviewerResult {
  model: string;
  /** The answer as read; null when the call failed or the answer was malformed. */
  verdict: "approve" | "escalate" | null;
  reasons: string[];
  concerns: string[];
  /** Why the answer counts as no approval (call failed, malformed, approval with concerns). */
  problem: string | null;
  /** The answer's text as received (bounded). */
  answer: string | null;
  billedMicros: number;
}

/** A review: immutable once written. */
export interface ReviewRecord {
  /** The run's id (one review per run). */
  id: string;
  run: string;
  room: string;
  name: string;
  /** The world reviewed: the fork's commit (branch `runs/<run>`). */
  world: string;
  /** The run's base (the fork's parent). */
  base: string;
  /** The room's head the review saw: a merge happens only while the head is still this. */
  state: string;
  /** Content id of the bundle's `:review` map. */
  spec: string;
  checks: CheckResult[];
  /** Null when a check failed (the reviewer is not asked) or the spec names none. */
  reviewer: ReviewerResult | null;
  /** The spot check of an approval: sampled approvals go to a person. */
  spotCheck: { rate: number; seed: number; value: number; sampled: boolean } | null;
  decision: ReviewDecision;
  /** Why this decision, in a sentence. */
  why: string;
  /** The room's new head when merged. */
  merged?: string;
  at: string;
}

/** A person's decision on a review held for one (proposed or escalated). */
export interface PersonDecision {
  review: string;
  decision: "merged" | "discarded" | "escalated";
  why: string;
  merged?: string;
  at: string;
}
