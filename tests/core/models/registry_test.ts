import assert from "node:assert/strict";
import { DvergrError } from "../../../core/errors.ts";
import {
  buildRegistry,
  closeMatches,
  listPrices,
  parseModelsEdn,
  resolveModel,
  SHIPPED_MODELS_EDN,
  SHIPPED_MODELS_FILE,
} from "../../../core/models/registry.ts";
import { loadRegistry } from "../../../adapters/providers/load_registry.ts";

function fromTexts(home: string) {
  return buildRegistry([
    parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE),
    parseModelsEdn(home, "home/models.edn"),
  ]);
}

function refuses(fn: () => unknown, code: string, pattern: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DvergrError, `expected a DvergrError, got ${e}`);
    assert.equal(e.code, code);
    assert.match(e.message, pattern);
    assert.ok(e.hint, "every error has a hint");
    return true;
  });
}

Deno.test("loadRegistry() reads the shipped models: Anthropic, OpenAI and a free local server", async () => {
  const reg = await loadRegistry();
  for (
    const id of [
      "claude-opus-4-5",
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
      "gpt-4.1",
      "gpt-4.1-mini",
      "gpt-4o-mini",
      "o4-mini",
    ]
  ) {
    const e = reg.entries.get(id);
    assert.ok(e, `${id} is shipped`);
    assert.ok(
      e.prices.input > 0 && e.prices.output > e.prices.input,
      `${id} has input and output prices`,
    );
  }
  const haiku = reg.entries.get("claude-haiku-4-5")!;
  assert.equal(haiku.provider, "anthropic");
  assert.deepEqual(haiku.prices, { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 });
  const local = reg.entries.get("local")!;
  assert.equal(local.provider, "openai-compatible");
  assert.deepEqual(local.prices, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
  assert.equal(local.maxTokens, 4096);
  assert.match(SHIPPED_MODELS_EDN, /PRICES CHANGE/);
});

Deno.test("resolveModel() accepts ids and aliases", async () => {
  const reg = await loadRegistry();
  assert.equal(resolveModel(reg, "haiku").id, "claude-haiku-4-5");
  assert.equal(resolveModel(reg, "claude-haiku-4-5-20251001").id, "claude-haiku-4-5");
  assert.equal(resolveModel(reg, "gpt-4o-mini").apiModel, "gpt-4o-mini");
});

Deno.test("resolveModel() runs a provider/model id the registry lacks, unpriced", async () => {
  const reg = await loadRegistry();
  const e = resolveModel(reg, "openai/gpt-5.2");
  assert.equal(e.provider, "openai");
  assert.equal(e.apiModel, "gpt-5.2");
  assert.equal(e.priced, false);
  assert.equal(resolveModel(reg, "anthropic/claude-sonnet-5").provider, "anthropic");
  // A listed model under its provider's prefix is the registry's entry, prices and all.
  const known = resolveModel(reg, "anthropic/claude-haiku-4-5");
  assert.equal(known.id, "claude-haiku-4-5");
  assert.equal(known.priced, true);
  // Under another provider's prefix it is that provider's model, not the registry's.
  assert.equal(resolveModel(reg, "openai/claude-haiku-4-5").priced, false);
  assert.equal(resolveModel(reg, "haiku").priced, true);
  assert.throws(() => resolveModel(reg, "acme/gpt-5.2"), /not in the model registry/);
  assert.throws(
    () => resolveModel(reg, "gpt-5.2"),
    (e: Error & { hint?: string }) => /"openai\/gpt-5\.2"/.test(e.hint ?? ""),
  );
});

Deno.test("resolveModel() refuses an unknown model and names the close matches", async () => {
  const reg = await loadRegistry();
  try {
    resolveModel(reg, "claude-haiku-4.5");
    assert.fail("resolved an unknown model");
  } catch (e) {
    assert.ok(e instanceof DvergrError);
    assert.equal(e.code, "MODEL_UNKNOWN");
    assert.equal(e.message, 'Cannot use model "claude-haiku-4.5": it is not in the model registry');
    assert.match(e.hint!, /Did you mean "claude-haiku-4-5"/);
    assert.ok((e.details!.closeMatches as string[]).includes("claude-haiku-4-5"));
  }
  refuses(() => resolveModel(reg, "zzzzzzzz"), "MODEL_UNKNOWN", /"zzzzzzzz"/);
});

Deno.test("closeMatches() finds typos and contained names, nearest first", () => {
  assert.deepEqual(
    closeMatches("gpt4o", ["gpt-4o", "gpt-4.1", "o3", "claude-opus-4-5"]).slice(0, 1),
    ["gpt-4o"],
  );
  assert.deepEqual(closeMatches("sonet", ["sonnet", "opus", "haiku"]), ["sonnet"]);
  assert.deepEqual(closeMatches("qqqqqqqq", ["sonnet", "opus"]), []);
});

Deno.test("buildRegistry() merges a home entry over the shipped one key by key and price by price", () => {
  const reg = fromTexts(`{:models {"claude-haiku-4-5" {:prices {:output 6} :max-tokens 2000}
                                  "qwen3:8b" {:provider :openai-compatible :base-url "http://127.0.0.1:11434"}}}`);
  const haiku = reg.entries.get("claude-haiku-4-5")!;
  assert.deepEqual(haiku.prices, { input: 1, output: 6, cacheRead: 0.1, cacheWrite: 1.25 });
  assert.equal(haiku.maxTokens, 2000);
  assert.equal(haiku.provider, "anthropic");
  assert.deepEqual(haiku.sources, [SHIPPED_MODELS_FILE, "home/models.edn"]);
  assert.equal(resolveModel(reg, "haiku").id, "claude-haiku-4-5");
  const qwen = resolveModel(reg, "qwen3:8b");
  assert.equal(qwen.baseUrl, "http://127.0.0.1:11434");
  assert.equal(qwen.apiModel, "qwen3:8b");
});

Deno.test("buildRegistry() lets the home take a shipped alias for its own model", () => {
  const reg = fromTexts(
    `{:models {"my-haiku" {:provider :anthropic :api-model "claude-haiku-4-5" :aliases ["haiku"]
                                               :prices {:input 1 :output 5}}}}`,
  );
  assert.equal(resolveModel(reg, "haiku").id, "my-haiku");
  assert.deepEqual(reg.entries.get("claude-haiku-4-5")!.aliases, ["claude-haiku-4-5-20251001"]);
  assert.deepEqual(reg.entries.get("my-haiku")!.prices, {
    input: 1,
    output: 5,
    cacheRead: 1,
    cacheWrite: 1,
  });
});

Deno.test("buildRegistry() prices a subscription at its list-price-of model", () => {
  const reg = fromTexts(`{:models {"sub" {:provider :anthropic :list-price-of "sonnet"}}}`);
  const sub = reg.entries.get("sub")!;
  assert.equal(sub.listPriceOf, "claude-sonnet-4-5");
  assert.deepEqual(sub.prices, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
  assert.deepEqual(listPrices(reg, sub), {
    input: 3,
    output: 15,
    cacheRead: 0.3,
    cacheWrite: 3.75,
  });
  const haiku = reg.entries.get("claude-haiku-4-5")!;
  assert.equal(listPrices(reg, haiku), haiku.prices);
});

Deno.test("parseModelsEdn() and buildRegistry() refuse bad entries, naming file, model and field", () => {
  refuses(
    () => fromTexts(`{:models {"x" {:provider :anthropic :prices {:input "cheap" :output 1}}}}`),
    "REGISTRY_INVALID",
    /home\/models\.edn: model "x" :prices :input: expected dollars per million tokens \(a number ≥ 0\), found "cheap"/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:provider :anthropic :colour :red}}}`),
    "REGISTRY_INVALID",
    /model "x": unknown key :colour/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:provider :mistral}}}`),
    "REGISTRY_INVALID",
    /model "x" :provider: expected :anthropic, :openai, :openai-compatible, found "mistral"/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:prices {:input 1 :output 1}}}}`),
    "REGISTRY_INVALID",
    /model "x": no :provider/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:provider :openai}}}`),
    "REGISTRY_INVALID",
    /model "x": :prices needs :input and :output/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:provider :openai :list-price-of "nope"}}}`),
    "REGISTRY_INVALID",
    /:list-price-of: "nope" is not a model/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:provider :openai-compatible :base-url "ftp://h"}}}`),
    "REGISTRY_INVALID",
    /:base-url: expected an http\(s\) URL/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:provider :openai-compatible :max-tokens 0}}}`),
    "REGISTRY_INVALID",
    /:max-tokens: expected a whole number/,
  );
  refuses(
    () => fromTexts(`{:models {"x" {:provider :openai-compatible :aliases ["gpt-4o"]}}}`),
    "REGISTRY_INVALID",
    /"gpt-4o" is the id of another model/,
  );
  refuses(
    () =>
      fromTexts(
        `{:models {"x" {:provider :openai-compatible :aliases ["a"]} "y" {:provider :openai-compatible :aliases ["a"]}}}`,
      ),
    "REGISTRY_INVALID",
    /alias "a" names both "x" and "y"/,
  );
  refuses(() => fromTexts(`{:modles {}}`), "REGISTRY_INVALID", /unknown key :modles/);
  refuses(() => fromTexts(`{:models {"x" {:provider :openai}}`), "EDN_SYNTAX", /models\.edn/);
});

Deno.test("loadRegistry() merges <home>/models.edn and works without one", async () => {
  const home = await Deno.makeTempDir({ prefix: "dvergr-home-" });
  try {
    const without = await loadRegistry({ homeDir: home });
    assert.equal(without.files.length, 1);
    await Deno.writeTextFile(
      `${home}/models.edn`,
      `{:models {"local" {:base-url "http://127.0.0.1:9999" :api-model "llama"}}}`,
    );
    const reg = await loadRegistry({ homeDir: home });
    assert.deepEqual(reg.files, [SHIPPED_MODELS_FILE, `${home}/models.edn`]);
    const local = resolveModel(reg, "local");
    assert.equal(local.baseUrl, "http://127.0.0.1:9999");
    assert.equal(local.apiModel, "llama");
    assert.equal(local.provider, "openai-compatible");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
