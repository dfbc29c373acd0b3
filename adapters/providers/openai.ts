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
import { endpoint, postJson } from "./http.ts";

/** A provider for one OpenAI model, or a model on an OpenAI-compatible server. */
export function createOpenAIProvider(cfg: ProviderConfig & { compatible: boolean }): ModelProvider {
  const kind = cfg.compatible ? "openai-compatible" : "openai";
  const label = `${kind} ${JSON.stringify(cfg.model)} at ${cfg.baseUrl}`;
  return {
    kind,
    model: cfg.model,
    baseUrl: cfg.baseUrl,
    async complete(req: CompletionRequest): Promise<CompletionResult> {
      const res = await postJson({
        url: endpoint(cfg.baseUrl, "/v1/chat/completions"),
        headers: cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {},
        body: openaiBody(cfg.model, req, cfg.compatible),
        signal: req.signal,
        deadline: req.deadline,
        label,
        fetchImpl: cfg.fetchImpl,
        retry: cfg.retry,
        random: cfg.random,
      });
      if (!res.ok) return res;
      try {
        return { ok: true, turn: parseOpenAIResponse(res.json, cfg.compatible), tries: res.tries };
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
