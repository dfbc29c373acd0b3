/** Attempt records for tests: a graded, passed, free attempt, with the given fields over it. */
import type { AttemptRecord } from "../../core/bench/records.ts";

/** The start time of the default record (2026-10-01T08:00:00Z). */
export const T0 = Date.parse("2026-10-01T08:00:00Z");

export function attemptRecord(over: Partial<AttemptRecord> & { candidate: string }): AttemptRecord {
  return {
    experimentId: "exp-1",
    caseId: "B0001",
    repetition: 0,
    inputHash: "h",
    tryNo: 1,
    startedAt: new Date(T0).toISOString(),
    elapsedMs: 1000,
    status: "completed",
    verdict: { checks: { ok: true }, reward: 1 },
    fault: null,
    passed: true,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    trust: "ad-hoc",
    evidenceRef: null,
    ...over,
  };
}

/** What sh says for a script that the sandbox cannot see. */
export const NO_FILE = "sh: 0: cannot open my_agent.sh: No such file";

/** An attempt of "mine" on `caseId` whose script was not found: exit status 2, graded 0. */
export function crashedRecord(caseId: string, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return attemptRecord({
    candidate: "mine",
    caseId,
    status: "crashed",
    passed: false,
    verdict: { checks: { ok: false, "completed?": false }, reward: 0 },
    ending: {
      message: '"mine" ended with exit status 2',
      exitCode: 2,
      signal: null,
      stderrTail: NO_FILE,
    },
    ...over,
  });
}
