/**
 * How the model gateway finds a model's real endpoint, key and prices: through the model
 * registry (core/models/registry.ts), by the model a request names, or pinned to one model
 * (an agent CLI candidate). Keys are read from dvergr's own environment, never the
 * candidate's.
 *
 * Only the attempt's own models are reachable. A command candidate reaches the models its
 * spec declares (`:models` in candidates.edn), or, declaring none, the registry's priced
 * Anthropic and OpenAI models: never an OpenAI-compatible endpoint it was not given (`local`
 * is a server on the host's loopback), nor a model without prices (the budget could not
 * hold it). A request for any other model is refused before anything is sent, and marked
 * `notTheAttempts`: the attempt fails for it (it is the candidate's doing, never a fault).
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
  return {
    entry,
    baseUrl,
    apiKey: key,
    bill: entry.prices,
    list: listPrices(registry, entry),
    toolPrices: registry.toolPrices,
    // A subscription (:list-price-of) is billed its own prices: no tool fees either.
    toolsBilled: entry.listPriceOf === null,
  };
}

/** A route, or why there is none; `notTheAttempts`: the model is not one of the attempt's. */
export type RouteOrProblem = ModelRoute | { problem: string; notTheAttempts?: boolean };

/** Whether a model may be reached by a command candidate that declares no models. */
export function inDefaultScope(registry: ModelRegistry, entry: ModelEntry): boolean {
  return registry.entries.get(entry.id) === entry && entry.priced &&
    entry.provider !== "openai-compatible";
}

/** The registry ids of declared model names; a name the registry cannot resolve: an error. */
export function declaredModelIds(registry: ModelRegistry, declared: string[]): string[] {
  return [...new Set(declared.map((m) => resolveModel(registry, m).id))];
}

/**
 * Routes every request by the model it names (id or alias of the registry), within the
 * attempt's models: `declared` (names of the registry), or without it the default scope.
 */
export function registryRouter(
  registry: ModelRegistry,
  env: (name: string) => string | undefined,
  declared?: string[],
): (model: string | undefined) => RouteOrProblem {
  const ids = declared === undefined ? null : new Set(declaredModelIds(registry, declared));
  const scope = ids === null
    ? "the registry's priced Anthropic and OpenAI models; others must be declared with :models in candidates.edn"
    : [...ids].join(", ");
  const outside = (what: string) => ({
    problem: `${what} is not one of this attempt's models (${scope})`,
    notTheAttempts: true,
  });
  return (model) => {
    if (model === undefined) return outside("a request that names no model");
    let entry: ModelEntry;
    try {
      entry = resolveModel(registry, model);
    } catch {
      return outside(`model ${JSON.stringify(model.slice(0, 100))}`);
    }
    const allowed = ids === null ? inDefaultScope(registry, entry) : ids.has(entry.id);
    if (!allowed) return outside(`model ${JSON.stringify(model.slice(0, 100))}`);
    return routeFor(registry, entry, env);
  };
}
