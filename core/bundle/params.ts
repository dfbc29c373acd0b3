/**
 * Parameter values given as text (`--param K=V` on the command line, `params` over MCP),
 * read by one rule so the same text is the same value everywhere:
 *
 * | text                                      | value                           |
 * |-------------------------------------------|---------------------------------|
 * | `nil`                                     | null                            |
 * | `true`, `false`                           | the boolean                     |
 * | `-12`, `0`, `3.5`, `1e3`, `-0.25`          | the number                      |
 * | starts with `"` `[` `{` `:` or `#`        | read as EDN, to its plain form  |
 * | anything else (`007`, `+5`, `ops team`)   | the text as given               |
 *
 * Integers are written without a `+` and without leading zeros, so an id such as `007`
 * or a phone number such as `+4930…` stays text.
 */
import { usageError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { toPlain } from "../edn/plain.ts";

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;
const EDN_START = /^["[{:#]/;

/** The rule as `--help` states it, its lines indented by `indent` spaces after the first. */
export function paramRuleHelp(indent: number): string {
  return [
    "V is nil, true, false, a number (no + and no leading",
    "zeros: 007 stays text), EDN when it starts with",
    '" [ { : or #, else the text as given',
  ].join("\n" + " ".repeat(indent));
}

/** The MCP `params` argument's description: texts read by the rule. */
export const PARAM_TEXTS_DOC =
  "Task and checker parameters, each value as text read like the CLI's --param K=V: nil, " +
  "true, false, a number (no + and no leading zeros: 007 stays text), EDN when it starts " +
  'with " [ { : or #, else the text (e.g. {"team": "ops", "n": "3"})';

/** The value of one parameter's text (see the module doc); bad EDN is a USAGE error. */
export function readParamValue(name: string, raw: string): unknown {
  const t = raw.trim();
  if (t === "nil") return null;
  if (t === "true") return true;
  if (t === "false") return false;
  if (NUMBER.test(t) || EDN_START.test(t)) {
    try {
      return toPlain(readEdn(t, { file: `param ${name}` }));
    } catch (e) {
      throw usageError(
        `Cannot use param ${name}="${raw}": ${e instanceof Error ? e.message : String(e)}`,
        "Quote text values for the shell, e.g. --param 'team=the ops team'",
      );
    }
  }
  return raw;
}

/** One `K=V` (a leading `:` of K is dropped) as a name and its value. */
export function readParamFlag(text: string, command: string): [string, unknown] {
  const eq = text.indexOf("=");
  const name = eq > 0 ? text.slice(0, eq).replace(/^:/, "") : "";
  if (name === "") {
    throw usageError(
      `Cannot use --param "${text}": expected K=V`,
      `For example: dvergr ${command} … --param team=ops`,
    );
  }
  return [name, readParamValue(name, text.slice(eq + 1))];
}

/** Repeated `--param K=V` flags as a params map (a later K wins). */
export function readParamFlags(flags: readonly string[], command: string): Record<string, unknown> {
  return Object.fromEntries(flags.map((f) => readParamFlag(f, command)));
}

/** A params map whose values are texts (MCP `params`), each read by the same rule. */
export function readParamTexts(texts: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(texts).map(([k, v]) => {
      const name = k.replace(/^:/, "");
      return [name, readParamValue(name, v)];
    }),
  );
}
