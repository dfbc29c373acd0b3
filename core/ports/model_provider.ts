/**
 * The model provider port: one model behind an API, asked for a completion of a
 * provider-neutral conversation (`core/codecs/providers/conversation.ts`). Implemented by
 * `adapters/providers/` (Anthropic Messages, OpenAI Chat Completions and compatible servers).
 */
import type { ChatMessage, ModelTurn, ToolSpec } from "../codecs/providers/conversation.ts";

export interface CompletionRequest {
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxTokens: number;
  signal: AbortSignal;
  /** Epoch ms after which no retry may start. */
  deadline: number;
}

/** Why a call failed. `aborted`: the signal fired (time up or cancelled). */
export type CallFailure = "http" | "network" | "malformed" | "deadline" | "aborted";

export type CompletionResult =
  | { ok: true; turn: ModelTurn; tries: number }
  | { ok: false; failure: CallFailure; message: string; tries: number; status?: number };

/** A model behind an API. */
export interface ModelProvider {
  kind: string;
  /** The model name sent to the API. */
  model: string;
  baseUrl: string;
  complete(request: CompletionRequest): Promise<CompletionResult>;
}

/** What a provider needs to reach one model. */
export interface ProviderConfig {
  /** The model name sent to the API. */
  model: string;
  baseUrl: string;
  /** null: send no key (local servers). */
  apiKey: string | null;
  fetchImpl?: typeof fetch;
  retry?: RetryPolicy;
  random?: () => number;
}

/** How a model API call is retried. */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  maxTries: number;
  /** Backoff before the second try; doubles each try. */
  baseDelayMs: number;
  /** Ceiling of a backoff delay (a server's retry-after may ask for longer). */
  maxDelayMs: number;
}
