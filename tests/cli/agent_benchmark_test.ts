/**
 * As a user runs it: `dvergr benchmark` with Claude Code, Codex and an API model on one
 * bundle, every model behind a local scripted provider named in the home's models.edn.
 * Needs both CLIs and bubblewrap; skipped with the reason otherwise (CI installs them and
 * sets DVERGR_REQUIRE_AGENT_CLIS=1).
 */
import assert from "node:assert/strict";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { findAgentCli } from "../../adapters/candidates/agent_cli/agent_cli.ts";
import { detectBwrap } from "../../adapters/candidates/command/command.ts";
import { writeBundleTo } from "../helpers/dataset_bundle.ts";
import { caseReader, startFakeAgentProvider } from "../helpers/fake_agent_provider.ts";

const hostEnv = (k: string) => Deno.env.get(k);
let reason: string | null = null;
if (!(await detectBwrap(hostEnv))) reason = "bubblewrap is not available";
for (const cli of ["claude-code", "codex"] as const) {
  if (reason === null && (await findAgentCli(cli, undefined, hostEnv)).path === null) {
    if (hostEnv("DVERGR_REQUIRE_AGENT_CLIS") === "1") throw new Error(`${cli} is required`);
    reason = `the ${cli} CLI is not installed (set DVERGR_AGENT_CLIS or put it on PATH)`;
  }
}
// deno-lint-ignore no-console -- say why the test is skipped
if (reason !== null) console.error(`agent_benchmark_test: skipping: ${reason}`);

const CHECKER = `
export function check({ files, gold }) {
  let a = null;
  try { a = edn.parse(files["/out/answer.edn"] ?? ""); } catch { a = null; }
  const right = a !== null && typeof a === "object" && a.answer === gold.answer;
  return { checks: { answered: a !== null, right }, reward: right ? 1 : 0 };
}
`;

function harbourBundle(): Map<string, string> {
  const files = new Map<string, string>([
    [
      "workflow.edn",
      '{:title "Harbour" :task "Read /docs/case.txt and write {\\"answer\\" \\"TEXT IN CAPITALS\\"} to /out/answer.edn." :profile "developer" :capture ["/out"] :timeout-ms 120000}',
    ],
    ["checker.js", CHECKER],
    [
      "calibration.edn",
      '{:case "c1" :reference {"/out/answer.edn" "{\\"answer\\" \\"QUIET HARBOUR\\"}"} :damaged {:wrong {:files {"/out/answer.edn" "{\\"answer\\" \\"no\\"}"} :loses [:right]}}}',
    ],
  ]);
  for (const [id, text] of [["c1", "quiet harbour"], ["c2", "busy quay"]]) {
    files.set(`cases/${id}/fixtures/docs/case.txt`, text);
    files.set(`cases/${id}/gold.edn`, `{:answer "${text.toUpperCase()}"}`);
  }
  return files;
}

Deno.test({
  name:
    "dvergr benchmark runs Claude Code, Codex and an API model on one bundle, each with tokens and cost",
  ignore: reason !== null,
  fn: async () => {
    const provider = startFakeAgentProvider(caseReader());
    const dir = await writeBundleTo(harbourBundle(), "harbour");
    const home = await Deno.makeTempDir();
    try {
      const prices = "{:input 3 :output 15 :cache-read 0.3 :cache-write 3.75}";
      await Deno.writeTextFile(
        `${home}/models.edn`,
        `{:models {"fake-claude" {:provider :anthropic :base-url "${provider.url}" :prices ${prices}}
                   "fake-gpt" {:provider :openai :base-url "${provider.url}" :prices ${prices}}}}`,
      );
      const ctx = memoryContext({
        env: {
          PATH: hostEnv("PATH") ?? "/usr/bin:/bin",
          HOME: home,
          ANTHROPIC_API_KEY: "sk-ant-test",
          OPENAI_API_KEY: "sk-openai-test",
          ...(hostEnv("DVERGR_AGENT_CLIS")
            ? { DVERGR_AGENT_CLIS: hostEnv("DVERGR_AGENT_CLIS")! }
            : {}),
        },
      });
      const code = await runMain([
        "benchmark",
        dir,
        "--home",
        home,
        "--candidate",
        "claude=agent:claude-code:fake-claude",
        "--candidate",
        "codex=agent:codex:fake-gpt",
        "--models",
        "fake-claude",
        "--parallel",
        "2",
        "--json",
      ], ctx);
      const out = ctx.out.join("");
      assert.equal(code, 0, ctx.err.join("").slice(-3000) + out.slice(-3000));
      const result = JSON.parse(out);
      const rows = JSON.stringify(result);
      for (const name of ["claude", "codex", "fake-claude"]) {
        assert(rows.includes(`"${name}"`), `${name} missing from ${rows.slice(0, 2000)}`);
      }
      // Every one of the 6 cells asked the provider 3 times (read, write, done).
      assert.equal(provider.sent.length, 18);
      const report = await Deno.readTextFile(result.report);
      for (const name of ["claude", "codex", "fake-claude"]) assert(report.includes(name));
      // Nine model calls per agent CLI candidate went through its gateway with the real key.
      const keys = provider.requests.map((r) =>
        r.headers["x-api-key"] ?? r.headers["authorization"]
      );
      assert(keys.every((k) => k === "sk-ant-test" || k === "Bearer sk-openai-test"), keys.join());
      // Each passed both cases; the tokens of all three add up to what the provider sent.
      const cands = result.scorecard.candidates as {
        candidate: string;
        passes: number;
        cost: { billedMicros: number };
        tokens: { input: number; output: number; cacheRead: number };
      }[];
      assert.deepEqual(cands.map((c) => [c.candidate, c.passes]), [
        ["claude", 2],
        ["codex", 2],
        ["fake-claude", 2],
      ]);
      for (const c of cands) assert(c.cost.billedMicros > 0, `${c.candidate} has no cost`);
      for (const k of ["input", "output", "cacheRead"] as const) {
        assert.equal(
          cands.reduce((a, c) => a + c.tokens[k], 0),
          provider.sent.reduce((a, u) => a + u[k], 0),
          k,
        );
      }
    } finally {
      await provider.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
      await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true }).catch(() => {});
    }
  },
});
