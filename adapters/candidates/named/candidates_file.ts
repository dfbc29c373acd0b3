/**
 * The home's named candidates, `<home>/candidates.edn`: commands and agent CLIs configured
 * once and named on the command line as `cmd:NAME` or `NAME`.
 */
import { isAbsolute } from "../../../core/path.ts";
import { resolve } from "../../files/resolve.ts";
import { DvergrError } from "../../../core/errors.ts";
import { importLater } from "../../../core/import_later.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { toPlain } from "../../../core/edn/plain.ts";
import { readInputFile } from "../../files/input_file.ts";
import type { CommandSpec } from "../command/command.ts";
import type { AgentSpec } from "../agent_cli/agent_cli.ts";

/** A candidate of candidates.edn: a command, or an agent CLI (it has `cli`). */
export type NamedCandidate = CommandSpec | AgentSpec;

/**
 * Named candidates of a `candidates.edn` file: commands
 * `{"naive" {:command "sh agents/naive.sh" :mounts ["agents"] :env {"K" "v"}
 *   :pass-env ["ANTHROPIC_API_KEY"] :network false :models ["local"]}}` and agent CLIs
 * `{"claude" {:agent "claude-code" :model "claude-sonnet-4-5" :install-dir "/opt/agent-clis"
 *   :max-turns 30 :args ["--effort" "low"]}}`. Relative mounts and install directories are
 * resolved against the file's directory. An absent file has no candidates. The file's schema
 * (candidates_schema.ts, on zod) loads only when there is a file: a run without one (every
 * `dvergr benchmark` of built-ins) does not load zod for it.
 */
export async function readNamedCommands(file: string): Promise<Map<string, NamedCandidate>> {
  let text: string;
  try {
    text = new TextDecoder().decode(
      await readInputFile(file, { shown: file, what: "candidates file", maxBytes: 1 << 20 }),
    );
  } catch (e) {
    if (e instanceof DvergrError && e.code === "NOT_FOUND" && !/directory/.test(e.message)) {
      return new Map();
    }
    throw e;
  }
  const plain = toPlain(readEdn(text, { file }));
  const { namedFileSchema } = await importLater<typeof import("./candidates_schema.ts")>(
    "./candidates_schema.ts",
    import.meta.url,
  );
  const parsed = namedFileSchema.safeParse(plain);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot read ${file}: ${issue.path.map(String).join(" ")}: ${issue.message}`,
      {
        hint:
          'Write {"name" {:command "…" :mounts ["dir"] :env {"K" "v"} :pass-env ["VAR"] :network false :models ["claude-haiku-4-5"]}} ' +
          'or {"name" {:agent "claude-code" :model "…" :install-dir "dir" :max-turns 30 :args […]}}',
      },
    );
  }
  const base = resolve(file, "..");
  const out = new Map<string, NamedCandidate>();
  for (const [name, c] of Object.entries(parsed.data)) {
    if ("agent" in c) {
      const dir = c["install-dir"];
      out.set(name, {
        name,
        cli: c.agent,
        model: c.model,
        installDir: dir === undefined ? undefined : isAbsolute(dir) ? dir : resolve(base, dir),
        maxTurns: c["max-turns"],
        args: c.args,
      });
      continue;
    }
    out.set(name, {
      name,
      command: c.command,
      mounts: (c.mounts ?? []).map((m) => (isAbsolute(m) ? m : resolve(base, m))),
      env: c.env,
      passEnv: c["pass-env"],
      network: c.network,
      ...(c["max-requests"] !== undefined ? { maxRequests: c["max-requests"] } : {}),
      ...(c.models !== undefined ? { models: c.models } : {}),
    });
  }
  return out;
}
