/**
 * A home's web policy, `<home>/web-policy.edn`: the user's sources for every benchmark in
 * that home, in the shape of a bundle's web section —
 * `{:allowed-sources ["docs.example.com"] :blocked-sources ["answers.example.com"]}`, both
 * optional (docs/web-policy.md). Read strictly: anything else is a POLICY_INVALID error
 * naming the file, the line and the field, with a hint. Pure: the adapter reads the file.
 */
import { DvergrError } from "../errors.ts";
import { readEdn } from "../edn/read.ts";
import { Keyword } from "../edn/values.ts";
import type { EdnValue } from "../edn/values.ts";
import { lineOf } from "../bundle/parse_core.ts";
import { sourceProblem, sourcesPolicy, type UserSources, type WebPolicy } from "./policy.ts";

/** The file's name in the home. */
export const WEB_POLICY_FILE = "web-policy.edn";

const KEYS = { "allowed-sources": "allow", "blocked-sources": "block" } as const;
const EXAMPLE = '{:allowed-sources ["docs.example.com"] :blocked-sources ["answers.example.com"]}';

function describe(v: EdnValue): string {
  if (v === null) return "nil";
  if (Array.isArray(v)) return "a vector";
  if (v instanceof Map) return "a map";
  if (v instanceof Keyword) return `the keyword ${v}`;
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  return "a " + (v as object).constructor.name.replace(/^Edn/, "").toLowerCase();
}

/**
 * The policy `text` (the file `file`, as messages name it) says. An empty map is no
 * policy at all: the bundle's alone.
 */
export function readWebPolicyText(text: string, file: string): WebPolicy {
  const value = readEdn(text, { file });
  const problem = (field: string | null, message: string, hint: string): never => {
    const line = field === null ? undefined : lineOf(text, [field]);
    const at = line === undefined ? "" : ` line ${line}`;
    throw new DvergrError(
      "POLICY_INVALID",
      `Cannot read the web policy ${file}${at}: ${field === null ? "" : `${field}: `}${message}`,
      { hint, details: { file, ...(line !== undefined ? { line } : {}), field } },
    );
  };
  if (!(value instanceof Map)) {
    return problem(null, `expected a map, found ${describe(value)}`, `Write ${EXAMPLE}`);
  }
  const sources: { allow?: string[]; block?: string[] } = {};
  for (const [k, v] of value) {
    const name = k instanceof Keyword && k.ns === null ? k.name : null;
    const field = name ?? (typeof k === "string" ? JSON.stringify(k) : String(k));
    if (name === null || !(name in KEYS)) {
      problem(
        name === null ? field : `:${name}`,
        "unknown key (known: :allowed-sources, :blocked-sources)",
        `Write ${EXAMPLE}`,
      );
    }
    const key = KEYS[name as keyof typeof KEYS];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
      const found = Array.isArray(v)
        ? `${describe(v.find((x) => typeof x !== "string")!)} in it`
        : describe(v);
      problem(
        `:${name}`,
        `expected a vector of host names, found ${found}`,
        `Write :${name} ["docs.example.com"] (strings in double quotes)`,
      );
    }
    for (const entry of v as string[]) {
      const why = sourceProblem(entry);
      if (why !== null) {
        problem(
          `:${name}`,
          why,
          "Name hosts as a bundle's source lists do: example.com covers www.example.com " +
            "and docs.example.com",
        );
      }
    }
    sources[key] = v as string[];
  }
  return sourcesPolicy(sources as UserSources);
}
