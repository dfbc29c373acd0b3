/**
 * What the host adds around an attempt besides the candidate and the checker: the web of
 * the attempt (live or frozen, under the bundle's policy, recorded) and the judge
 * (docs/compatibility.md §9.1–§9.3). Prepared once per experiment (keys are checked before any cell
 * starts), then used per attempt: a web for the candidate's tools, the fetched pages kept
 * as a blob and given to the checker when the bundle says `:fetched true`, the judge asked
 * once per request of the checker's `judgeRequests`, and the host's `no-blocked-fetch?`.
 */
import type { Bundle } from "../bundle/types.ts";
import { DvergrError, isDvergrError } from "../errors.ts";
import type { CheckerInput, CheckerRunner, JudgeRequest } from "../checker.ts";
import type { Usage } from "../bench/candidate.ts";
import { NO_USAGE } from "../bench/candidate.ts";
import type { AttemptFault, JudgeSummary } from "../bench/records.ts";
import { addUsage } from "../models/cost.ts";
import type { WebEvidence, WebSummary } from "../web/record.ts";
import { policyIdentity, type WebMode, type WebPolicy } from "../web/policy.ts";
import { type BlobStore, putJson } from "../ports/blob_store.ts";
import type { AttemptWeb, LiveWebOptions, WebClient } from "../ports/web_client.ts";
import type { Judge, JudgeFactory, JudgeOptions } from "../ports/judge.ts";
import { gradeAnswer } from "./grade_answer.ts";

/** The check the host adds when the bundle has :blocked-sources. */
export const NO_BLOCKED_FETCH = "no-blocked-fetch?";

export interface AttemptEffects {
  mode: WebMode;
  judge: Judge | null;
  /**
   * Part of the experiment definition (`verifier`): the judge's identity, and the web policy
   * when a user's policy changes the bundle's (policyIdentity()); null without either.
   */
  identity: Record<string, unknown> | null;
  /**
   * Checks the keys the experiment's remaining cells need, throwing a DvergrError: the
   * judge's whenever cells remain (it grades every attempt), BRAVE_API_KEY only when
   * `web` (a candidate that can use tools has cells left).
   */
  preflight(opts: { web: boolean }): void;
  /** The web of one attempt, or null when the bundle lets it read nothing. */
  openWeb(): AttemptWeb | null;
}

export interface EffectsOptions extends JudgeOptions {
  /** Replaces parts of the live web configuration (tests: timeouts, resolvers). */
  live?: LiveWebOptions;
  /** The user's web policy, composed with the bundle's (core/web/policy.ts); default none. */
  webPolicy?: WebPolicy | null;
}

/** The adapters the effects come from. */
export interface EffectsPorts {
  web: WebClient;
  judges: JudgeFactory;
}

/** The effects of a bundle's attempts; a bundle without web or judge gets inert ones. */
export async function prepareEffects(
  bundle: Bundle,
  opts: EffectsOptions,
  ports: EffectsPorts,
): Promise<AttemptEffects> {
  const j = bundle.definition.judge;
  const judge = j
    ? await ports.judges.create(j.model, opts).catch((e) => {
      if (!isDvergrError(e)) throw e;
      throw new DvergrError(
        e.code,
        `Cannot use the judge of bundle "${bundle.name}" (:judge :model ${
          JSON.stringify(j.model)
        }): ${e.message}`,
        {
          hint: e.hint ??
            "Name a model of the registry (or of <home>/models.edn) in the bundle's :judge :model",
          details: { ...e.details, judge: j.model },
        },
      );
    })
    : null;
  const web = ports.web.forBundle(bundle, {
    env: opts.env,
    live: { ...opts.live, fetchImpl: opts.live?.fetchImpl ?? opts.fetchImpl },
    policy: opts.webPolicy ?? null,
  });
  const policy = policyIdentity(bundle.definition, opts.webPolicy ?? null);
  const identity = {
    ...(judge ? { judge: { ...judge.identity, maxRequests: j!.maxRequests } } : {}),
    ...(policy ? { webPolicy: policy } : {}),
  };
  return {
    mode: web.mode,
    judge,
    identity: Object.keys(identity).length > 0 ? identity : null,
    preflight({ web: usesWeb }) {
      if (usesWeb) web.preflight();
      judge?.preflight();
    },
    openWeb: () => web.open(),
  };
}

/** The web part of an attempt's evidence (pages in their own blob) and its summary. */
export async function recordWeb(
  blobs: BlobStore,
  evidence: WebEvidence,
): Promise<{ summary: WebSummary; evidence: Record<string, unknown> }> {
  const { fetched, titles, ...rest } = evidence;
  const pagesRef = Object.keys(fetched).length === 0
    ? null
    : await putJson(blobs, { format: "dvergr-fetched/1", fetched, titles });
  const summary: WebSummary = {
    mode: evidence.mode,
    searches: evidence.searches,
    requests: evidence.requests,
    pages: evidence.pages,
    denials: evidence.denials,
  };
  return { summary, evidence: { ...rest, pagesRef } };
}

