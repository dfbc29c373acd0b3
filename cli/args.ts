import { parseArgs, type ParseArgsConfig } from "node:util";
import { usageError } from "../core/errors.ts";
import { closeMatches } from "../core/close_matches.ts";
import { type RangeName, readRangeText } from "../core/ranges.ts";

export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses a subcommand's arguments strictly (unknown flags and missing values are
 * usage errors with the command's name), and returns values and positionals.
 */
export function parseCommandArgs<O extends OptionSpec>(
  command: string,
  args: string[],
  options: O,
) {
  checkFlags(command, args, options);
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const missing = /^Option '(-\w, )?--([\w-]+) <value>' argument missing/.exec(msg);
    if (missing) {
      throw usageError(
        `Cannot use --${missing[2]} of "dvergr ${command}": it needs a value`,
        `Write --${missing[2]} VALUE, or --${missing[2]}=VALUE for a value that starts with "-"`,
      );
    }
    const noValue = /^Option '(-\w, )?--([\w-]+)' does not take an argument/.exec(msg);
    if (noValue) {
      throw usageError(
        `Cannot use --${noValue[2]} of "dvergr ${command}" with a value: it is a switch`,
        `Write --${noValue[2]} alone, or run \`dvergr ${command} --help\``,
      );
    }
    throw usageError(
      `Cannot parse arguments of "dvergr ${command}": ${msg}`,
      `Run \`dvergr ${command} --help\``,
    );
  }
}

/**
 * Refuses a flag the command does not have, naming the nearest one it has (a mistyped
 * `--candidat` gets "did you mean --candidate?" rather than the parser's own message).
 * Values of string flags and everything after `--` are not flags.
 */
export function checkFlags(command: string, args: readonly string[], options: OptionSpec): void {
  const shorts = new Map<string, string>();
  for (const [name, o] of Object.entries(options)) if (o.short) shorts.set(o.short, name);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") return;
    if (arg === "-" || !arg.startsWith("-") || /^-\d/.test(arg)) continue;
    let name: string;
    if (arg.startsWith("--")) name = arg.slice(2).split("=")[0];
    else {
      const short = shorts.get(arg[1]);
      if (short === undefined && arg !== "-h") {
        throw unknownFlag(command, arg, Object.keys(options));
      }
      name = short ?? "help";
    }
    if (arg.startsWith("--") && name !== "help" && !Object.hasOwn(options, name)) {
      throw unknownFlag(command, `--${name}`, Object.keys(options));
    }
    // A string flag's value is the next argument unless given with "=".
    if (
      options[name]?.type === "string" && !arg.includes("=") &&
      arg.length === (arg.startsWith("--") ? name.length + 2 : 2)
    ) i++;
  }
}

function unknownFlag(command: string, flag: string, names: string[]) {
  const near = closeMatches(flag.replace(/^-+/, ""), names, 1);
  return usageError(
    `Unknown flag ${flag} for "dvergr ${command}"`,
    (near.length > 0 ? `Did you mean --${near[0]}? ` : "") +
      `Run \`dvergr ${command} --help\` for its flags`,
  );
}

/**
 * A flag value as a number in the range `name` (core/ranges.ts), or a usage error naming the
 * flag and the range.
 */
export function rangeFlag(
  command: string,
  flag: string,
  value: string | undefined,
  name: RangeName,
): number | undefined {
  if (value === undefined) return undefined;
  return readRangeText(name, value, `--${flag}`, `Run \`dvergr ${command} --help\``);
}
