/**
 * A strict EDN reader that names the line and column of every problem.
 *
 * This module holds the reader's loop, which looks at the first character of each token
 * and hands it to the module of its kind: strings (read_string.ts), characters
 * (read_char.ts), numbers, symbols and keywords (read_token.ts, read_number.ts),
 * collections (read_collections.ts), `#…` (read_dispatch.ts, read_tags.ts); whitespace,
 * comments, positions and errors are in read_state.ts. Checkers reach the same reader
 * through the sandbox's EDN bridge (sandbox/edn_bridge.ts).
 */
import { DvergrError } from "../errors.ts";
import type { EdnValue } from "./values.ts";
import {
  CLOSER_NAME,
  DISCARD,
  type EdnSyntaxFault,
  fail,
  lineCol,
  LIST,
  MAP,
  newReader,
  type Reader,
  skipSpace,
  TAG,
  VECTOR,
} from "./read_state.ts";
import { close, deliver, notFollowed, open } from "./read_collections.ts";
import { dispatch } from "./read_dispatch.ts";
import { readString } from "./read_string.ts";
import { readChar } from "./read_char.ts";
import { readToken } from "./read_token.ts";
import { validName } from "./names.ts";

export type { EdnSyntaxFault } from "./read_state.ts";

/** Options of readEdn / readEdnAll. */
export interface ReadEdnOptions {
  /** The file name used in error messages (e.g. "calibration.edn"). */
  file?: string;
  /** Deepest nesting of collections, tags and discards accepted; default 500. */
  maxDepth?: number;
  /**
   * Asked every few thousand values; once it answers true, reading stops with an
   * EdnDeadlineError, so that a caller with a time limit is never held up by one text.
   * (The caller owns the clock: this module reads none.)
   */
  expired?: () => boolean;
}

/** Default depth cap: deep enough for any bundle, shallow enough for every stack. */
export const EDN_MAX_DEPTH = 500;

/** Values read between two questions to `expired()`. */
const CLOCK_EVERY = 4096;

/**
 * Reads every top-level value of `text` (`one`: exactly one). Throws an EdnSyntaxFault,
 * or an Error named "EdnDeadlineError" once `expired()` answers true.
 */
function readValues(
  text: string,
  file: string | null,
  maxDepth: number,
  one: boolean,
  expired?: () => boolean,
): EdnValue[] {
  const r = newReader(text, file, maxDepth, one);
  let untilClock = CLOCK_EVERY;
  for (;;) {
    if (expired !== undefined && --untilClock === 0) {
      untilClock = CLOCK_EVERY;
      if (expired()) outOfTime(r);
    }
    skipSpace(r);
    if (r.pos >= r.n) {
      if (r.stack.length === 0) break;
      unclosed(r);
    }
    readNext(r);
  }
  if (one && r.out.length === 0) {
    fail(
      r,
      r.pos,
      "no value: the text is empty or holds only whitespace and comments",
      "Write one EDN value, e.g. {}",
    );
  }
  return r.out;
}

/** Reads the token at the reader's position, by its first character. */
function readNext(r: Reader): void {
  const start = r.pos;
  const c = r.text.charCodeAt(start);
  switch (c) {
    case 0x29:
    case 0x5d:
    case 0x7d:
      if (r.stack.length === 0) {
        fail(r, start, 'unexpected "' + CLOSER_NAME[c] + '": nothing is open', "Remove it");
      }
      return close(r, c);
    case 0x7b:
      return open(r, MAP, "map", 0x7d, start, 1);
    case 0x5b:
      return open(r, VECTOR, "vector", 0x5d, start, 1);
    case 0x28:
      return open(r, LIST, "list", 0x29, start, 1);
    case 0x23:
      return dispatch(r, start);
    case 0x22:
      return deliver(r, readString(r), start);
    case 0x5c:
      return deliver(r, readChar(r), start);
    case 0x40:
    case 0x5e:
    case 0x60:
    case 0x7e:
    case 0x27:
      return fail(
        r,
        start,
        'unexpected "' + r.text[start] + '": reader macros are not EDN',
        "Quote the text as a string if it is meant as text",
      );
    default:
      return deliver(r, readToken(r), start);
  }
}

/** The text ended inside an open frame. */
function unclosed(r: Reader): never {
  const f = r.stack[r.stack.length - 1];
  if (f.kind === TAG || f.kind === DISCARD) notFollowed(r, f);
  return fail(r, r.n, "unclosed " + f.what, 'Close it with "' + CLOSER_NAME[f.closer] + '"', f.at);
}

function outOfTime(r: Reader): never {
  const { line, column } = lineCol(r, r.pos);
  const e = new Error(
    "reading stopped at line " + line + ", column " + column + ": the time allowed ran out",
  );
  e.name = "EdnDeadlineError";
  throw e;
}

function syntaxError(e: unknown): unknown {
  if (!(e instanceof Error) || e.name !== "EdnSyntaxError") return e;
  const f = e as EdnSyntaxFault;
  return new DvergrError("EDN_SYNTAX", f.message, {
    hint: f.ednHint,
    details: { file: f.ednFile, line: f.ednLine, column: f.ednColumn },
  });
}

/**
 * Reads the one EDN value of `text` (whitespace and comments around it are fine). Throws
 * DvergrError("EDN_SYNTAX") naming file, line and column for empty text, a second value
 * or any syntax problem; with `opts.expired`, an Error named "EdnDeadlineError" once it
 * answers true.
 */
export function readEdn(text: string, opts: ReadEdnOptions = {}): EdnValue {
  try {
    return readValues(
      text,
      opts.file ?? null,
      opts.maxDepth ?? EDN_MAX_DEPTH,
      true,
      opts.expired,
    )[0];
  } catch (e) {
    throw syntaxError(e);
  }
}

/** Reads every top-level EDN value of `text`, in order (empty text gives []). */
export function readEdnAll(text: string, opts: ReadEdnOptions = {}): EdnValue[] {
  try {
    return readValues(text, opts.file ?? null, opts.maxDepth ?? EDN_MAX_DEPTH, false, opts.expired);
  } catch (e) {
    throw syntaxError(e);
  }
}

/** Whether `s` is a keyword name (`:s` reads back as the keyword `Keyword.of(s)`). */
export function isKeywordName(s: string): boolean {
  return validName(s, true);
}
