import { writeEdn } from "../edn/write.ts";

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
 * of the parameters; the earlier system, REFERENCE §1.4, replaced them one after another).
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
