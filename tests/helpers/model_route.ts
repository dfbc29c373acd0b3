import type { ModelRoute } from "../../adapters/gateway/model_gateway.ts";
import type { ModelEntry } from "../../core/models/registry.ts";
import type { ModelPrices } from "../../core/models/cost.ts";

/**
 * The gateway's route to one model of a provider on `baseUrl` (a fake provider of a test), billed
 * and listed at `prices`, with the real key "REAL" the gateway swaps in for the sandbox's dummy.
 */
export function testRoute(
  baseUrl: string,
  opts: {
    prices: ModelPrices;
    maxTokens: number;
    provider?: ModelEntry["provider"];
    id?: string;
    apiModel?: string;
  } & Pick<ModelRoute, "toolPrices">,
): ModelRoute {
  const entry: ModelEntry = {
    id: opts.id ?? "claude",
    provider: opts.provider ?? "anthropic",
    apiModel: opts.apiModel ?? "claude-api",
    aliases: [],
    prices: opts.prices,
    listPriceOf: null,
    maxTokens: opts.maxTokens,
    baseUrl,
    apiKeyEnv: null,
    doc: null,
    sources: [],
    priced: true,
  };
  return {
    entry,
    baseUrl,
    apiKey: "REAL",
    bill: opts.prices,
    list: opts.prices,
    ...(opts.toolPrices ? { toolPrices: opts.toolPrices } : {}),
  };
}
