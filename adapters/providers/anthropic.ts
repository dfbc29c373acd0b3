/**
 * An Anthropic model as a ModelProvider: its Messages API wire format
 * (`core/codecs/providers/anthropic.ts`) posted over HTTP with retries (`http.ts`).
 *
 * Permissions: --allow-net to the provider's base URL.
 */
import type {
  CompletionRequest,
  CompletionResult,
  ModelProvider,
  ProviderConfig,
} from "../../core/ports/model_provider.ts";
import {
  ANTHROPIC_VERSION,
  anthropicBody,
  parseAnthropicResponse,
} from "../../core/codecs/providers/anthropic.ts";
import { endpoint, postJson } from "./http.ts";

/** A provider for one Anthropic model. */
export function createAnthropicProvider(cfg: ProviderConfig): ModelProvider {
  const label = `anthropic ${JSON.stringify(cfg.model)}`;
  return {
    kind: "anthropic",
    model: cfg.model,
    baseUrl: cfg.baseUrl,
    async complete(req: CompletionRequest): Promise<CompletionResult> {
      const res = await postJson({
        url: endpoint(cfg.baseUrl, "/v1/messages"),
        headers: { "x-api-key": cfg.apiKey ?? "", "anthropic-version": ANTHROPIC_VERSION },
        body: anthropicBody(cfg.model, req),
        signal: req.signal,
        deadline: req.deadline,
        label,
        fetchImpl: cfg.fetchImpl,
        retry: cfg.retry,
        random: cfg.random,
      });
      if (!res.ok) return res;
      try {
        return { ok: true, turn: parseAnthropicResponse(res.json), tries: res.tries };
      } catch (e) {
        return {
          ok: false,
          failure: "malformed",
          message: `${label}: malformed response: ${(e as Error).message}`,
          tries: res.tries,
          status: res.status,
        };
      }
    },
  };
}
