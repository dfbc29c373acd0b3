/**
 * The judge of a bundle with `:judge {:model M :max-requests n}` (docs/compatibility.md §9.2): model M
 * from the model registry, asked once per judge request with the system prompt "Answer the
 * question exactly as it asks, briefly." and at most 200 output tokens; each answer is
 * trimmed and cut to 500 characters. Keys and base URLs come as for model candidates
 * (adapters/candidates/model/model_candidate.ts). Needs --allow-net.
 */
import { NO_USAGE } from "../../core/bench/candidate.ts";
import { DvergrError } from "../../core/errors.ts";
import { addUsage, costMicros } from "../../core/models/cost.ts";
import { listPrices, resolveModel } from "../../core/models/registry.ts";
import { loadRegistry } from "./load_registry.ts";
import type { Judge, JudgeFactory, JudgeOptions } from "../../core/ports/judge.ts";
import { modelBaseUrl, modelKeyVariable, providerFor } from "./provider_for.ts";

export const JUDGE_SYSTEM_PROMPT = "Answer the question exactly as it asks, briefly.";
export const JUDGE_MAX_TOKENS = 200;
export const JUDGE_ANSWER_LIMIT = 500;
/** How long one judge call may take. */
export const JUDGE_TIMEOUT_MS = 120_000;

/** The judge for a registry model id or alias (MODEL_UNKNOWN when there is none). */
export async function createJudge(model: string, opts: JudgeOptions): Promise<Judge> {
  const registry = opts.registry ?? await loadRegistry({ homeDir: opts.homeDir });
  const entry = resolveModel(registry, model);
  const baseUrl = modelBaseUrl(entry, opts.env);
  const keyVar = modelKeyVariable(entry);
  const list = entry.listPriceOf === null ? null : listPrices(registry, entry);
  const key = () => opts.env(keyVar.name)?.trim() || null;
  const missing = () =>
    new DvergrError(
      "API_KEY_MISSING",
      `Cannot ask the judge "${entry.id}": ${keyVar.name} is not set`,
      {
        hint: `Export ${keyVar.name}, or change the bundle's :judge :model`,
        details: { model: entry.id, variable: keyVar.name },
      },
    );
  return {
    identity: {
      model: entry.id,
      apiModel: entry.apiModel,
      provider: entry.provider,
      baseUrl,
      system: JUDGE_SYSTEM_PROMPT,
      maxTokens: JUDGE_MAX_TOKENS,
    },
    preflight() {
      if (keyVar.required && key() === null) throw missing();
    },
    async ask(prompt, signal, shape = {}) {
      const apiKey = key();
      const none = {
        usage: { ...NO_USAGE },
        billedMicros: 0,
        listMicros: list === null ? null : 0,
      };
      if (keyVar.required && apiKey === null) {
        return { ok: false, message: missing().message, ...none };
      }
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), JUDGE_TIMEOUT_MS);
      const onAbort = () => ctl.abort();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        const res = await providerFor(entry, baseUrl, apiKey, opts).complete({
          system: shape.system ?? JUDGE_SYSTEM_PROMPT,
          messages: [{ role: "user", text: prompt }],
          tools: [],
          maxTokens: shape.maxTokens ?? JUDGE_MAX_TOKENS,
          signal: ctl.signal,
          deadline: Date.now() + JUDGE_TIMEOUT_MS,
        });
        if (!res.ok) return { ok: false, message: res.message, ...none };
        const usage = addUsage(NO_USAGE, res.turn.usage);
        return {
          ok: true,
          answer: res.turn.text.trim().slice(0, shape.answerLimit ?? JUDGE_ANSWER_LIMIT),
          usage,
          billedMicros: costMicros(usage, entry.prices),
          listMicros: list === null ? null : costMicros(usage, list),
        };
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}

/** Judges from the model registry (the shipped one merged with the home's models.edn). */
export const registryJudges: JudgeFactory = { create: createJudge };
