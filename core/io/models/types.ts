/**
 * A provider-neutral conversation, as the agent loop keeps it. Each provider module turns
 * it into its wire format (Anthropic Messages, OpenAI Chat Completions) and a response back
 * into a ModelTurn.
 */
import type { Usage } from "../../bench/candidate.ts";

/** A tool the model may call: name, description and a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call as the model made it. */
export interface ToolCall {
  /** The provider's call id (generated when a compatible server gives none). */
  id: string;
  name: string;
  /** The arguments as an object, or null when they were not a JSON object. */
  args: Record<string, unknown> | null;
  /** Why `args` is null (the model's mistake, told back to it as a tool error). */
  argsProblem: string | null;
  /** The arguments as the model sent them (OpenAI's JSON string), for the history. */
  rawArguments: string;
}

export interface ToolResult {
  callId: string;
  name: string;
  content: string;
  isError: boolean;
}

export type ChatMessage =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls: ToolCall[] }
  | { role: "tool"; results: ToolResult[] };

/** One answer of the model. */
export interface ModelTurn {
  text: string;
  toolCalls: ToolCall[];
  /** The provider's stop or finish reason, as given. */
  stopReason: string;
  /** As core/models/cost.ts counts it: `input` includes the cached parts. */
  usage: Usage;
  /** False when the server reported no usage (some compatible servers). */
  usageReported: boolean;
  /** Reasoning tokens included in `usage.output`, when reported. */
  reasoningTokens: number;
}

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
