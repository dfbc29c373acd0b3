/**
 * The deploy records contract (core/ports/deploy_records.ts, `StateStore.deploy`): runs
 * rewritten as they go and listed by room, reviews and people's decisions written once,
 * schedules created once, a slot claimed by exactly one of many callers (and never an older
 * slot, nor on a cancelled schedule), cancels once. Run by tests/ports/state_store_test.ts on
 * every state store that keeps deploy records.
 */
import assert from "node:assert/strict";
import type { DeployRecords, StateStore } from "../../core/ports/state_store.ts";
import type { ReviewRecord, RunRecord } from "../../core/review/records.ts";
import type { ScheduleRecord } from "../../core/schedule/records.ts";
import type { StateStoreFactory } from "./state_store_contract.ts";

export function runRecord(over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: "20260101-000000-aaaaaa",
    room: "wiki",
    name: "keeper",
    bundle: "b1",
    candidate: "builtin:reference",
    params: {},
    base: "0".repeat(40),
    status: "running",
    startedAt: "2026-01-01T00:00:00.000Z",
    endedAt: null,
    owner: { pid: 1, host: "h" },
    ...over,
  };
}

export function scheduleRecord(over: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id: "s-00000001",
    room: "wiki",
    name: "keeper",
    candidate: "builtin:reference",
    params: {},
    everyMs: 86_400_000,
    at: null,
    anchor: Date.parse("2026-01-01T00:00:00Z"),
    createdAt: "2026-01-01T00:00:00.000Z",
    lastSlot: null,
    lastRun: null,
    cancelledAt: null,
    ...over,
  };
}

function review(id: string, at: string): ReviewRecord {
  return {
    id,
    run: id,
    room: "wiki",
    name: "keeper",
    world: "1".repeat(40),
    base: "0".repeat(40),
    state: "0".repeat(40),
    spec: "spec",
    checks: [{ check: ":diff/max-files 3", ok: true, evidence: "2 files" }],
    reviewer: null,
    spotCheck: null,
    decision: "escalated",
    why: "test",
    at,
  };
}

/** Registers the deploy records' tests for one state store. */
export function deployRecordsContract(
  name: string,
  open: StateStoreFactory,
  opts: { ignore?: boolean } = {},
): void {
  const test = (what: string, fn: (d: DeployRecords, s: StateStore) => Promise<void>) =>
    Deno.test({
      name: `DeployRecords contract [${name}]: ${what}`,
      ignore: opts.ignore,
      async fn() {
        const subject = await open();
        try {
          assert.ok(subject.store.deploy, "the store keeps deploy records");
          await fn(subject.store.deploy, subject.store);
        } finally {
          await subject.close();
        }
      },
    });

  test("runs are rewritten as they go, listed oldest first and by room", async (d, s) => {
    const v0 = await s.roomVersion("wiki");
    await d.putRun(runRecord({ id: "b", startedAt: "2026-01-02T00:00:00.000Z" }));
    await d.putRun(runRecord({ id: "a" }));
    await d.putRun(runRecord({ id: "c", room: "other" }));
    assert.notEqual(await s.roomVersion("wiki"), v0, "a run is a change of its room");
    await d.putRun(runRecord({ id: "a", status: "ended", endedAt: "2026-01-01T00:01:00.000Z" }));
    assert.equal((await d.getRun("a"))?.status, "ended");
    assert.equal(await d.getRun("zz"), null);
    assert.deepEqual((await d.listRuns()).map((r) => r.id), ["a", "c", "b"]);
    assert.deepEqual((await d.listRuns("wiki")).map((r) => r.id), ["a", "b"]);
  });

  test("reviews and people's decisions are written once", async (d) => {
    assert.equal(await d.putReview(review("r2", "2026-01-02T00:00:00.000Z")), true);
    assert.equal(await d.putReview(review("r1", "2026-01-01T00:00:00.000Z")), true);
    assert.equal(
      await d.putReview({ ...review("r1", "2026-01-01T00:00:00.000Z"), decision: "merged" }),
      false,
    );
    assert.equal((await d.getReview("r1"))?.decision, "escalated");
    assert.deepEqual((await d.listReviews()).map((r) => r.id), ["r1", "r2"]);
    const first = { review: "r1", decision: "merged" as const, why: "ok", at: "t" };
    assert.equal(await d.putDecision(first), true);
    assert.equal(await d.putDecision({ ...first, decision: "discarded" }), false);
    assert.equal((await d.getDecision("r1"))?.decision, "merged");
    assert.equal(await d.getDecision("r2"), null);
  });

  test("a slot is claimed once, never an older one, never on a cancelled schedule", async (d) => {
    assert.equal(await d.createSchedule(scheduleRecord()), true);
    assert.equal(await d.createSchedule(scheduleRecord({ everyMs: 1 })), false);
    const slot = Date.parse("2026-01-03T00:00:00Z");
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => d.claimSlot("s-00000001", slot, `run-${i}`)),
    );
    assert.equal(claims.filter(Boolean).length, 1);
    const s = await d.getSchedule("s-00000001");
    assert.equal(s?.lastSlot, slot);
    assert.equal(s?.lastRun, `run-${claims.indexOf(true)}`);
    assert.equal(await d.claimSlot("s-00000001", slot - 86_400_000, "old"), false);
    assert.equal(await d.claimSlot("nope", slot, "x"), false);
    assert.equal(await d.cancelSchedule("s-00000001", "2026-01-04T00:00:00.000Z"), true);
    assert.equal(await d.cancelSchedule("s-00000001", "2026-01-05T00:00:00.000Z"), false);
    assert.equal(await d.claimSlot("s-00000001", slot + 86_400_000, "late"), false);
    assert.equal((await d.listSchedules())[0].cancelledAt, "2026-01-04T00:00:00.000Z");
  });
}