/** The host's own checks: `no-blocked-fetch?` when the bundle blocks sources. */
export function hostChecks(bundle: Bundle, web: WebSummary | null): Record<string, boolean> {
  if ((bundle.definition.blockedSources ?? []).length === 0) return {};
  return { [NO_BLOCKED_FETCH]: (web?.denials.blocked ?? 0) === 0 };
}

export type JudgeOutcome =
  | {
    ok: true;
    judgements: Record<string, string>;
    summary: JudgeSummary;
    evidence: Record<string, unknown>;
  }
  | {
    ok: false;
    fault: AttemptFault;
    summary: JudgeSummary | null;
    evidence: Record<string, unknown>;
  }
  | {
    /** The checker's `judgeRequests` could not take this answer: the candidate's failure. */
    ok: "ungradable";
    message: string;
    summary: null;
    evidence: Record<string, unknown>;
  };

/** How judgeAttempt() tells a fault the answer caused from a broken checker, and stops. */
export interface JudgeAttemptOptions {
  /** The control answer of gradeAnswer() (grade_answer.ts). */
  control: { answer: "reference" | "no answer"; input: Omit<CheckerInput, "judgements"> };
  signal?: AbortSignal;
}

/**
 * Asks the judge once per request of the checker's `judgeRequests` (the first
 * `:max-requests`), after the attempt. A fault of `judgeRequests` that the answer causes
 * (gradeAnswer()) is the candidate's failure, any other a checker fault; a judge that
 * cannot answer is a fault `The judge failed: …` (a rerun retries).
 */
export async function judgeAttempt(
  bundle: Bundle,
  judge: Judge,
  runner: CheckerRunner,
  input: Omit<CheckerInput, "judgements">,
  opts: JudgeAttemptOptions,
): Promise<JudgeOutcome> {
  const { signal } = opts;
  const max = bundle.definition.judge?.maxRequests ?? 20;
  const grading = await gradeAnswer(
    (i: Omit<CheckerInput, "judgements">) => runner.judgeRequests(bundle.checker, i),
    input,
    opts.control,
  );
  if (grading.kind === "ungradable") {
    return {
      ok: "ungradable",
      message: grading.message,
      summary: null,
      evidence: { model: judge.identity.model, judgeRequests: grading.evidence },
    };
  }
  if (grading.kind === "fault") {
    const asked = grading.run;
    return {
      ok: false,
      fault: { source: "checker", kind: asked.fault, message: asked.message },
      summary: null,
      evidence: { model: judge.identity.model, judgeRequests: grading.evidence ?? asked },
    };
  }
  const asked = grading.run;
  const requests: JudgeRequest[] = asked.requests.slice(0, max);
  const judgements: Record<string, string> = {};
  let usage: Usage = { ...NO_USAGE };
  let billed = 0;
  let list: number | null = null;
  const summary = (): JudgeSummary => ({
    model: String(judge.identity.model),
    calls: Object.keys(judgements).length,
    usage,
    billedMicros: billed,
    listMicros: list,
  });
  for (const r of requests) {
    const a = await judge.ask(r.prompt, signal);
    usage = addUsage(usage, a.usage);
    billed += a.billedMicros;
    if (a.listMicros !== null) list = (list ?? 0) + a.listMicros;
    if (!a.ok) {
      return {
        ok: false,
        fault: { source: "checker", kind: "judge", message: `The judge failed: ${a.message}` },
        summary: summary(),
        evidence: { model: judge.identity.model, requests, answers: judgements, failedOn: r.id },
      };
    }
    judgements[r.id] = a.answer;
  }
  return {
    ok: true,
    judgements,
    summary: summary(),
    evidence: {
      model: judge.identity.model,
      requests,
      asked: requests.length,
      offered: asked.requests.length,
      answers: judgements,
    },
  };
}

/** The attempt's spend with the judge's cost added (billed and at list price). */
export function withJudgeCost<T extends { billedMicros: number; listMicros: number | null }>(
  outcome: T,
  judge: JudgeSummary | null,
): T {
  if (!judge) return outcome;
  const list = outcome.listMicros === null && judge.listMicros === null
    ? null
    : (outcome.listMicros ?? outcome.billedMicros) + (judge.listMicros ?? judge.billedMicros);
  return { ...outcome, billedMicros: outcome.billedMicros + judge.billedMicros, listMicros: list };
}
