/**
 * cli/args.ts parseFlags() reads arguments as node:util's parseArgs (strict, positionals
 * allowed) does, values and messages alike, on every sequence of up to three awkward
 * arguments.
 */
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { parseFlags } from "../../cli/args.ts";

const OPTIONS = {
  answer: { type: "string" },
  output: { type: "string", short: "o" },
  json: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  param: { type: "string", multiple: true },
  flag: { type: "boolean", multiple: true },
} as const;

const PIECES = [
  "--answer",
  "--answer=x",
  "--answer=",
  "-o",
  "-ox",
  "-o=x",
  "-vo",
  "-vox",
  "-ov",
  "-vv",
  "--json",
  "--json=1",
  "-v=1",
  "--param",
  "--param=a",
  "--flag",
  "p",
  "--",
  "-",
  "-5",
  "-x",
  "--nope",
  "--=x",
];

function outcome(read: () => { values: object; positionals: string[] }): string {
  try {
    const { values, positionals } = read();
    return JSON.stringify({ values: { ...values }, positionals });
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

Deno.test("parseFlags() gives node:util parseArgs's values, positionals and messages", () => {
  const sequences: string[][] = [[]];
  for (const a of PIECES) {
    sequences.push([a]);
    for (const b of PIECES) {
      sequences.push([a, b]);
      for (const c of PIECES) sequences.push([a, b, c]);
    }
  }
  for (const args of sequences) {
    assert.equal(
      outcome(() => parseFlags(args, OPTIONS)),
      outcome(() => parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true })),
      JSON.stringify(args),
    );
  }
});

Deno.test("parseFlags() values have no prototype, as parseArgs's", () => {
  assert.equal(Object.getPrototypeOf(parseFlags(["--json"], OPTIONS).values), null);
});
