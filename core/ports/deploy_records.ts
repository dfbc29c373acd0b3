/**
 * The deploy records port: the runs, reviews, people's decisions and schedules a home keeps
 * (core/review/records.ts, core/schedule/records.ts). Part of the state store
 * (`StateStore.deploy`): implemented on Deno KV (adapters/store/kv/deploy_records.ts), in
 * memory (adapters/store/memory/deploy_records.ts) and on PostgreSQL
 * (adapters/store/postgres/deploy_records.ts). The
 * contract is tests/ports/state_store_contract.ts's deploy part.
 */
import type { PersonDecision, ReviewRecord, RunRecord } from "../review/records.ts";
import type { ScheduleRecord } from "../schedule/records.ts";

export interface DeployRecords {
  /** Writes a run's record (a run's record changes as it runs). */
  putRun(run: RunRecord): Promise<void>;
  getRun(id: string): Promise<RunRecord | null>;
  /** Every run, oldest first; only those of `room` when given. */
  listRuns(room?: string): Promise<RunRecord[]>;
  /** Writes a review once: false (nothing written) when the review exists (reviews are immutable). */
  putReview(review: ReviewRecord): Promise<boolean>;
  getReview(id: string): Promise<ReviewRecord | null>;
  /** Every review, oldest first. */
  listReviews(): Promise<ReviewRecord[]>;
  /** A person's decision, once per review: false when one was recorded first. */
  putDecision(decision: PersonDecision): Promise<boolean>;
  getDecision(review: string): Promise<PersonDecision | null>;
  /** Writes a new schedule; false when its id is taken. */
  createSchedule(schedule: ScheduleRecord): Promise<boolean>;
  getSchedule(id: string): Promise<ScheduleRecord | null>;
  /** Every schedule (cancelled ones too), by id. */
  listSchedules(): Promise<ScheduleRecord[]>;
  /**
   * Claims slot `slot` of a schedule for run `run`, atomically: true for exactly one caller
   * when the schedule is not cancelled and its last slot is older; false otherwise.
   */
  claimSlot(id: string, slot: number, run: string): Promise<boolean>;
  /** Cancels a schedule; false when there is none or it was cancelled already. */
  cancelSchedule(id: string, at: string): Promise<boolean>;
}
