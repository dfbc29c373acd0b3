/**
 * A worker pool's results as the checker contract's values (core/checker.ts): the outcome
 * text read as a verdict or as judge requests, a fault passed on, console lines kept. Shared
 * by both checker kinds; each passes its own reader (JSON for checker.js, EDN for
 * checker.clj). No permissions.
 */
import type {
  CheckerRun,
  GeneratedWorld,
  GeneratorRun,
  JudgeRequest,
  JudgeRequestsRun,
  Verdict,
} from "../core/checker.ts";
import type { Faulted } from "./protocol.ts";
import { type Validated, withVerdictSchemas } from "./verdict.ts";
import type { PoolResult } from "./worker_pool.ts";

type Read<O, T> = (outcome: Exclude<O, Faulted>) => Validated<T>;

/** A `check` call's pool result as a CheckerRun. */
export async function toCheckerRun<O extends { ok: boolean }>(
  r: PoolResult<O>,
  read: Read<O, Verdict>,
): Promise<CheckerRun> {
  const v = await readResult(r, read);
  return v.ok ? { ok: true, verdict: v.value, ms: r.ms, ...v.extra } : v.run;
}

/** A `judgeRequests` call's pool result as a JudgeRequestsRun. */
export async function toJudgeRequestsRun<O extends { ok: boolean }>(
  r: PoolResult<O>,
  read: Read<O, JudgeRequest[]>,
): Promise<JudgeRequestsRun> {
  const v = await readResult(r, read);
  return v.ok ? { ok: true, requests: v.value, ms: r.ms, ...v.extra } : v.run;
}

/** A `generate` call's pool result as a GeneratorRun. */
export async function toGeneratorRun<O extends { ok: boolean }>(
  r: PoolResult<O>,
  read: Read<O, GeneratedWorld>,
): Promise<GeneratorRun> {
  const v = await readResult(r, read);
  return v.ok ? { ok: true, world: v.value, ms: r.ms, ...v.extra } : v.run;
}

async function readResult<O extends { ok: boolean }, T>(r: PoolResult<O>, read: Read<O, T>) {
  const extra = r.logs.length > 0 ? { logs: r.logs } : {};
  const o = r.outcome as Exclude<O, Faulted> | Faulted;
  if (!o.ok) {
    const f = o as Faulted;
    return {
      ok: false as const,
      run: { ok: false as const, fault: f.fault, message: f.message, ms: r.ms, ...extra },
    };
  }
  // A reader whose fast path does not take the outcome loads the schemas that say why.
  const v = await withVerdictSchemas(() => read(o as Exclude<O, Faulted>));
  return v.ok ? { ok: true as const, value: v.value, extra } : {
    ok: false as const,
    run: {
      ok: false as const,
      fault: "invalid-verdict" as const,
      message: v.message,
      ms: r.ms,
      ...extra,
    },
  };
}
