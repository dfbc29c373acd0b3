/**
 * Which provider reaches a registry model, at which base URL, with which key variable.
 * Shared by model candidates, judges and the model gateway's routes.
 *
 * Keys come from the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY (or an entry's
 * :api-key-env); a compatible server needs none unless its entry names a variable
 * (DVERGR_OPENAI_COMPAT_API_KEY is sent when set). Base URLs: an entry's :base-url, else
 * ANTHROPIC_BASE_URL / OPENAI_BASE_URL / DVERGR_OPENAI_COMPAT_BASE_URL, else the provider's.
 */
import { DvergrError } from "../../core/errors.ts";
import type { ModelEntry } from "../../core/models/registry.ts";
import type { ModelProvider, RetryPolicy } from "../../core/ports/model_provider.ts";
import { ANTHROPIC_DEFAULT_BASE_URL } from "../../core/codecs/providers/anthropic.ts";
import {
  OPENAI_COMPAT_DEFAULT_BASE_URL,
  OPENAI_DEFAULT_BASE_URL,
} from "../../core/codecs/providers/openai.ts";
import { createAnthropicProvider } from "./anthropic.ts";
import { createOpenAIProvider } from "./openai.ts";

const PROVIDER_ENV = {
  "anthropic": {
    key: "ANTHROPIC_API_KEY",
    base: "ANTHROPIC_BASE_URL",
    defaultBase: ANTHROPIC_DEFAULT_BASE_URL,
  },
  "openai": {
    key: "OPENAI_API_KEY",
    base: "OPENAI_BASE_URL",
    defaultBase: OPENAI_DEFAULT_BASE_URL,
  },
  "openai-compatible": {
    key: "DVERGR_OPENAI_COMPAT_API_KEY",
    base: "DVERGR_OPENAI_COMPAT_BASE_URL",
    defaultBase: OPENAI_COMPAT_DEFAULT_BASE_URL,
  },
} as const;

/** The base URL a model is reached at, from its entry, the provider's variable or default. */
export function modelBaseUrl(entry: ModelEntry, env: (k: string) => string | undefined): string {
  if (entry.baseUrl) return entry.baseUrl;
  const p = PROVIDER_ENV[entry.provider];
  const fromEnv = env(p.base)?.trim();
  if (!fromEnv) return p.defaultBase;
  try {
    const u = new URL(fromEnv);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot use model "${entry.id}": ${p.base} is ${JSON.stringify(fromEnv)}, not an http(s) URL`,
      {
        hint: `Set ${p.base} to a URL such as "http://127.0.0.1:8080", or unset it`,
        details: { model: entry.id, variable: p.base },
      },
    );
  }
  return fromEnv;
}

/** The variable holding a model's key, and whether the model needs one. */
export function modelKeyVariable(entry: ModelEntry): { name: string; required: boolean } {
  if (entry.apiKeyEnv) return { name: entry.apiKeyEnv, required: true };
  return {
    name: PROVIDER_ENV[entry.provider].key,
    required: entry.provider !== "openai-compatible",
  };
}

/** The provider that reaches a registry model at `baseUrl` with `apiKey`. */
export function providerFor(
  entry: ModelEntry,
  baseUrl: string,
  apiKey: string | null,
  opts: { fetchImpl?: typeof fetch; retry?: RetryPolicy } = {},
): ModelProvider {
  const cfg = {
    model: entry.apiModel,
    baseUrl,
    apiKey,
    fetchImpl: opts.fetchImpl,
    retry: opts.retry,
  };
  return entry.provider === "anthropic"
    ? createAnthropicProvider(cfg)
    : createOpenAIProvider({ ...cfg, compatible: entry.provider === "openai-compatible" });
}
