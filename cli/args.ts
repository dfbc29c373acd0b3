import { parseArgs, type ParseArgsConfig } from "node:util";
import { usageError } from "../core/errors.ts";

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
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw usageError(
      `Cannot parse arguments of "dvergr ${command}": ${msg}`,
      `Run \`dvergr ${command} --help\``,
    );
  }
}

/** A flag value as a positive integer, or a usage error naming the flag. */
export function intFlag(
  command: string,
  flag: string,
  value: string | undefined,
  opts: { min?: number } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const min = opts.min ?? 1;
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
    throw usageError(
      `Cannot use --${flag} "${value}": expected a whole number ≥ ${min}`,
      `Run \`dvergr ${command} --help\``,
    );
  }
  return n;
}
