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
import { postCompletion } from "./http.ts";

/** A provider for one Anthropic model. */
export function createAnthropicProvider(cfg: ProviderConfig): ModelProvider {
  const label = `anthropic ${JSON.stringify(cfg.model)}`;
  return {
    kind: "anthropic",
    model: cfg.model,
    baseUrl: cfg.baseUrl,
    // async: a body that cannot be built rejects, as every failure of complete() does.
    async complete(req: CompletionRequest): Promise<CompletionResult> {
      return await postCompletion(cfg, label, req, {
        path: "/v1/messages",
        headers: { "x-api-key": cfg.apiKey ?? "", "anthropic-version": ANTHROPIC_VERSION },
        body: anthropicBody(cfg.model, req),
      }, parseAnthropicResponse);
    },
  };
}
