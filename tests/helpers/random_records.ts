/**
 * Random attempt histories for tests of the scorecard and the diagnosis: every kind of
 * outcome (passed, failed by checks or by a failure, crashed, timed out, budget, faults of
 * each source), retried cells, rewards that are not exact in binary, costs, tokens, web and
 * judge summaries, isolation and trust mixed. Deterministic for a seed.
 */
import type { AttemptRecord } from "../../core/bench/records.ts";
import { T0 } from "./records.ts";
import { memoryHome } from "../../adapters/store/memory/home.ts";
import type { StateStore } from "../../core/ports/state_store.ts";
import { seededRandom } from "../../core/seeded_random.ts";

export interface RandomHistory {
  candidates: string[];
  /** null: one environment. */
  cases: string[] | null;
  repetitions: number;
  /** Every try, in plan order (repetition, case, candidate; tries of a cell in order). */
  records: AttemptRecord[];
}

const STDERR = [
  "sh: 0: cannot open my_agent.sh: No such file",
  "Traceback (most recent call last):\nValueError: bad input 0xdeadbeef12",
  "panic: runtime error: index out of range",
];

/** A random experiment history; `experimentId` "exp-rand". */
export function randomHistory(seed: number, size: "small" | "large" = "small"): RandomHistory {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const nCand = size === "large" ? 3 : 1 + Math.floor(r() * 4);
  const candidates = Array.from({ length: nCand }, (_, i) => `cand-${String.fromCharCode(97 + i)}`);
  const nCases = size === "large" ? 40 : 1 + Math.floor(r() * 8);
  // Ids out of string order, so canonical order and plan order differ.
  const cases = r() < 0.15
    ? null
    : Array.from({ length: nCases }, (_, i) => `k${(i * 7919) % 97}-${i}`);
  const repetitions = 1 + Math.floor(r() * (size === "large" ? 12 : 4));
  const checks = ["fields", "total", "date"];
  const records: AttemptRecord[] = [];
  let clock = T0;
  for (let repetition = 0; repetition < repetitions; repetition++) {
    for (const caseId of cases ?? [null]) {
      for (const candidate of candidates) {
        if (r() < 0.08) continue; // never ran
        const tries = r() < 0.2 ? 2 + Math.floor(r() * 2) : 1;
        for (let tryNo = 1; tryNo <= tries; tryNo++) {
          clock += Math.floor(r() * 5000);
          records.push(randomRecord(r, pick, {
            candidate,
            caseId,
            repetition,
            tryNo,
            // Earlier tries of a retried cell are faults (that is why they ran again).
            fault: tryNo < tries || r() < 0.1,
            startedAt: new Date(clock).toISOString(),
            checks,
          }));
        }
      }
    }
  }
  return { candidates, cases, repetitions, records };
}

function randomRecord(
  r: () => number,
  pick: <T>(xs: readonly T[]) => T,
  c: {
    candidate: string;
    caseId: string | null;
    repetition: number;
    tryNo: number;
    fault: boolean;
    startedAt: string;
    checks: string[];
  },
): AttemptRecord {
  const usage = {
    input: Math.floor(r() * 5000),
    output: Math.floor(r() * 900),
    cacheRead: r() < 0.3 ? Math.floor(r() * 2000) : 0,
    cacheWrite: r() < 0.2 ? Math.floor(r() * 300) : 0,
  };
  const billed = r() < 0.3 ? 0 : Math.floor(r() * 40_000);
  const base = {
    experimentId: "exp-rand",
    candidate: c.candidate,
    caseId: c.caseId,
    repetition: c.repetition,
    inputHash: `h-${c.candidate}-${c.caseId}-${c.repetition}`,
    tryNo: c.tryNo,
    startedAt: c.startedAt,
    elapsedMs: Math.floor(r() * 20_000),
    usage,
    billedMicros: billed,
    listMicros: r() < 0.5 ? null : billed + Math.floor(r() * 9000),
    ...(r() < 0.1 ? { unpriced: true } : {}),
    isolated: r() < 0.9,
    trust: pick(["ad-hoc", "room", "trusted"] as const),
    evidenceRef: r() < 0.5 ? `blob-${Math.floor(r() * 1e9)}` : null,
    ...(r() < 0.25
      ? {
        web: {
          mode: "frozen" as const,
          searches: Math.floor(r() * 4),
          requests: Math.floor(r() * 9),
          pages: Math.floor(r() * 5),
          denials: r() < 0.5 ? { blocked: Math.floor(r() * 3), scheme: 1 } : {},
        },
      }
      : {}),
    ...(r() < 0.2
      ? {
        judge: {
          model: "judge-1",
          calls: 1 + Math.floor(r() * 3),
          usage,
          billedMicros: Math.floor(r() * 900),
          listMicros: r() < 0.5 ? null : Math.floor(r() * 1200),
        },
      }
      : {}),
  };
  if (c.fault) {
    const source = pick(["candidate", "provider", "checker", "host"] as const);
    return {
      ...base,
      status: "fault",
      verdict: null,
      fault: {
        source,
        kind: pick(["timeout", "threw", "unreachable"]),
        message: pick(["it failed", "HTTP 503 from 10.0.0.7", "key rejected\nmore"]),
        ...(r() < 0.2 ? { permanent: true } : {}),
      },
      passed: false,
    };
  }
  const verdictChecks: Record<string, boolean> = {};
  for (const k of c.checks) if (r() < 0.9) verdictChecks[k] = r() < 0.65;
  const passed = Object.values(verdictChecks).every((v) => v);
  const reward = r() < 0.1 ? 1 : Math.round(r() * 10) / 10; // 0.1, 0.3, 0.7 … not exact in binary
  const status = pick(["completed", "completed", "completed", "crashed", "timeout", "budget"]);
  const ending = status === "completed" && r() < 0.7 ? undefined : {
    message: status === "crashed"
      ? `"${c.candidate}" ended with exit status ${pick([1, 2, 127])}`
      : status === "timeout"
      ? `timed out after ${Math.floor(r() * 90_000)} ms`
      : status === "budget"
      ? `stopped by budget: $0.${Math.floor(r() * 9000)} spent`
      : null,
    exitCode: status === "crashed" ? pick([1, 2, 127]) : null,
    signal: status === "crashed" && r() < 0.3 ? "SIGKILL" : null,
    stderrTail: status === "crashed" ? pick(STDERR) : null,
  };
  return {
    ...base,
    status: status as AttemptRecord["status"],
    verdict: {
      checks: verdictChecks,
      reward: r() < 0.05 ? (undefined as unknown as number) : reward,
    },
    fault: null,
    ...(status === "completed" && !passed && r() < 0.2
      ? { failure: { kind: "unreadable", message: "answer.edn line 3: unexpected }" } }
      : {}),
    passed: status === "completed" && passed,
    ...(ending ? { ending } : {}),
  };
}

/** Records a history in a fresh in-memory state store as the engine does: one putAttempt per try. */
export async function storedHistory(records: readonly AttemptRecord[]): Promise<StateStore> {
  const home = await memoryHome();
  for (const rec of records) {
    if (!(await home.state.putAttempt(rec))) throw new Error("a try was recorded twice");
  }
  return home.state;
}
