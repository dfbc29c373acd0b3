/**
 * An OpenAI model, or a model on an OpenAI-compatible server, as a ModelProvider: the Chat
 * Completions wire format (`core/codecs/providers/openai.ts`) posted over HTTP with retries
 * (`http.ts`).
 *
 * Permissions: --allow-net to the provider's base URL.
 */
import type {
  CompletionRequest,
  CompletionResult,
  ModelProvider,
  ProviderConfig,
} from "../../core/ports/model_provider.ts";
import { openaiBody, parseOpenAIResponse } from "../../core/codecs/providers/openai.ts";
import { postCompletion } from "./http.ts";

/** A provider for one OpenAI model, or a model on an OpenAI-compatible server. */
export function createOpenAIProvider(cfg: ProviderConfig & { compatible: boolean }): ModelProvider {
  const kind = cfg.compatible ? "openai-compatible" : "openai";
  const label = `${kind} ${JSON.stringify(cfg.model)} at ${cfg.baseUrl}`;
  return {
    kind,
    model: cfg.model,
    baseUrl: cfg.baseUrl,
    // async: a body that cannot be built rejects, as every failure of complete() does.
    async complete(req: CompletionRequest): Promise<CompletionResult> {
      return await postCompletion(cfg, label, req, {
        path: "/v1/chat/completions",
        headers: cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {},
        body: openaiBody(cfg.model, req, cfg.compatible),
      }, (json) => parseOpenAIResponse(json, cfg.compatible));
    },
  };
}
