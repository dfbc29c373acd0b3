import assert from "node:assert/strict";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import { readNamedCommands } from "../../../adapters/candidates/named/candidates_file.ts";
import type { CandidateRequest, CandidateSpec } from "../../../core/ports/candidate_kind.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";
import { resolveBaseline } from "../../../core/engine/benchmark.ts";

const env = (k: string) => Deno.env.get(k);
const parseCandidateSpec = candidateKinds.parse;

/** The experiment's candidates as the registry resolves them. */
async function resolveCandidates(specs: CandidateSpec[], req: CandidateRequest) {
  return (await candidateKinds.resolve(specs, req)).candidates;
}

Deno.test("candidateKinds.parse() reads builtins, inline commands with spaces and commas, named commands and models", () => {
  assert.deepEqual(parseCandidateSpec("builtin:noop"), {
    kind: "builtin",
    builtin: "noop",
    name: "builtin:noop",
  });
  assert.deepEqual(parseCandidateSpec("me=cmd:./agent.sh --fields a,b --x=1"), {
    kind: "command",
    name: "me",
    command: "./agent.sh --fields a,b --x=1",
  });
  assert.deepEqual(parseCandidateSpec("cmd:naive"), {
    kind: "named",
    name: "naive",
    explicit: true,
  });
  assert.deepEqual(parseCandidateSpec("claude-haiku-4-5"), {
    kind: "named",
    name: "claude-haiku-4-5",
    explicit: false,
  });
  assert.throws(() => parseCandidateSpec("builtin:oracle"), /there is no builtin "oracle"/);
  assert.throws(() => parseCandidateSpec("bad name=cmd:x"), /is not a candidate name/);
  assert.throws(() => parseCandidateSpec("me=cmd:"), /the command is empty/);
  assert.throws(
    () => parseCandidateSpec("./agent.sh --fast"),
    /holds spaces but is not NAME=cmd:COMMAND/,
  );
  assert.deepEqual(candidateKinds.model("a"), { kind: "model", model: "a" });
});

