import { parseArgs, type ParseArgsConfig } from "node:util";
import { usageError } from "../core/errors.ts";
import { describeRange, inRange, type RangeName, RANGES } from "../core/ranges.ts";

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
  const range = RANGES[name];
  const shape = range.integer ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
  const n = Number(value.trim());
  if (!shape.test(value.trim()) || !inRange(n, range)) {
    throw usageError(
      `Cannot use --${flag} "${value}": expected ${describeRange(range)}`,
      `Run \`dvergr ${command} --help\``,
    );
  }
  return n;
}
