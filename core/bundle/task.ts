import { writeEdn } from "../edn/write.ts";

/**
 * Fills a task template: every `{name}` becomes the parameter's value (strings as
 * they are, numbers as printed, anything else as EDN). Replacement runs over the
 * parameters in order, as the earlier system does (REFERENCE §1.4); unknown
 * placeholders stay as written.
 */
export function fillTask(template: string, params: Record<string, unknown>): string {
  let task = template;
  for (const [name, value] of Object.entries(params)) {
    const text = typeof value === "string"
      ? value
      : typeof value === "number"
      ? String(value)
      : writeEdn(value);
    task = task.split(`{${name}}`).join(text);
  }
  return task;
}
