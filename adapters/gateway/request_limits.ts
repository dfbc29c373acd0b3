/**
 * What a model request can cost at most, read from its body before it is forwarded: the
 * output tokens it asks for (Anthropic `max_tokens`, Responses `max_output_tokens`, Chat
 * `max_completion_tokens` or `max_tokens`, times Chat's `n`) and an upper bound of its
 * input tokens from its size. A token of the providers' byte-level tokenizers covers at
 * least one byte of text, and the JSON around the text only adds bytes, so the body's
 * bytes bound its text tokens; the providers add a framing and tool-use prompt of their
 * own (INPUT_OVERHEAD_TOKENS), and an image costs tokens by its pixels, not its bytes
 * (IMAGE_TOKENS each, above the largest image either provider bills).
 *
 * The gateway writes the output limit it reserved into the request, so the reservation is
 * a bound of what the provider can bill: a request without one gets the registry's
 * `:max-tokens` of its model, and one asking for more than the budget can pay gets what it
 * can pay.
 *
 * Permissions: none.
 */
import type { ProviderKind } from "../../core/models/registry.ts";
import type { ProviderApi } from "./usage_meter.ts";

/** Tokens the providers add to a request's own: framing, the tool-use system prompt. */
export const INPUT_OVERHEAD_TOKENS = 2048;
/**
 * Input tokens an image may cost, whatever its size in bytes: Anthropic bills at most
 * about 1,600 (1.15 megapixels), OpenAI's tiles and patches about 2,500 at high detail.
 */
export const IMAGE_TOKENS = 10_000;
/**
 * The smallest output limit the gateway cuts a request's down to: a request whose budget
 * cannot pay for this much (or for what it asked, if less) is refused.
 */
export const MIN_OUTPUT_TOKENS = 1024;

const OUTPUT_FIELDS: Record<ProviderApi, string[]> = {
  "anthropic-messages": ["max_tokens"],
  "openai-responses": ["max_output_tokens"],
  "openai-chat": ["max_completion_tokens", "max_tokens"],
};

function count(v: unknown): number | null {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

/** The output tokens a request asks for per choice (the largest of its fields), or null. */
export function askedOutput(api: ProviderApi, body: Record<string, unknown>): number | null {
  const asked = OUTPUT_FIELDS[api].map((f) => count(body[f])).filter((n) => n !== null);
  return asked.length === 0 ? null : Math.max(...asked);
}

/** Answers a Chat request asks for (`n`, default 1). */
export function choices(api: ProviderApi, body: Record<string, unknown>): number {
  if (api !== "openai-chat") return 1;
  return Math.max(1, count(body.n) ?? 1);
}

/**
 * Writes the output limit `perChoice` into the request: into every limit field it has, or
 * (none) into the one its provider reads.
 */
export function setOutputLimit(
  api: ProviderApi,
  provider: ProviderKind,
  body: Record<string, unknown>,
  perChoice: number,
): void {
  const present = OUTPUT_FIELDS[api].filter((f) => body[f] !== undefined);
  if (present.length > 0) {
    for (const f of present) body[f] = perChoice;
    return;
  }
  // OpenAI's own models take max_completion_tokens; compatible servers read max_tokens.
  const field = api === "openai-chat" && provider === "openai-compatible"
    ? "max_tokens"
    : OUTPUT_FIELDS[api][0];
  body[field] = perChoice;
}

/** An upper bound of a request's input tokens: its bytes, the overhead, its images. */
export function worstInputTokens(bytes: number, images: number): number {
  return bytes + INPUT_OVERHEAD_TOKENS + images * IMAGE_TOKENS;
}
