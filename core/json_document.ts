/**
 * A value as a document of its JSON format (core/json_format.ts), in a module that does not
 * load zod: printing a document needs only the format's id, and zod's ~100 modules cost a
 * command's start ~20 ms that `dvergr --help` or a command that fails early need not pay.
 */
import type { Formatted, FormatValue, JsonFormat } from "./json_format.ts";

/** The value as a document of its format: `format` first. */
export function formatted<F extends JsonFormat>(
  format: F,
  value: FormatValue<F>,
): Formatted<F> {
  const rest = { ...(value as Record<string, unknown>) };
  delete rest.format;
  return { format: format.id, ...rest } as Formatted<F>;
}
