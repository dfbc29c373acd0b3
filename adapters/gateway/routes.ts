/**
 * How the model gateway finds a model's real endpoint, key and prices: through the model
 * registry (core/models/registry.ts), by the model a request names, or pinned to one model
 * (an agent CLI candidate). Keys are read from dvergr's own environment, never the
 * candidate's.
 */
import { isDvergrError } from "../../core/errors.ts";
import {
  listPrices,
  type ModelEntry,
  type ModelRegistry,
  resolveModel,
} from "../../core/models/registry.ts";
import { modelBaseUrl, modelKeyVariable } from "../providers/provider_for.ts";
import type { ModelRoute } from "./model_gateway.ts";

/** The route to one registry model, or why it cannot be reached (a key that is not set). */
export function routeFor(
  registry: ModelRegistry,
  entry: ModelEntry,
  env: (name: string) => string | undefined,
): ModelRoute | { problem: string } {
  const keyVar = modelKeyVariable(entry);
  const key = env(keyVar.name)?.trim() || null;
  if (keyVar.required && key === null) {
    return { problem: `model "${entry.id}" needs ${keyVar.name}, which is not set for dvergr` };
  }
  let baseUrl: string;
  try {
    baseUrl = modelBaseUrl(entry, env);
  } catch (e) {
    return { problem: isDvergrError(e) ? e.message : String(e) };
  }
  return { entry, baseUrl, apiKey: key, bill: entry.prices, list: listPrices(registry, entry) };
}

/** Routes every request by the model it names (id or alias of the registry). */
export function registryRouter(
  registry: ModelRegistry,
  env: (name: string) => string | undefined,
): (model: string | undefined) => ModelRoute | { problem: string } {
  return (model) => {
    if (model === undefined) return { problem: "the request names no model" };
    let entry: ModelEntry;
    try {
      entry = resolveModel(registry, model);
    } catch (e) {
      return { problem: isDvergrError(e) ? `${e.message} (${e.hint ?? ""})` : String(e) };
    }
    return routeFor(registry, entry, env);
  };
}