Deno.test("readNamedCommands() reads candidates.edn and resolves relative mounts against it", async () => {
  const dir = await Deno.makeTempDir();
  assert.equal((await readNamedCommands(`${dir}/candidates.edn`)).size, 0);
  await Deno.writeTextFile(
    `${dir}/candidates.edn`,
    '{"naive" {:command "sh agents/naive.sh" :mounts ["agents" "/opt/x"] :env {"A" "1"} :pass-env ["KEY"] :network false}}',
  );
  const named = await readNamedCommands(`${dir}/candidates.edn`);
  assert.deepEqual(named.get("naive"), {
    name: "naive",
    command: "sh agents/naive.sh",
    mounts: [`${dir}/agents`, "/opt/x"],
    env: { A: "1" },
    passEnv: ["KEY"],
    network: false,
  });
  await Deno.writeTextFile(
    `${dir}/candidates.edn`,
    '{"local" {:command "sh agent.sh" :models ["local" "haiku"]}}',
  );
  const local = (await readNamedCommands(`${dir}/candidates.edn`)).get("local");
  assert(local && "command" in local);
  assert.deepEqual(local.models, ["local", "haiku"]);
  await Deno.writeTextFile(`${dir}/candidates.edn`, '{"naive" {:cmd "x"}}');
  await assert.rejects(
    () => readNamedCommands(`${dir}/candidates.edn`),
    /Cannot read .*candidates.edn: naive/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("candidateKinds.resolve() routes each spec and refuses duplicate names and unknown commands", async () => {
  const bundle = wordBundle(1);
  const named = new Map([["naive", { name: "naive", command: "true" }]]);
  const opts = { bundle, env, isolation: "none" as const, named };
  const cands = await resolveCandidates(
    [
      parseCandidateSpec("builtin:reference"),
      parseCandidateSpec("naive"),
      parseCandidateSpec("x=cmd:echo a,b"),
    ],
    opts,
  );
  assert.deepEqual(cands.map((c) => [c.name, c.identity.kind]), [
    ["builtin:reference", "builtin"],
    ["naive", "command"],
    ["x", "command"],
  ]);
  assert.equal(cands[2].identity.command, "echo a,b");
  await assert.rejects(
    () => resolveCandidates([parseCandidateSpec("x=cmd:a"), parseCandidateSpec("x=cmd:b")], opts),
    /two candidates have this name/,
  );
  await assert.rejects(
    () => resolveCandidates([parseCandidateSpec("cmd:other")], opts),
    (e: Error & { hint?: string }) =>
      /has no such command/.test(e.message) && e.hint === "Known commands: naive",
  );
  await assert.rejects(() => resolveCandidates([], opts), /without candidates/);
});

Deno.test("candidateKinds.sandboxed() is true only for kinds that may run in the sandbox, and a run of built-ins and models never probes bubblewrap", async () => {
  const sandboxed = (...texts: string[]) => candidateKinds.sandboxed(texts.map(parseCandidateSpec));
  assert.equal(sandboxed("builtin:reference", "builtin:noop"), false);
  assert.equal(sandboxed("builtin:reference", "x=cmd:true"), true);
  assert.equal(sandboxed("agent:codex:gpt-5"), true);
  // A named candidate may stand for a command.
  assert.equal(sandboxed("naive"), true);
  assert.equal(sandboxed("cmd:naive"), true);
  // Where bubblewrap works, only a run that may use it says so: a run of built-ins is "none".
  const bundle = wordBundle(1);
  const builtins = await candidateKinds.resolve([parseCandidateSpec("builtin:reference")], {
    bundle,
    env,
  });
  assert.equal(builtins.isolation, "none");
  const withCommand = await candidateKinds.resolve(
    [parseCandidateSpec("builtin:reference"), parseCandidateSpec("x=cmd:true")],
    { bundle, env: (k) => (k === "DVERGR_ISOLATION" ? "none" : env(k)) },
  );
  assert.equal(withCommand.isolation, "none");
  assert.deepEqual(withCommand.candidates.map((c) => c.identity.kind), ["builtin", "command"]);
});

Deno.test("candidateKinds.resolve() gives a command's declared models to its identity, and its preflight refuses one the registry does not know", async () => {
  const bundle = wordBundle(1);
  const named = new Map([
    ["mine", { name: "mine", command: "true", models: ["local", "haiku"] }],
    ["typo", { name: "typo", command: "true", models: ["claude-haiku-9"] }],
  ]);
  const home = await Deno.makeTempDir();
  const opts = { bundle, env, isolation: "none" as const, named, homeDir: home };
  const [mine, typo] = await resolveCandidates(
    [parseCandidateSpec("mine"), parseCandidateSpec("typo")],
    opts,
  );
  assert.deepEqual(mine.identity.models, ["haiku", "local"]);
  await mine.preflight?.();
  await assert.rejects(
    () => typo.preflight!(),
    /Cannot use candidate "typo": its :models names a model the registry does not know/,
  );
  await Deno.remove(home, { recursive: true });
});

Deno.test("candidateKinds.resolve() gives model ids to the model registry", async () => {
  const bundle = wordBundle(1);
  const opts = { bundle, env: () => undefined, isolation: "none" as const, named: new Map() };
  await assert.rejects(
    () => resolveCandidates([candidateKinds.model("no-such-model-xyz")], opts),
    (e: Error & { code?: string }) => e.code === "MODEL_UNKNOWN",
  );
  const [noop, model] = await resolveCandidates(
    [parseCandidateSpec("builtin:noop"), candidateKinds.model("claude-haiku-4-5")],
    opts,
  );
  assert.equal(noop.name, "builtin:noop");
  // The model's name is its id, wherever it stands among the candidates.
  assert.equal(model.name, "claude-haiku-4-5");
  assert.equal(model.identity.kind, "model");
  await assert.rejects(() => model.preflight!(), /ANTHROPIC_API_KEY is not set/);
});

Deno.test("resolveBaseline() refuses a baseline that is not a candidate, naming the candidates", () => {
  const candidates = [{ name: "a" }, { name: "b" }].map((c) => ({
    ...c,
    identity: {},
    run: () => Promise.reject(new Error("not run")),
  }));
  assert.equal(resolveBaseline(undefined, candidates), undefined);
  assert.equal(resolveBaseline("b", candidates), "b");
  assert.throws(() => resolveBaseline("c", candidates), (e: Error & { hint?: string }) => {
    assert.match(
      e.message,
      /Cannot compare against baseline "c": it is not a candidate of this run/,
    );
    assert.match(e.hint!, /^Name one of: "a", "b"/);
    return true;
  });
});

Deno.test("model candidates are named by model id whatever the order, and --baseline takes an alias", async () => {
  const bundle = wordBundle(1);
  const opts = { bundle, env: () => undefined, isolation: "none" as const, named: new Map() };
  const names = async (models: string[]) =>
    (await resolveCandidates(models.map((m) => candidateKinds.model(m)), opts)).map((c) => c.name);
  assert.deepEqual(await names(["haiku", "gpt-4.1-mini"]), ["claude-haiku-4-5", "gpt-4.1-mini"]);
  assert.deepEqual(await names(["gpt-4.1-mini", "haiku"]), ["gpt-4.1-mini", "claude-haiku-4-5"]);
  assert.deepEqual(await names(["openai/gpt-5.2"]), ["openai-gpt-5.2"]);
  // The same model twice (by alias and by id) is told apart in the order given.
  const twice = await resolveCandidates(
    ["gpt-4.1-mini", "haiku", "claude-haiku-4-5"].map((m) => candidateKinds.model(m)),
    opts,
  );
  assert.deepEqual(twice.map((c) => c.name), [
    "gpt-4.1-mini",
    "claude-haiku-4-5",
    "claude-haiku-4-5-2",
  ]);
  const [mini, haiku] = twice;
  assert.equal(resolveBaseline("haiku", [mini, haiku]), "claude-haiku-4-5");
  assert.equal(resolveBaseline("claude-haiku-4-5", [haiku, mini]), "claude-haiku-4-5");
  assert.equal(resolveBaseline("gpt-4.1-mini", [haiku, mini]), "gpt-4.1-mini");
  assert.throws(
    () => resolveBaseline("haiku", twice),
    /baseline "haiku": 2 candidates are that model \("claude-haiku-4-5", "claude-haiku-4-5-2"\)/,
  );
  // A command candidate that takes a model's name is still a clash, not a twin.
  await assert.rejects(
    () =>
      resolveCandidates(
        [parseCandidateSpec("claude-haiku-4-5=cmd:true"), candidateKinds.model("haiku")],
        opts,
      ),
    /two candidates have this name/,
  );
});
Deno.test("candidateKinds.parse() says which kind a NAME=WORD lacks the colon of, and refuses NAME=unknown", () => {
  assert.throws(
    () => candidateKinds.parse("mine=cmd"),
    (e: Error & { hint?: string }) =>
      /"cmd" needs a colon: NAME=cmd:COMMAND/.test(e.message) &&
      /e\.g\. `mine=cmd:python3 my_agent\.py`/.test(e.hint ?? ""),
  );
  assert.throws(() => candidateKinds.parse("me=agent"), /"agent" needs a colon/);
  assert.throws(
    () => candidateKinds.parse("x=y"),
    (e: Error & { hint?: string }) =>
      /no kind of candidate reads it/.test(e.message) &&
      e.hint === "After NAME= write cmd:COMMAND or agent:CLI:MODEL",
  );
  assert.throws(() => candidateKinds.parse("   "), /it is empty/);
});

Deno.test("candidateKinds.describe() lists every kind's forms with an example each kind reads", () => {
  const kinds = candidateKinds.describe();
  assert.deepEqual(kinds.map((k) => k.kind), ["builtin", "command", "agent", "named", "model"]);
  assert.deepEqual(kinds.filter((k) => k.inlineCommand).map((k) => k.kind), ["command"]);
  for (const k of kinds) {
    for (const f of k.forms) {
      // A bare word is the named kind's until resolved: a model unless candidates.edn has it.
      const read = k.kind === "model" ? "named" : k.kind;
      assert.equal(candidateKinds.parse(f.example).kind, read, f.example);
    }
  }
});

Deno.test("candidateKinds.resolve() gives --mount to inline commands only, never to named ones", async () => {
  const bundle = wordBundle(1);
  const named = new Map([["naive", { name: "naive", command: "true" }]]);
  const [inline, naive] = await resolveCandidates(
    [parseCandidateSpec("x=cmd:true"), parseCandidateSpec("cmd:naive")],
    { bundle, env, isolation: "none", named, mounts: ["/opt/tools"] },
  );
  assert.deepEqual(inline.identity.mounts, ["/opt/tools"]);
  assert.deepEqual(naive.identity.mounts, []);
});
