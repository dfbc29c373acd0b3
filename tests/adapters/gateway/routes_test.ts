import assert from "node:assert/strict";
import { registryRouter } from "../../../adapters/gateway/routes.ts";
import {
  buildRegistry,
  parseModelsEdn,
  SHIPPED_MODELS_EDN,
  SHIPPED_MODELS_FILE,
} from "../../../core/models/registry.ts";

const registry = buildRegistry([
  parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE),
  parseModelsEdn(
    `{:models {"ollama" {:provider :openai-compatible :base-url "http://127.0.0.1:11434"}}}`,
    "models.edn (test)",
  ),
]);
const env = (k: string) =>
  ({ ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o" } as Record<string, string>)[k];

function outcome(r: ReturnType<ReturnType<typeof registryRouter>>): string {
  return "problem" in r ? (r.notTheAttempts ? "not-the-attempts" : r.problem) : r.entry.id;
}

Deno.test("registryRouter() without declared models reaches the registry's priced Anthropic and OpenAI models only", () => {
  const route = registryRouter(registry, env);
  assert.equal(outcome(route("haiku")), "claude-haiku-4-5");
  assert.equal(outcome(route("openai/gpt-4.1-mini")), "gpt-4.1-mini");
  // The host's loopback (local, a compatible server), a model without prices, none, unknown.
  for (
    const m of ["local", "ollama", "openai-compatible/x", "anthropic/claude-9", "nope", undefined]
  ) {
    assert.equal(outcome(route(m)), "not-the-attempts", String(m));
  }
  const r = route("local");
  assert("problem" in r);
  assert.match(
    r.problem,
    /^model "local" is not one of this attempt's models \(the registry's priced/,
  );
});

Deno.test("registryRouter() with declared models reaches those and nothing else", () => {
  const route = registryRouter(registry, env, ["local", "sonnet"]);
  assert.equal(outcome(route("local")), "local");
  assert.equal(outcome(route("claude-sonnet-4-5")), "claude-sonnet-4-5");
  for (const m of ["haiku", "ollama", "openai-compatible/x", "gpt-5"]) {
    assert.equal(outcome(route(m)), "not-the-attempts", m);
  }
  const r = route("haiku");
  assert("problem" in r && /\(local, claude-sonnet-4-5\)$/.test(r.problem), JSON.stringify(r));
  assert.throws(
    () => registryRouter(registry, env, ["no-such-model"]),
    /not in the model registry/,
  );
});
