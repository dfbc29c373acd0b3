/**
 * dvergr: turn a use case into a workflow bundle, prove its checker grades
 * correctly, benchmark candidate agents on it, report reward, intervals and cost.
 *
 * This file is the only place that exits the process.
 */
// First: it may start a sandbox worker before the rest is evaluated (cli/early_start.ts).
import "./cli/early_start.ts";
import { COMMANDS } from "./cli/commands.ts";
import { type CliContext, processContext, StdoutClosed } from "./cli/context.ts";
import { renderError } from "./cli/render.ts";
import { usageError } from "./core/errors.ts";
import { closeMatches } from "./core/close_matches.ts";
import { VERSION } from "./core/version.ts";

export function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) =>
    `  ${name.padEnd(width)}  ${c.summary}`
  );
  return `dvergr ${VERSION}: build, calibrate and benchmark workflow bundles

Usage: dvergr <command> [options]

Commands:
${lines.join("\n")}

Options:
  -h, --help     show help (also: dvergr <command> --help)
  --version      print the version

Exit status: 0 success; 1 the command ran and the result is a failure;
2 bad input or usage; 3 internal error (a bug).
`;
}

/** Runs dvergr with argv and returns the exit status; never exits itself. */
export async function runMain(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  const json = argv.includes("--json");
  try {
    if (name === undefined || name === "-h" || name === "--help" || name === "help") {
      if (name === "help" && rest[0] && COMMANDS[rest[0]]) {
        ctx.stdout((await COMMANDS[rest[0]].load()).HELP);
        return 0;
      }
      ctx.stdout(mainHelp());
      return name === undefined ? 2 : 0;
    }
    if (name === "--version" || name === "-V") {
      ctx.stdout(`dvergr ${VERSION}\n`);
      return 0;
    }
    const entry = COMMANDS[name];
    if (!entry) {
      const near = closeMatches(name.replace(/^-+/, ""), Object.keys(COMMANDS), 1);
      throw usageError(
        `Unknown command "${name}"`,
        (near.length > 0 ? `Did you mean "${near[0]}"? ` : "") +
          `Known commands: ${Object.keys(COMMANDS).join(", ")}. Run \`dvergr --help\``,
      );
    }
    const help = rest.includes("-h") || rest.includes("--help");
    // Started before the command's modules load, so that it loads beside them.
    const release = help ? undefined : await entry.prestart?.(rest).catch(() => () => {});
    try {
      const command = await entry.load();
      if (help) {
        ctx.stdout(command.HELP);
        return 0;
      }
      return await command.run(ctx, command.parse(rest));
    } finally {
      release?.();
    }
  } catch (e) {
    // The reader of stdout has gone (`| head -1`): what it wanted it has; end quietly.
    if (e instanceof StdoutClosed) return 0;
    return await renderError(e, ctx, json);
  }
}

if (import.meta.main) {
  const code = await runMain(Deno.args, processContext());
  Deno.exit(code);
}
