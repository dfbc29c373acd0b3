import assert from "node:assert/strict";
import {
  createProgress,
  estimateRemainingMs,
  formatDuration,
  HEARTBEAT_MS,
  progressBar,
} from "../../cli/progress.ts";
import type { AttemptRecord } from "../../core/bench/records.ts";

Deno.test("formatDuration() writes m:ss and h:mm:ss", () => {
  assert.equal(formatDuration(0), "0:00");
  assert.equal(formatDuration(61_400), "1:01");
  assert.equal(formatDuration(3_723_000), "1:02:03");
});

Deno.test("estimateRemainingMs() projects this run's pace onto the cells left", () => {
  assert.equal(estimateRemainingMs(10_000, 0, 5), null);
  assert.equal(estimateRemainingMs(10_000, 4, 6), 15_000);
});

Deno.test("progressBar() shows cells done of the total, faults, elapsed and ETA", () => {
  assert.equal(
    progressBar({ done: 5, total: 10, faults: 1, elapsedMs: 12_000, etaMs: 30_000 }, 10),
    "[#####·····] 5/10 cells · 1 fault · 0:12 elapsed · ETA 0:30",
  );
});

function rec(over: Partial<AttemptRecord>): AttemptRecord {
  return {
    experimentId: "e",
    candidate: "a",
    caseId: "c1",
    repetition: 0,
    inputHash: "h",
    tryNo: 1,
    startedAt: "2025-01-01T00:00:00Z",
    elapsedMs: 1,
    status: "completed",
    verdict: { checks: {}, reward: 1 },
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

Deno.test("createProgress() prints plain lines at every tenth and one line per fault", () => {
  const lines: string[] = [];
  let t = 0;
  const p = createProgress({ write: (s) => lines.push(s), isTerminal: false, now: () => t });
  p.onEvent({ type: "start", experimentId: "e1", total: 20, kept: 4, toRun: 16 });
  for (let done = 5; done <= 7; done++) {
    t += 1000;
    p.onEvent({ type: "attempt", record: rec({}), done, faults: 0, total: 20, willRetry: false });
  }
  p.onEvent({
    type: "attempt",
    record: rec({
      verdict: null,
      fault: { source: "candidate", kind: "could-not-run", message: "no agent\nmore" },
    }),
    done: 7,
    faults: 1,
    total: 20,
    willRetry: true,
  });
  p.onEvent({ type: "end", done: 7, faults: 1, total: 20, cancelled: true });
  assert.deepEqual(lines, [
    "Experiment e1: 20 cells, 4 kept from earlier runs\n",
    "progress: 6/20 cells · 0 faults · 0:02 elapsed · ETA 0:14\n",
    "fault: a case c1 rep 0: candidate could-not-run: no agent (trying again)\n",
    "Stopped: the run was interrupted\n",
  ]);
});

Deno.test("createProgress() redraws one bar in place on a terminal", () => {
  const out: string[] = [];
  const p = createProgress({ write: (s) => out.push(s), isTerminal: true, now: () => 0 });
  p.onEvent({ type: "start", experimentId: "e1", total: 2, kept: 0, toRun: 2 });
  p.onEvent({ type: "attempt", record: rec({}), done: 1, faults: 0, total: 2, willRetry: false });
  p.onEvent({ type: "end", done: 2, faults: 0, total: 2, cancelled: false });
  p.stop();
  assert.ok(out.slice(1).every((s) => s.startsWith("\r")));
  assert.match(out.at(-1)!, /2\/2 cells · 0 faults.*\n$/);
});

Deno.test("createProgress() shows a fault's control characters as escapes, on a terminal too", () => {
  const out: string[] = [];
  const p = createProgress({ write: (s) => out.push(s), isTerminal: true, now: () => 0 });
  p.onEvent({ type: "start", experimentId: "e1", total: 1, kept: 0, toRun: 1 });
  p.onEvent({
    type: "attempt",
    record: rec({
      caseId: "c\r1",
      verdict: null,
      fault: { source: "candidate", kind: "could-not-run", message: "\x1b[2Jgone\u202e" },
    }),
    done: 0,
    faults: 1,
    total: 1,
    willRetry: false,
  });
  p.stop();
  const fault = out.find((s) => s.includes("fault:"))!;
  assert.equal(
    fault,
    "\rfault: a case c\\r1 rep 0: candidate could-not-run: \\u001b[2Jgone\\u202e\x1b[K\n",
  );
});

Deno.test("createProgress() off a terminal writes a line at least every 30 s while cells run", () => {
  const lines: string[] = [];
  let t = 0;
  const pending: { f: () => void; ms: number; cancelled: boolean }[] = [];
  const p = createProgress({
    write: (s) => lines.push(s),
    isTerminal: false,
    now: () => t,
    schedule: (f, ms) => {
      const timer = { f, ms, cancelled: false };
      pending.push(timer);
      return () => timer.cancelled = true;
    },
  });
  const live = () => pending.filter((x) => !x.cancelled);
  p.onEvent({ type: "start", experimentId: "e1", total: 100, kept: 0, toRun: 100 });
  assert.deepEqual(live().map((x) => x.ms), [HEARTBEAT_MS]);
  // A slow run: nothing finishes for 30 s, then again for 30 s.
  t = 30_000;
  live()[0].f();
  assert.equal(lines.at(-1), "progress: 0/100 cells · 0 faults · 0:30 elapsed\n");
  assert.equal(live().length, 1);
  t = 60_000;
  const [second] = live();
  pending.splice(0, pending.length, second);
  second.f();
  assert.equal(lines.at(-1), "progress: 0/100 cells · 0 faults · 1:00 elapsed\n");
  // A line written for another reason (a tenth of the cells) starts the wait again.
  t = 70_000;
  p.onEvent({
    type: "attempt",
    record: rec({}),
    done: 10,
    faults: 0,
    total: 100,
    willRetry: false,
  });
  assert.equal(live().length, 1);
  assert.equal(live()[0].ms, HEARTBEAT_MS);
  p.onEvent({ type: "end", done: 100, faults: 0, total: 100, cancelled: false });
  assert.deepEqual(live(), []);
  assert.ok(HEARTBEAT_MS <= 30_000);
});

Deno.test("createProgress() keeps no heartbeat on a terminal (the bar redraws itself) or with nothing to run", () => {
  const scheduled: number[] = [];
  const schedule = (_f: () => void, ms: number) => {
    scheduled.push(ms);
    return () => {};
  };
  const none = createProgress({ write: () => {}, isTerminal: false, schedule });
  none.onEvent({ type: "start", experimentId: "e1", total: 2, kept: 2, toRun: 0 });
  none.stop();
  assert.deepEqual(scheduled, []);
});
