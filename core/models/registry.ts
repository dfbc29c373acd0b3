/**
 * The model registry: which models dvergr can run as candidates, who serves them and
 * what their tokens cost. The shipped `models.edn` beside this file is embedded in the
 * program; `<home>/models.edn` merges over it (entry by entry, key by key, :prices price
 * by price, :tool-prices tool by tool) and may add models. See models.edn for the fields.
 */
import SHIPPED_MODELS_EDN from "./models.edn" with { type: "text" };
import { DvergrError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { toPlain } from "../edn/plain.ts";
import { FREE, type ModelPrices } from "./cost.ts";
import { closeMatches } from "../close_matches.ts";

export { closeMatches };

export { SHIPPED_MODELS_EDN };

export type ProviderKind = "anthropic" | "openai" | "openai-compatible";

export const PROVIDERS: readonly ProviderKind[] = ["anthropic", "openai", "openai-compatible"];

/** Output tokens per call when an entry does not say. */
export const DEFAULT_MAX_TOKENS = 4096;

export interface ModelEntry {
  id: string;
  provider: ProviderKind;
  /** The model name sent to the API. */
  apiModel: string;
  aliases: string[];
  /** What a call is billed at, dollars per million tokens. */
  prices: ModelPrices;
  /** Registry id of the API model whose prices give the list price; null = the bill. */
  listPriceOf: string | null;
  maxTokens: number;
  baseUrl: string | null;
  apiKeyEnv: string | null;
  doc: string | null;
  /** The files that defined it, shipped first. */
  sources: string[];
  /**
   * False for a model named as `provider/model` that no registry file lists: it runs, its
   * tokens are counted, but its prices are unknown (`prices` are zeros that must not be
   * shown as a cost).
   */
  priced: boolean;
}

/**
 * The fees of the tools a provider runs itself, by provider and tool, in dollars per 1,000
 * uses (`:tool-prices` of models.edn): the model gateway reserves and meters them.
 */
export type ToolPrices = Record<string, Record<string, number>>;

export interface ModelRegistry {
  entries: Map<string, ModelEntry>;
  /** Provider-side tool fees (dollars per 1,000 uses), by provider and tool. */
  toolPrices: ToolPrices;
  /** Alias → id. */
  aliases: Map<string, string>;
  /** The files read, in merge order. */
  files: string[];
}

/** One file's entries as written: every field optional until the layers are merged. */
interface RawEntry {
  provider?: ProviderKind;
  aliases?: string[];
  apiModel?: string;
  prices?: Partial<ModelPrices>;
  listPriceOf?: string;
  maxTokens?: number;
  baseUrl?: string;
  apiKeyEnv?: string;
  doc?: string;
}

export interface RegistryLayer {
  file: string;
  entries: Map<string, RawEntry>;
  /** `:tool-prices`, as written (merged tool by tool). */
  toolPrices?: ToolPrices;
}

export const SHIPPED_MODELS_FILE = "models.edn (shipped)";

const ENTRY_KEYS: Record<string, keyof RawEntry> = {
  "provider": "provider",
  "aliases": "aliases",
  "api-model": "apiModel",
  "prices": "prices",
  "list-price-of": "listPriceOf",
  "max-tokens": "maxTokens",
  "base-url": "baseUrl",
  "api-key-env": "apiKeyEnv",
  "doc": "doc",
};

const PRICE_KEYS: Record<string, keyof ModelPrices> = {
  "input": "input",
  "output": "output",
  "cache-read": "cacheRead",
  "cache-write": "cacheWrite",
};

const REGISTRY_HINT =
  "See the shipped core/models/models.edn for the fields; prices are dollars per million tokens";

function invalid(file: string, message: string, details: Record<string, unknown> = {}) {
  return new DvergrError(
    "REGISTRY_INVALID",
    `Cannot load the model registry: ${file}: ${message}`,
    { hint: REGISTRY_HINT, details: { file, ...details } },
  );
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return "nil";
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return "a vector";
  if (typeof v === "object") return "a map";
  return String(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads one models.edn text into a layer; a DvergrError names the file, model and field. */
export function parseModelsEdn(text: string, file: string): RegistryLayer {
  const plain = toPlain(readEdn(text, { file }));
  if (!isPlainObject(plain)) {
    throw invalid(file, `expected a map {:models {…}}, found ${describe(plain)}`);
  }
  for (const k of Object.keys(plain)) {
    if (k !== "models" && k !== "tool-prices") {
      throw invalid(file, `unknown key :${k} (expected :models and :tool-prices)`);
    }
  }
  const models = plain.models ?? {};
  if (!isPlainObject(models)) {
    throw invalid(
      file,
      `:models: expected a map from model id to entry, found ${describe(models)}`,
    );
  }
  const entries = new Map<string, RawEntry>();
  for (const [id, raw] of Object.entries(models)) {
    if (id.trim() === "" || /\s/.test(id)) {
      throw invalid(file, `model id ${JSON.stringify(id)} is empty or has spaces`);
    }
    entries.set(id, parseEntry(file, id, raw));
  }
  const toolPrices = plain["tool-prices"] === undefined
    ? undefined
    : parseToolPrices(file, plain["tool-prices"]);
  return { file, entries, ...(toolPrices ? { toolPrices } : {}) };
}

/** `:tool-prices {:anthropic {:web-search 10}}`: dollars per 1,000 uses, never negative. */
function parseToolPrices(file: string, value: unknown): ToolPrices {
  const shape = `expected {:anthropic {:web-search 10}, …} (dollars per 1,000 uses)`;
  if (!isPlainObject(value)) {
    throw invalid(file, `:tool-prices: ${shape}, found ${describe(value)}`);
  }
  const out: ToolPrices = {};
  for (const [provider, tools] of Object.entries(value)) {
    if (!["anthropic", "openai"].includes(provider)) {
      throw invalid(file, `:tool-prices: unknown provider :${provider} (anthropic or openai)`);
    }
    if (!isPlainObject(tools)) {
      throw invalid(file, `:tool-prices :${provider}: ${shape}, found ${describe(tools)}`);
    }
    out[provider] = {};
    for (const [tool, fee] of Object.entries(tools)) {
      if (typeof fee !== "number" || !Number.isFinite(fee) || fee < 0) {
        throw invalid(
          file,
          `:tool-prices :${provider} :${tool}: expected dollars per 1,000 uses (a number, 0 or ` +
            `more), found ${describe(fee)}`,
        );
      }
      out[provider][tool] = fee;
    }
  }
  return out;
}

function parseEntry(file: string, id: string, raw: unknown): RawEntry {
  const at = `model ${JSON.stringify(id)}`;
  if (!isPlainObject(raw)) {
    throw invalid(file, `${at}: expected a map, found ${describe(raw)}`, { model: id });
  }
  const out: RawEntry = {};
  for (const [key, value] of Object.entries(raw)) {
    const field = ENTRY_KEYS[key];
    const where = `${at} :${key}`;
    const bad = (expected: string) =>
      invalid(file, `${where}: expected ${expected}, found ${describe(value)}`, {
        model: id,
        field: key,
      });
    switch (field) {
      case undefined:
        throw invalid(
          file,
          `${at}: unknown key :${key} (known: ${
            Object.keys(ENTRY_KEYS).map((k) => ":" + k).join(" ")
          })`,
          {
            model: id,
            field: key,
          },
        );
      case "provider":
        if (typeof value !== "string" || !(PROVIDERS as readonly string[]).includes(value)) {
          throw bad(PROVIDERS.map((p) => ":" + p).join(", "));
        }
        out.provider = value as ProviderKind;
        break;
      case "aliases":
        if (
          !Array.isArray(value) || !value.every((a) => typeof a === "string" && a.trim() !== "")
        ) {
          throw bad("a vector of names");
        }
        out.aliases = value as string[];
        break;
      case "prices":
        out.prices = parsePrices(file, id, value);
        break;
      case "maxTokens":
        if (
          typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 1_000_000
        ) {
          throw bad("a whole number of tokens from 1 to 1000000");
        }
        out.maxTokens = value;
        break;
      case "baseUrl":
        if (typeof value !== "string" || !isHttpUrl(value)) {
          throw bad('an http(s) URL such as "http://127.0.0.1:8080"');
        }
        out.baseUrl = value;
        break;
      case "apiKeyEnv":
        if (typeof value !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) {
          throw bad("an environment variable name");
        }
        out.apiKeyEnv = value;
        break;
      default:
        // apiModel, listPriceOf, doc: non-empty strings
        if (typeof value !== "string" || value.trim() === "") throw bad("a non-empty string");
        out[field] = value;
    }
  }
  return out;
}

function parsePrices(file: string, id: string, value: unknown): Partial<ModelPrices> {
  const at = `model ${JSON.stringify(id)} :prices`;
  if (!isPlainObject(value)) {
    throw invalid(
      file,
      `${at}: expected a map {:input :output :cache-read :cache-write}, found ${describe(value)}`,
      {
        model: id,
        field: "prices",
      },
    );
  }
  const out: Partial<ModelPrices> = {};
  for (const [key, price] of Object.entries(value)) {
    const field = PRICE_KEYS[key];
    if (!field) {
      throw invalid(
        file,
        `${at}: unknown price :${key} (known: :input :output :cache-read :cache-write)`,
        {
          model: id,
          field: "prices",
        },
      );
    }
    if (typeof price !== "number" || !Number.isFinite(price) || price < 0 || price > 1_000_000) {
      throw invalid(
        file,
        `${at} :${key}: expected dollars per million tokens (a number ≥ 0), found ${
          describe(price)
        }`,
        {
          model: id,
          field: "prices",
        },
      );
    }
    out[field] = price;
  }
  return out;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * Merges layers (shipped first, then the home's) into a registry and checks it whole:
 * every entry has a provider, priced API models have input and output prices, aliases
 * are unambiguous and :list-price-of names a priced API model.
 */
export function buildRegistry(layers: RegistryLayer[]): ModelRegistry {
  const merged = mergeLayers(layers);
  const entries = new Map<string, ModelEntry>();
  for (const [id, { raw, sources }] of merged) entries.set(id, completeEntry(id, raw, sources));
  const aliases = resolveAliases(layers, merged, entries);
  for (const e of entries.values()) resolveListPrice(e, entries, aliases);
  const toolPrices: ToolPrices = {};
  for (const layer of layers) {
    for (const [provider, tools] of Object.entries(layer.toolPrices ?? {})) {
      toolPrices[provider] = { ...toolPrices[provider], ...tools };
    }
  }
  return { entries, aliases, toolPrices, files: layers.map((l) => l.file) };
}

/** An entry merged over the layers, with the layers that defined it. */
interface MergedEntry {
  raw: RawEntry;
  sources: string[];
  /** The last layer that gave its :aliases. */
  aliasLayer: number;
  priceFile: string;
}

// Entry by entry, key by key, and :prices price by price: a later layer wins.
function mergeLayers(layers: RegistryLayer[]): Map<string, MergedEntry> {
  const merged = new Map<string, MergedEntry>();
  layers.forEach((layer, li) => {
    for (const [id, raw] of layer.entries) {
      const prev = merged.get(id);
      if (!prev) {
        merged.set(id, {
          raw: { ...raw },
          sources: [layer.file],
          aliasLayer: li,
          priceFile: layer.file,
        });
        continue;
      }
      const prices = raw.prices ? { ...prev.raw.prices, ...raw.prices } : prev.raw.prices;
      prev.raw = { ...prev.raw, ...raw, prices };
      prev.sources.push(layer.file);
      if (raw.aliases) prev.aliasLayer = li;
      if (raw.prices) prev.priceFile = layer.file;
    }
  });
  return merged;
}

/** A merged entry with its defaults, refused without a provider or the prices it needs. */
function completeEntry(id: string, raw: RawEntry, sources: string[]): ModelEntry {
  const file = sources[sources.length - 1];
  if (!raw.provider) {
    throw invalid(
      file,
      `model ${JSON.stringify(id)}: no :provider (one of ${
        PROVIDERS.map((p) => ":" + p).join(", ")
      })`,
      {
        model: id,
        field: "provider",
      },
    );
  }
  const needsPrices = raw.provider !== "openai-compatible" && raw.listPriceOf === undefined;
  const p = raw.prices ?? {};
  if (needsPrices && (p.input === undefined || p.output === undefined)) {
    throw invalid(
      file,
      `model ${
        JSON.stringify(id)
      }: :prices needs :input and :output (an API model is billed by its tokens)`,
      {
        model: id,
        field: "prices",
      },
    );
  }
  const input = p.input ?? 0;
  return {
    id,
    provider: raw.provider,
    apiModel: raw.apiModel ?? id,
    aliases: raw.aliases ?? [],
    prices: {
      input,
      output: p.output ?? 0,
      cacheRead: p.cacheRead ?? input,
      cacheWrite: p.cacheWrite ?? input,
    },
    listPriceOf: raw.listPriceOf ?? null,
    maxTokens: raw.maxTokens ?? DEFAULT_MAX_TOKENS,
    baseUrl: raw.baseUrl ?? null,
    apiKeyEnv: raw.apiKeyEnv ?? null,
    doc: raw.doc ?? null,
    sources,
    priced: true,
  };
}

/**
 * Alias → id. A later layer's claim wins over an earlier one's; two claims in one layer
 * are ambiguous. Each entry keeps only the aliases it won.
 */
function resolveAliases(
  layers: RegistryLayer[],
  merged: Map<string, MergedEntry>,
  entries: Map<string, ModelEntry>,
): Map<string, string> {
  const aliases = new Map<string, string>();
  const aliasLayerOf = new Map<string, number>();
  const byAliasLayer = [...entries.values()].sort((a, b) =>
    merged.get(a.id)!.aliasLayer - merged.get(b.id)!.aliasLayer
  );
  for (const e of byAliasLayer) {
    const li = merged.get(e.id)!.aliasLayer;
    for (const alias of e.aliases) {
      if (alias === e.id) continue;
      const file = layers[li]?.file ?? SHIPPED_MODELS_FILE;
      if (entries.has(alias)) {
        throw invalid(
          file,
          `model ${JSON.stringify(e.id)} :aliases: ${
            JSON.stringify(alias)
          } is the id of another model`,
          {
            model: e.id,
            field: "aliases",
          },
        );
      }
      const owner = aliases.get(alias);
      if (owner && owner !== e.id && aliasLayerOf.get(alias) === li) {
        throw invalid(
          file,
          `alias ${JSON.stringify(alias)} names both ${JSON.stringify(owner)} and ${
            JSON.stringify(e.id)
          }`,
          {
            model: e.id,
            field: "aliases",
          },
        );
      }
      aliases.set(alias, e.id);
      aliasLayerOf.set(alias, li);
    }
  }
  for (const e of entries.values()) e.aliases = e.aliases.filter((a) => aliases.get(a) === e.id);
  return aliases;
}

/** Points an entry's :list-price-of at the id of a priced API model (an alias may name it). */
function resolveListPrice(
  e: ModelEntry,
  entries: Map<string, ModelEntry>,
  aliases: Map<string, string>,
): void {
  if (e.listPriceOf === null) return;
  const file = e.sources[e.sources.length - 1];
  const targetId = entries.has(e.listPriceOf) ? e.listPriceOf : aliases.get(e.listPriceOf);
  const target = targetId ? entries.get(targetId) : undefined;
  if (!target) {
    throw invalid(
      file,
      `model ${JSON.stringify(e.id)} :list-price-of: ${
        JSON.stringify(e.listPriceOf)
      } is not a model of the registry`,
      {
        model: e.id,
        field: "list-price-of",
      },
    );
  }
  if (target.listPriceOf !== null || target.id === e.id) {
    throw invalid(
      file,
      `model ${JSON.stringify(e.id)} :list-price-of: ${
        JSON.stringify(e.listPriceOf)
      } is itself priced by another model`,
      {
        model: e.id,
        field: "list-price-of",
      },
    );
  }
  e.listPriceOf = target.id;
}

function lookup(registry: ModelRegistry, name: string): ModelEntry | undefined {
  const id = registry.entries.has(name) ? name : registry.aliases.get(name);
  return id === undefined ? undefined : registry.entries.get(id);
}

/**
 * A `provider/model` name split at its first slash, when the prefix is a provider dvergr
 * speaks (`anthropic/`, `openai/`, `openai-compatible/`), as model ids are written across
 * the ecosystem; null otherwise.
 */
export function providerPrefixed(name: string): { provider: ProviderKind; model: string } | null {
  const slash = name.indexOf("/");
  if (slash <= 0) return null;
  const provider = name.slice(0, slash) as ProviderKind;
  const model = name.slice(slash + 1);
  if (!PROVIDERS.includes(provider) || model.trim() === "" || /\s/.test(model)) return null;
  return { provider, model };
}

/** How to give prices to a model the registry does not list (a note for reports). */
export function pricesHint(id: string, provider: ProviderKind): string {
  return `add its prices (dollars per million tokens) to <home>/models.edn: {:models {"${id}" ` +
    `{:provider :${provider} :prices {:input 1.0 :output 4.0}}}}`;
}

/**
 * The entry for an id or alias. A name `provider/model` (`openai/gpt-5.2`) that the registry
 * does not list runs as that provider's model `model`: the registry's entry when it lists
 * `model` for that provider, else an unpriced entry (tokens counted, cost unknown). Any other
 * unknown name is a DvergrError MODEL_UNKNOWN listing close matches.
 */
export function resolveModel(registry: ModelRegistry, name: string): ModelEntry {
  const entry = lookup(registry, name);
  if (entry) return entry;
  const prefixed = providerPrefixed(name);
  if (prefixed) {
    const known = lookup(registry, prefixed.model);
    if (known && known.provider === prefixed.provider) return known;
    return {
      id: name,
      provider: prefixed.provider,
      apiModel: prefixed.model,
      aliases: [],
      prices: { ...FREE },
      listPriceOf: null,
      maxTokens: DEFAULT_MAX_TOKENS,
      baseUrl: null,
      apiKeyEnv: null,
      doc: null,
      sources: [],
      priced: false,
    };
  }
  const known = [...registry.entries.keys(), ...registry.aliases.keys()].sort();
  const close = closeMatches(name, known);
  const closeIds = [...new Set(close.map((n) => registry.aliases.get(n) ?? n))];
  const ids = [...registry.entries.keys()].sort();
  throw new DvergrError(
    "MODEL_UNKNOWN",
    `Cannot use model ${JSON.stringify(name)}: it is not in the model registry`,
    {
      hint:
        (close.length > 0
          ? `Did you mean ${close.map((n) => JSON.stringify(n)).join(" or ")}? Models: ${
            ids.join(", ")
          }. `
          : `Models: ${ids.join(", ")}. `) +
        `A model not listed runs when named with its provider, e.g. "openai/${name}" or ` +
        `"anthropic/${name}" (its cost is then unknown), or add it to <home>/models.edn`,
      details: { model: name, closeMatches: close, closeIds, known: ids, files: registry.files },
    },
  );
}

/** The prices a model's list price is computed at: its :list-price-of model's, else its own. */
export function listPrices(registry: ModelRegistry, entry: ModelEntry): ModelPrices {
  if (entry.listPriceOf === null) return entry.prices;
  return registry.entries.get(entry.listPriceOf)?.prices ?? FREE;
}
