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
