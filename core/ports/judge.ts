/**
 * The judge port: a model asked the checker's judge requests (one question, a short
 * answer), with its cost. Made from a registry model by adapters/providers/judge_model.ts.
 */
import type { Usage } from "../bench/candidate.ts";
import type { ModelRegistry } from "../models/registry.ts";
import type { RetryPolicy } from "./model_provider.ts";

export type JudgeAnswer =
  | { ok: true; answer: string; usage: Usage; billedMicros: number; listMicros: number | null }
  | { ok: false; message: string; usage: Usage; billedMicros: number; listMicros: number | null };

/** A judge model ready to be asked. */
export interface Judge {
  /** Everything that decides its answers (part of the experiment's verifier identity). */
  identity: Record<string, unknown>;
  /** Fails (API_KEY_MISSING) before any cell starts when its key is not set. */
  preflight(): void;
  /** One question; `shape` replaces the judge's system prompt and bounds (a reviewer's). */
  ask(prompt: string, signal?: AbortSignal, shape?: AskShape): Promise<JudgeAnswer>;
}

/** What one ask may change: the system prompt, output tokens and characters kept. */
export interface AskShape {
  system?: string;
  maxTokens?: number;
  answerLimit?: number;
}

export interface JudgeOptions {
  env: (k: string) => string | undefined;
  homeDir?: string;
  registry?: ModelRegistry;
  fetchImpl?: typeof fetch;
  retry?: RetryPolicy;
}

/** Makes judges. */
export interface JudgeFactory {
  /** The judge for a registry model id or alias (MODEL_UNKNOWN when there is none). */
  create(model: string, opts: JudgeOptions): Promise<Judge>;
}
