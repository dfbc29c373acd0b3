import { writeEdn } from "../edn/write.ts";
import type { Bundle, BundleProblem } from "./types.ts";

/** A parameter's value as the task shows it: strings as they are, numbers as printed, else EDN. */
function valueText(value: unknown): string {
  return typeof value === "string"
    ? value
    : typeof value === "number"
    ? String(value)
    : writeEdn(value);
}

/**
 * Fills a task template: every `{name}` becomes the parameter's value (strings as they are,
 * numbers as printed, anything else as EDN), in one pass over the template, so a value is
 * never read as a template itself (a value holding `{b}` stays literal, whatever the order
 * of the parameters; the earlier system, docs/compatibility.md §1.4, replaced them one after another).
 * Unknown placeholders stay as written.
 */
export function fillTask(template: string, params: Record<string, unknown>): string {
  const names = Object.keys(params);
  if (names.length === 0) return template;
  // Longest first, so that of two names where one is a prefix of the other, the longer wins.
  const alternatives = names.sort((a, b) => b.length - a.length)
    .map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const placeholder = new RegExp(`\\{(${alternatives.join("|")})\\}`, "g");
  return template.replace(placeholder, (_m, name: string) => valueText(params[name]));
}

/** What the task may mean as a placeholder: `{name}`, a name as EDN keywords spell them. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_*+!?<>=.\/-]*)\}/g;

/** The placeholders of `template` that none of `names` fills, each once, in order. */
export function unknownPlaceholders(template: string, names: Iterable<string>): string[] {
  const known = new Set(names);
  const out: string[] = [];
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (!known.has(name) && !out.includes(name)) out.push(name);
  }
  return out;
}

/**
 * A problem for each placeholder of the bundle's task that no parameter fills (of its
 * `:params`, or of `given`, the parameters the command is given), at the placeholder's line
 * of workflow.edn: the candidate would read `{name}` as it is.
 */
export function placeholderProblems(
  bundle: Pick<Bundle, "definition" | "files">,
  given: Record<string, unknown> = {},
): BundleProblem[] {
  const { task, params } = bundle.definition;
  const names = [...Object.keys(params), ...Object.keys(given)];
  const text = bundle.files.get("workflow.edn") ?? "";
  const from = Math.max(0, text.indexOf(":task"));
  return unknownPlaceholders(task, names).map((name) => {
    const at = text.indexOf(`{${name}}`, from);
    return {
      file: "workflow.edn",
      field: ":task",
      ...(at >= 0 ? { line: text.slice(0, at).split("\n").length } : {}),
      message: `the placeholder {${name}} names no parameter, so the candidate would read it ` +
        `as it is: add :${name} to :params${
          names.length > 0 ? ` (it has ${names.map((n) => `:${n}`).join(" ")})` : ""
        } or give it as a parameter`,
    };
  });
}
