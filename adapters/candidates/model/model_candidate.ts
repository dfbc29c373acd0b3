/**
 * An API model as a benchmark candidate: a registry entry, its provider, and dvergr's
 * agent loop over the attempt's world.
 *
 * Keys come from the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY (or an entry's
 * :api-key-env); a compatible server needs none unless its entry names a variable
 * (DVERGR_OPENAI_COMPAT_API_KEY is sent when set). Base URLs: an entry's :base-url, else
 * ANTHROPIC_BASE_URL / OPENAI_BASE_URL / DVERGR_OPENAI_COMPAT_BASE_URL, else the provider's.
 */
import type { AttemptContext, Candidate, CandidateOutcome } from "../../../core/bench/candidate.ts";
import { NO_USAGE } from "../../../core/bench/candidate.ts";
import { DvergrError } from "../../../core/errors.ts";
import { listPrices, type ModelRegistry, resolveModel } from "../../../core/models/registry.ts";
import { loadRegistry } from "../../providers/load_registry.ts";
import { modelBaseUrl, modelKeyVariable, providerFor } from "../../providers/provider_for.ts";
import { DEFAULT_MAX_TURNS, DEFAULT_SYSTEM_PROMPT, runAgentLoop } from "./agent_loop.ts";
import type { RetryPolicy } from "../../../core/ports/model_provider.ts";
import type { ModelProvider } from "../../../core/ports/model_provider.ts";
import { WORLD_TOOL_NAMES, WORLD_TOOLS_VERSION } from "../../../core/world_tools/registry.ts";

export interface ModelCandidateOptions {
  env: (k: string) => string | undefined;
  /** Where `models.edn` may override the shipped registry. */
  homeDir?: string;
  /** Replaces the default system prompt. */
  systemPrompt?: string;
  /** Model calls per attempt (default 30). */
  maxTurns?: number;
  fetchImpl?: typeof fetch;
  /** HTTP retry policy (default: 6 tries, 1 s doubling to 30 s). */
  retry?: RetryPolicy;
  /** A registry already loaded (else the shipped one merged with the home's). */
  registry?: ModelRegistry;
}

/**
 * A model candidate's name: the registry's id of the model (an alias resolved), characters
 * other than letters, digits, `_`, `.` and `-` as "-". It does not depend on where the model
 * stands in `--models`; two candidates of the same model are told apart by the registry of
 * candidate kinds (a suffix `-2`, `-3`… in the order given).
 */
export function modelCandidateName(modelId: string): string {
  return modelId.replace(/[^A-Za-z0-9_.-]/g, "-");
}

/**
 * The names a model candidate of model `modelId` answers to: the id and the registry's
 * aliases of it (the shipped registry merged with `homeDir`'s models.edn).
 */
export async function modelAliases(
  modelId: string,
  opts: { homeDir?: string; registry?: ModelRegistry },
): Promise<string[]> {
  const registry = opts.registry ?? await loadRegistry({ homeDir: opts.homeDir });
  return [...new Set([modelId, ...(registry.entries.get(modelId)?.aliases ?? [])])];
}

/** A benchmark candidate for a registry model (id or alias); MODEL_UNKNOWN when there is none. */
export async function createModelCandidate(
  modelIdOrAlias: string,
  opts: ModelCandidateOptions,
): Promise<Candidate> {
  const registry = opts.registry ?? await loadRegistry({ homeDir: opts.homeDir });
  const entry = resolveModel(registry, modelIdOrAlias);
  const baseUrl = modelBaseUrl(entry, opts.env);
  const systemPrompt = opts.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  const maxTurns = opts.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot use model "${entry.id}": max turns ${maxTurns} is not a whole number ≥ 1`,
      {
        hint: "Give a turn limit of 1 or more (default 30)",
      },
    );
  }
  const keyVar = modelKeyVariable(entry);
  const bill = entry.prices;
  const list = entry.listPriceOf === null ? null : listPrices(registry, entry);

  const key = (): string | null => {
    const v = opts.env(keyVar.name)?.trim();
    return v ? v : null;
  };
  const missingKey = () =>
    new DvergrError(
      "API_KEY_MISSING",
      `Cannot run model "${entry.id}": ${keyVar.name} is not set`,
      {
        hint: `Export ${keyVar.name} with your ${entry.provider} API key, or choose another model`,
        details: { model: entry.id, provider: entry.provider, variable: keyVar.name },
      },
    );

  const provider = (apiKey: string | null): ModelProvider =>
    providerFor(entry, baseUrl, apiKey, opts);

  return {
    name: modelCandidateName(entry.id),
    aliases: [...new Set([entry.id, modelIdOrAlias, ...entry.aliases])],
    identity: {
      kind: "model",
      model: entry.id,
      apiModel: entry.apiModel,
      provider: entry.provider,
      baseUrl,
      systemPrompt,
      tools: { version: WORLD_TOOLS_VERSION, names: [...WORLD_TOOL_NAMES] },
      maxTurns,
      maxTokens: entry.maxTokens,
      ...(entry.priced ? {} : { priced: false }),
    },
    preflight(): Promise<void> {
      if (keyVar.required && key() === null) return Promise.reject(missingKey());
      return Promise.resolve();
    },
    run(ctx: AttemptContext): Promise<CandidateOutcome> {
      const apiKey = key();
      if (keyVar.required && apiKey === null) {
        return Promise.resolve({
          status: "fault",
          message: missingKey().message,
          usage: { ...NO_USAGE },
          billedMicros: 0,
          listMicros: list === null ? null : 0,
          isolated: true,
          evidence: { kind: "model", model: entry.id, stop: "fault", calls: 0 },
        });
      }
      return runAgentLoop(ctx, {
        provider: provider(apiKey),
        systemPrompt,
        maxTurns,
        maxTokens: entry.maxTokens,
        billPrices: bill,
        listPrices: list,
      }).then((outcome) => ({
        ...outcome,
        ...(entry.priced ? {} : { unpriced: true }),
        ...(outcome.fault?.kind === "auth"
          ? {
            message: `${outcome.message}: the provider rejected the key in ${keyVar.name}; ` +
              `set ${keyVar.name} to a valid ${entry.provider} API key`,
          }
          : {}),
      }));
    },
  };
}
