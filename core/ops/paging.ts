/**
 * Pages of long reads: an op that can return more than a tool result holds (60,000
 * characters) takes `offset` and `limit`, returns one page that fits, and says in `note`
 * how to ask for the rest.
 */
import { z } from "zod";

/** The fields of a page of text, as a format's schema has them. */
export const textPageFields = {
  offset: z.number().int().describe("The first character of this page"),
  totalChars: z.number().int().describe("Characters of the whole text"),
  nextOffset: z.number().int().nullable().describe(
    "Where the next page starts; null when this page reaches the end",
  ),
  note: z.string().optional().describe("How to ask for the rest, when there is more"),
};

/** The fields of a page of a list, its items aside. */
export const listPageFields = {
  offset: z.number().int().describe("The first item of this page"),
  total: z.number().int().describe("Items of the whole list"),
  nextOffset: z.number().int().nullable().describe(
    "Where the next page starts; null when this page reaches the end",
  ),
  note: z.string().optional().describe("How to ask for the rest, when there is more"),
};

/** Characters of text a page holds at most (its JSON form stays below the result limit). */
export const PAGE_CHARS = 40_000;
/** The JSON form of a page's text stays below this (escapes grow text up to six times). */
const PAGE_JSON_CHARS = 50_000;

/** The `offset` and `limit` parameters of a paged op. */
export function pageParams(unit: string, max: number, dflt: number) {
  return {
    offset: z.number().int().min(0).optional().describe(
      `First ${unit} to return (default 0); a cut result says which offset comes next`,
    ),
    limit: z.number().int().min(1).max(max).optional().describe(
      `Most ${unit}s to return (default and at most ${
        dflt === max ? max : `${dflt}, at most ${max}`
      })`,
    ),
  };
}

export interface TextPage {
  text: string;
  offset: number;
  /** Characters of the whole text. */
  totalChars: number;
  /** Where the next page starts, or null when this page reaches the end. */
  nextOffset: number | null;
  note?: string;
}

/**
 * One page of `text` from `offset`: at most `limit` characters (default PAGE_CHARS), fewer
 * when their JSON would be longer than a result holds; never splits a surrogate pair.
 * `again` names the call for the rest in the note (e.g. `room_read with offset`).
 */
export function pageText(
  text: string,
  offset: number,
  limit: number | undefined,
  again: string,
): TextPage {
  const start = Math.min(offset, text.length);
  let n = Math.min(limit ?? PAGE_CHARS, PAGE_CHARS, text.length - start);
  let slice = text.slice(start, start + n);
  for (;;) {
    const json = JSON.stringify(slice).length;
    if (json <= PAGE_JSON_CHARS) break;
    n = Math.max(1, Math.floor(n * PAGE_JSON_CHARS / json) - 1);
    slice = text.slice(start, start + n);
  }
  // A page ending between the halves of a surrogate pair would hold half a character.
  const last = slice.charCodeAt(slice.length - 1);
  if (slice.length > 1 && last >= 0xd800 && last <= 0xdbff) slice = slice.slice(0, -1);
  const end = start + slice.length;
  const next = end < text.length ? end : null;
  return {
    text: slice,
    offset: start,
    totalChars: text.length,
    nextOffset: next,
    ...(next !== null
      ? {
        note:
          `[dvergr: characters ${start}-${end} of ${text.length}; call ${again} ${next} for the rest]`,
      }
      : {}),
  };
}

export interface ListPage<T> {
  items: T[];
  offset: number;
  total: number;
  nextOffset: number | null;
  note?: string;
}

/** One page of a list: at most `limit` items from `offset`, with a note naming the next call. */
export function pageList<T>(all: T[], offset: number, limit: number, again: string): ListPage<T> {
  const start = Math.min(offset, all.length);
  const items = all.slice(start, start + limit);
  const end = start + items.length;
  const next = end < all.length ? end : null;
  return {
    items,
    offset: start,
    total: all.length,
    nextOffset: next,
    ...(next !== null
      ? {
        note:
          `[dvergr: items ${start}-${end} of ${all.length}; call ${again} ${next} for the rest]`,
      }
      : {}),
  };
}
