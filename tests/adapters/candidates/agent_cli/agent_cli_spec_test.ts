/** Agent CLI candidates as users name them; the errors before any cell starts. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { candidateKinds } from "../../../../adapters/candidates/registry.ts";
import { readNamedCommands } from "../../../../adapters/candidates/named/candidates_file.ts";

const parseCandidateSpec = candidateKinds.parse;
import {
  claudeCommand,
  codexCommand,
  createAgentCandidate,
  installMount,
  TESTED_VERSIONS,
} from "../../../../adapters/candidates/agent_cli/agent_cli.ts";
import { isDvergrError } from "../../../../core/errors.ts";
import { runMain } from "../../../../main.ts";
import { memoryContext } from "../../../../cli/context.ts";
import { wordDataset, writeBundleTo } from "../../../helpers/dataset_bundle.ts";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

Deno.test("parseCandidateSpec() reads NAME=agent:CLI:MODEL, models with colons included", () => {
  assert.deepEqual(parseCandidateSpec("cc=agent:claude-code:claude-sonnet-4-5"), {
    kind: "agent",
    name: "cc",
    cli: "claude-code",
    model: "claude-sonnet-4-5",
  });
  assert.deepEqual(parseCandidateSpec("cx=agent:codex:qwen3:8b"), {
    kind: "agent",
    name: "cx",
    cli: "codex",
    model: "qwen3:8b",
  });
  for (const bad of ["x=agent:cursor:m", "x=agent:codex:", "x=agent:codex"]) {
    assert.throws(
      () => parseCandidateSpec(bad),
      (e) => isDvergrError(e) && /NAME=agent:CLI:MODEL/.test(e.hint ?? ""),
      bad,
    );
  }
});

Deno.test("readNamedCommands() reads agent entries of candidates.edn beside commands", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/candidates.edn`,
      `{"claude" {:agent "claude-code" :model "haiku" :install-dir "clis" :max-turns 12 :args ["--effort" "low"]}
        "naive" {:command "sh naive.sh" :max-requests 7}}`,
    );
    const named = await readNamedCommands(`${dir}/candidates.edn`);
    assert.deepEqual(named.get("claude"), {
      name: "claude",
      cli: "claude-code",
      model: "haiku",
      installDir: `${dir}/clis`,
      maxTurns: 12,
      args: ["--effort", "low"],
    });
    const naive = named.get("naive") as { command: string; maxRequests: number };
    assert.equal(naive.command, "sh naive.sh");
    assert.equal(naive.maxRequests, 7);
    await Deno.writeTextFile(`${dir}/candidates.edn`, `{"x" {:agent "cursor" :model "m"}}`);
    await assert.rejects(() => readNamedCommands(`${dir}/candidates.edn`), /candidates\.edn/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createAgentCandidate() names a missing CLI, where it looked and how to install it", async () => {
  const empty = await Deno.makeTempDir();
  try {
    await assert.rejects(
      () =>
        createAgentCandidate(
          { name: "cc", cli: "claude-code", model: "haiku", installDir: empty },
          { isolation: "bwrap", env: () => undefined },
        ),
      (e) =>
        isDvergrError(e) && e.code === "AGENT_CLI_MISSING" &&
        e.message.includes(`${empty}/node_modules/.bin/claude`) &&
        (e.hint ?? "").includes("@anthropic-ai/claude-code@2.1.197"),
    );
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("createAgentCandidate() refuses a model the CLI cannot speak to", async () => {
  await assert.rejects(
    () =>
      createAgentCandidate(
        { name: "cx", cli: "codex", model: "haiku" },
        { isolation: "bwrap", env: () => undefined },
      ),
    (e) => isDvergrError(e) && /codex cannot use model "claude-haiku-4-5"/.test(e.message),
  );
});

Deno.test("dvergr benchmark with an agent CLI that is not installed exits 2 before any cell", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  const ctx = memoryContext({
    env: { PATH: "/usr/bin:/bin", DVERGR_AGENT_CLIS: `${home}/no-clis`, ANTHROPIC_API_KEY: "k" },
  });
  const code = await runMain(
    ["benchmark", dir, "--candidate", "cc=agent:claude-code:haiku", "--home", home],
    ctx,
  );
  const err = ctx.err.join("");
  assert.equal(code, 2, err);
  assert.match(err, /error\[AGENT_CLI_MISSING\]: Cannot use candidate "cc": the claude-code CLI/);
  assert.doesNotMatch(ctx.out.join("") + err, /progress: 1\//);
  await Deno.remove(home, { recursive: true });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("claudeCommand() and codexCommand() turn built-in tools off and reach MCP by DVERGR_MCP_URL", () => {
  const c = claudeCommand("/x/claude", "m", 7, ["--effort", "low"]);
  // In its home: Claude Code counts the files of any other working directory (here /).
  assert.match(c, /^cd "\$HOME" && exec \/x\/claude -p /);
  assert.match(c, /-p --model m --tools '' --mcp-config .*\$DVERGR_MCP_URL.* --strict-mcp-config/);
  assert.match(
    c,
    /--allowedTools 'mcp__world__\*' --max-turns 7 --output-format json --no-session-persistence --effort low$/,
  );
  const x = codexCommand("/x/codex", "m", []);
  assert.match(x, /exec -m m -c model_provider=dvergr/);
  assert.match(x, /wire_api=\\"responses\\"/);
  assert.match(x, /required=true/);
  for (const f of ["shell_tool", "unified_exec", "apps", "plugins", "memories"]) {
    assert(x.includes(`--disable ${f}`), f);
  }
  assert.match(x, /-c web_search=disabled/);
  assert.match(x, /--json --ephemeral --skip-git-repo-check -$/);
});

Deno.test("installMount() mounts the enclosing node_modules of an npm-installed CLI", () => {
  assert.equal(
    installMount("/opt/clis/node_modules/@openai/codex/bin/codex.js"),
    "/opt/clis/node_modules",
  );
  assert.equal(installMount("/home/u/.local/bin/claude"), "/home/u/.local/bin");
});

Deno.test(".ci/run installs exactly the CLI versions dvergr is tested with", async () => {
  const ci = await Deno.readTextFile(`${ROOT}.ci/run`);
  for (const t of Object.values(TESTED_VERSIONS)) {
    assert(ci.includes(`${t.npm}@${t.version}`), `${t.npm}@${t.version} not in .ci/run`);
  }
});

Deno.test("createAgentCandidate() preflight: the model's key must be set for dvergr, and bubblewrap present", async () => {
  // A stand-in CLI that only answers --version: enough to build the candidate.
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/bin`);
    await Deno.writeTextFile(`${dir}/bin/claude`, "#!/bin/sh\necho '9.9.9 (Claude Code)'\n");
    await Deno.chmod(`${dir}/bin/claude`, 0o755);
    const spec = { name: "cc", cli: "claude-code" as const, model: "haiku", installDir: dir };
    const noKey = await createAgentCandidate(spec, { isolation: "bwrap", env: () => undefined });
    assert.equal(noKey.identity.cliVersion, "9.9.9");
    await assert.rejects(
      () => noKey.preflight!(),
      (e) =>
        isDvergrError(e) && e.code === "API_KEY_MISSING" && /ANTHROPIC_API_KEY/.test(e.message),
    );
    const env = (k: string) => (k === "ANTHROPIC_API_KEY" ? "k" : undefined);
    const unsandboxed = await createAgentCandidate(spec, { isolation: "none", env });
    await assert.rejects(
      () => unsandboxed.preflight!(),
      (e) => isDvergrError(e) && /run only sandboxed/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("candidateKinds.parse() reads bare agent:CLI:MODEL as an agent named by the spec", () => {
  assert.deepEqual(parseCandidateSpec("agent:claude-code:claude-sonnet-4-5"), {
    kind: "agent",
    name: "agent:claude-code:claude-sonnet-4-5",
    cli: "claude-code",
    model: "claude-sonnet-4-5",
  });
  assert.deepEqual(parseCandidateSpec("agent:codex:qwen3:8b"), {
    kind: "agent",
    name: "agent:codex:qwen3:8b",
    cli: "codex",
    model: "qwen3:8b",
  });
  assert.throws(() => parseCandidateSpec("agent:gemini:x"), /there is no agent CLI "gemini"/);
  assert.throws(() => parseCandidateSpec("agent:codex:"), /the model is missing/);
});

Deno.test("dvergr benchmark takes bare agent:claude-code:M and agent:codex:M as agent CLIs, not models", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  try {
    for (const spec of ["agent:claude-code:haiku", "agent:codex:gpt-4.1-mini"]) {
      const ctx = memoryContext({
        env: { PATH: "/usr/bin:/bin", DVERGR_AGENT_CLIS: `${home}/no-clis` },
      });
      const code = await runMain(["benchmark", dir, "--candidate", spec, "--home", home], ctx);
      const err = ctx.err.join("");
      assert.equal(code, 2, err);
      assert.match(err, new RegExp(`error\\[AGENT_CLI_MISSING\\]: Cannot use candidate "${spec}"`));
      assert.doesNotMatch(err, /MODEL_UNKNOWN/);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});
