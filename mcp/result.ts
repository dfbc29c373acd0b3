/**
 * Tool results: a value as JSON text plus the same value as structuredContent; a failure
 * as an `isError` result carrying the error's code, message and hint (a user's mistake is
 * never a protocol error).
 */
import { type ErrorData, errorData } from "../core/errors.ts";
import { osProblem } from "../adapters/files/os_error.ts";

/** Longest text of a tool result; longer text is cut with a note. */
export const RESULT_LIMIT = 60_000;

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The note that ends a cut result. */
export function cutNote(chars: number): string {
  return `[dvergr: result cut at ${RESULT_LIMIT} of ${chars} chars; ask for less, e.g. a limit or a detail op]`;
}

/**
 * The result of a value: an object as it is, anything else as `{items}` (arrays) or
 * `{value}`. Text beyond 60,000 characters is cut with a note; then structuredContent
 * holds the cut text and the note too, since several clients give the model
 * structuredContent rather than the text.
 */
export function toolResult(value: unknown): ToolResult {
  const structured = isPlainObject(value)
    ? value
    : Array.isArray(value)
    ? { items: value }
    : { value: value ?? null };
  const text = JSON.stringify(structured);
  if (text.length <= RESULT_LIMIT) {
    return { content: [{ type: "text", text }], structuredContent: structured };
  }
  const note = cutNote(text.length);
  const cut = text.slice(0, RESULT_LIMIT);
  return {
    content: [{ type: "text", text: `${cut}\n${note}` }],
    structuredContent: { cut: true, chars: text.length, note, text: cut },
  };
}

/** An error as a tool result; anything but a DvergrError is reported as INTERNAL. */
export function errorResult(e: unknown): ToolResult {
  const error: ErrorData = errorData(osProblem(e) ?? e, {
    what: "The tool",
    where: "the server's log (stderr) has the stack",
  });
  let text = JSON.stringify({ error });
  if (text.length > RESULT_LIMIT) {
    delete error.details;
    text = JSON.stringify({ error });
  }
  return {
    content: [{ type: "text", text }],
    structuredContent: { error },
    isError: true,
  };
}
