import { usageError } from "../core/errors.ts";
import { closeMatches } from "../core/close_matches.ts";
import { type RangeName, readRangeText } from "../core/ranges.ts";

/** A command's flags: name → type, whether it repeats, its one-letter form. */
export type OptionSpec = Readonly<
  Record<string, Readonly<{ type: "string" | "boolean"; multiple?: boolean; short?: string }>>
>;

type ValueOf<O> = O extends { type: "string" } ? O extends { multiple: true } ? string[] : string
  : O extends { multiple: true } ? boolean[]
  : boolean;

/** The flags given, by name (absent when not given). */
export type FlagValues<O extends OptionSpec> = { -readonly [K in keyof O]?: ValueOf<O[K]> };

/**
 * The arguments read as node:util's `parseArgs({ strict: true, allowPositionals: true })`
 * reads them, with its messages (tests/cli/args_test.ts holds them side by side): node:util
 * is the only node: module a command's start needs otherwise, and its first import boots
 * Deno's Node layer (~8 ms of CPU of every dvergr command).
 */
export function parseFlags<O extends OptionSpec>(
  args: readonly string[],
  options: O,
): { values: FlagValues<O>; positionals: string[] } {
  const values: Record<string, unknown> = Object.create(null);
  const positionals: string[] = [];
  const longOfShort = new Map<string, string>();
  for (const [name, o] of Object.entries(options)) if (o.short) longOfShort.set(o.short, name);
  const set = (name: string, value: string | boolean) => {
    if (options[name].multiple) ((values[name] ??= []) as unknown[]).push(value);
    else values[name] = value;
  };
  const shortAndLong = (name: string) =>
    options[name].short ? `-${options[name].short}, --${name}` : `--${name}`;
  const unknown = (raw: string) =>
    new ParseError(
      `Unknown option '${raw}'. To specify a positional argument starting with a '-', place ` +
        `it at the end of the command after '--', as in '-- ${JSON.stringify(raw)}`,
    );
  /** Option `name` as typed (`raw`), with its inline value if any; `i` is the next index. */
  const take = (name: string, raw: string, inline: string | undefined, i: number): number => {
    const o = options[name];
    if (o.type === "boolean") {
      if (inline !== undefined) {
        throw new ParseError(`Option '${shortAndLong(name)}' does not take an argument`);
      }
      set(name, true);
      return i;
    }
    if (inline !== undefined) {
      set(name, inline);
      return i;
    }
    const value = args[i];
    if (value === undefined) {
      throw new ParseError(`Option '${shortAndLong(name)} <value>' argument missing`);
    }
    if (value.length > 1 && value.startsWith("-")) {
      const example = raw.startsWith("--") ? `'${raw}=-XYZ'` : `'--${name}=-XYZ' or '${raw}-XYZ'`;
      throw new ParseError(
        `Option '${raw}' argument is ambiguous.\nDid you forget to specify the option argument ` +
          `for '${raw}'?\nTo specify an option argument starting with a dash use ${example}.`,
      );
    }
    set(name, value);
    return i + 1;
  };
  let i = 0;
  while (i < args.length) {
    const arg = args[i++];
    if (arg === "--") {
      positionals.push(...args.slice(i));
      break;
    }
    if (arg.startsWith("--")) {
      // "--=x" is a flag named "=x", as node:util reads it.
      const eq = arg.indexOf("=", 3);
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const raw = `--${name}`;
      if (!Object.hasOwn(options, name)) throw unknown(raw);
      i = take(name, raw, eq === -1 ? undefined : arg.slice(eq + 1), i);
    } else if (arg.length > 1 && arg.startsWith("-")) {
      const first = longOfShort.get(arg[1]);
      if (arg.length > 2 && first !== undefined && options[first].type === "string") {
        i = take(first, `-${arg[1]}`, arg.slice(2), i);
        continue;
      }
      // -abc: each letter a flag; a string flag takes the rest of the group, or the next
      // argument when it is the last letter.
      for (let k = 1; k < arg.length; k++) {
        const name = longOfShort.get(arg[k]);
        if (name === undefined) throw unknown(`-${arg[k]}`);
        const last = k === arg.length - 1;
        if (options[name].type === "string" && !last) {
          i = take(name, `-${arg[k]}`, arg.slice(k + 1), i);
          break;
        }
        i = take(name, `-${arg[k]}`, undefined, i);
      }
    } else positionals.push(arg);
  }
  return { values: values as FlagValues<O>, positionals };
}

/** What parseFlags throws: node:util's message, for parseCommandArgs to put in dvergr's words. */
class ParseError extends Error {}

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
    return parseFlags(args, options);
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
