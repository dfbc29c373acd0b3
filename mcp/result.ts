/**
 * Tool results: a value as JSON text plus the same value as structuredContent; a failure
 * as an `isError` result carrying the error's code, message and hint (a user's mistake is
 * never a protocol error).
 */
import { type ErrorData, errorData } from "../core/errors.ts";
import { osProblem } from "../adapters/files/os_error.ts";
import { z } from "zod";
import { defineFormat, ERROR_FORMAT, type JsonFormat } from "../core/json_format.ts";

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

/** A result cut at RESULT_LIMIT: its text so far and how to ask for less. */
export const CUT_FORMAT = defineFormat(
  "cut",
  1,
  "A tool result too long for one answer, cut: the start of its JSON text and a note saying how to ask for less.",
  z.object({
    cut: z.literal(true),
    of: z.string().describe("The format of the whole result"),
    chars: z.number().int().describe("Characters of the whole result's JSON text"),
    note: z.string(),
    text: z.string().describe("The first characters of the whole result's JSON text"),
  }),
);

/** The note that ends a cut result. */
export function cutNote(chars: number): string {
  return `[dvergr: result cut at ${RESULT_LIMIT} of ${chars} chars; ask for less, e.g. a limit or a detail op]`;
}

/**
 * The result of an op's value, a document of the op's format (`format` first; a value that
 * is not an object is `{value}`). Text beyond 60,000 characters is cut with a note; then
 * structuredContent is a `dvergr-cut/1` document holding the cut text and the note, since
 * several clients give the model structuredContent rather than the text.
 */
export function toolResult(value: unknown, format: JsonFormat): ToolResult {
  const structured = {
    format: format.id,
    ...(isPlainObject(value) ? withoutFormat(value) : { value: value ?? null }),
  };
  const text = JSON.stringify(structured);
  if (text.length <= RESULT_LIMIT) {
    return { content: [{ type: "text", text }], structuredContent: structured };
  }
  const note = cutNote(text.length);
  const cut = text.slice(0, RESULT_LIMIT);
  return {
    content: [{ type: "text", text: `${cut}\n${note}` }],
    structuredContent: {
      format: CUT_FORMAT.id,
      cut: true,
      of: format.id,
      chars: text.length,
      note,
      text: cut,
    },
  };
}

function withoutFormat(value: Record<string, unknown>): Record<string, unknown> {
  const { format: _, ...rest } = value;
  return rest;
}

/** An error as a tool result; anything but a DvergrError is reported as INTERNAL. */
export function errorResult(e: unknown): ToolResult {
  const error: ErrorData = errorData(osProblem(e) ?? e, {
    what: "The tool",
    where: "the server's log (stderr) has the stack",
  });
  const doc = { format: ERROR_FORMAT.id, error };
  let text = JSON.stringify(doc);
  if (text.length > RESULT_LIMIT) {
    delete error.details;
    text = JSON.stringify(doc);
  }
  return {
    content: [{ type: "text", text }],
    structuredContent: doc,
    isError: true,
  };
}
