/**
 * The EDN reader's state and what every token kind shares: where the reader is in the text,
 * the open collections, positions as line and column, the syntax error, and the skipping of
 * whitespace and comments between tokens.
 */
import type { EdnValue } from "./values.ts";

/** What the reader throws; readEdn turns it into a DvergrError("EDN_SYNTAX"). */
export interface EdnSyntaxFault extends Error {
  name: "EdnSyntaxError";
  ednFile: string | null;
  ednLine: number;
  ednColumn: number;
  ednProblem: string;
  ednHint: string;
}

/** Kinds of open frames. */
export const VECTOR = 0, LIST = 1, SET = 2, MAP = 3, TAG = 4, DISCARD = 5;

/** An open collection, tag or discard. */
export interface Frame {
  kind: number;
  /** "map", "vector", …, or the tag ("#inst", "#_") */
  what: string;
  /** The closing bracket's char code; -1 for a tag or discard. */
  closer: number;
  /** Where it was opened. */
  at: number;
  items: EdnValue[];
  map: Map<EdnValue, EdnValue> | null;
  /**
   * Map keys or set elements so far → where each started: simple values (strings,
   * keywords, booleans, nil) by themselves, others by their equality key (equalityKey).
   * Made on first use.
   */
  firstAt: Map<EdnValue, number> | null;
  firstAtByKey: Map<string, number> | null;
  /** A map's key waiting for its value (keyAt ≥ 0), with its start and end. */
  key: EdnValue;
  keyAt: number;
  keyEnd?: number;
}

/** One read of one text. */
export interface Reader {
  readonly text: string;
  /** The text's length. */
  readonly n: number;
  /** The next character to read. */
  pos: number;
  /** The file name errors cite, or null. */
  readonly file: string | null;
  readonly maxDepth: number;
  /** Whether the text must hold exactly one value. */
  readonly one: boolean;
  /**
   * The open collections, tags and discards, innermost last: the reader keeps its own
   * stack rather than recursing, so deep input cannot exhaust the stack.
   */
  readonly stack: Frame[];
  /** The top-level values read so far. */
  readonly out: EdnValue[];
}

/** A reader at the start of `text` (after a byte order mark, which is not content). */
export function newReader(
  text: string,
  file: string | null,
  maxDepth: number,
  one: boolean,
): Reader {
  const pos = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  return { text, n: text.length, pos, file, maxDepth, one, stack: [], out: [] };
}

/** The hint of a syntax error that has no better one. */
export const SYNTAX_HINT = "Check the EDN near that position (https://github.com/edn-format/edn)";

/** The printed form of a closing bracket's char code. */
export const CLOSER_NAME: Record<number, string> = { 0x29: ")", 0x5d: "]", 0x7d: "}" };

/** The line and column (in characters, from 1) of offset `at`. */
export function lineCol(r: Reader, at: number): { line: number; column: number } {
  const text = r.text;
  let line = 1;
  let column = 1;
  for (let i = 0; i < at && i < r.n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      column = 1;
    } else if (
      c < 0xdc00 || c > 0xdfff || i === 0 || text.charCodeAt(i - 1) < 0xd800 ||
      text.charCodeAt(i - 1) > 0xdbff
    ) {
      column++; // a low surrogate after a high one is the same character
    }
  }
  return { line, column };
}

/** Throws the EdnSyntaxFault for offset `at` (and where the frame at fault was opened). */
export function fail(
  r: Reader,
  at: number,
  problem: string,
  hint?: string,
  openedAt?: number,
): never {
  const { line, column } = lineCol(r, at);
  let p = problem;
  if (openedAt !== undefined) {
    const o = lineCol(r, openedAt);
    p += " (opened at line " + o.line + ", column " + o.column + ")";
  }
  const where = (r.file ? r.file + " " : "") + "line " + line + ", column " + column;
  const e = new Error(where + ": " + p) as EdnSyntaxFault;
  e.name = "EdnSyntaxError";
  e.ednFile = r.file;
  e.ednLine = line;
  e.ednColumn = column;
  e.ednProblem = p;
  e.ednHint = hint ?? SYNTAX_HINT;
  throw e;
}

/** The text from `from` to `to`, cut to 40 characters for an error message. */
export function excerpt(r: Reader, from: number, to: number): string {
  const s = r.text.slice(from, to);
  return s.length > 40 ? s.slice(0, 37) + "..." : s;
}

/** EDN whitespace: the ASCII blanks and the comma. */
export function isWhitespace(c: number): boolean {
  return c === 32 || c === 44 || (c >= 9 && c <= 13);
}

/**
 * Token terminators: whitespace, commas, brackets, quote, comment, backslash and the
 * Clojure reader-macro characters (which are not EDN).
 */
export function isTerminator(c: number): boolean {
  return isWhitespace(c) || c === 0x28 || c === 0x29 || c === 0x5b || c === 0x5d ||
    c === 0x7b || c === 0x7d || c === 0x22 || c === 0x3b || c === 0x5c || c === 0x40 ||
    c === 0x5e || c === 0x60 || c === 0x7e;
}

/** An ASCII digit. */
export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Where the token starting at `from` ends. */
export function tokenEnd(r: Reader, from: number): number {
  const text = r.text;
  const n = r.n;
  let j = from;
  while (j < n && !isTerminator(text.charCodeAt(j))) j++;
  return j;
}

/** Moves past whitespace, commas and `;` comments. */
export function skipSpace(r: Reader): void {
  const text = r.text;
  const n = r.n;
  let pos = r.pos;
  while (pos < n) {
    const c = text.charCodeAt(pos);
    if (isWhitespace(c)) pos++;
    else if (c === 0x3b) {
      const nl = text.indexOf("\n", pos);
      pos = nl === -1 ? n : nl + 1;
    } else break;
  }
  r.pos = pos;
}
