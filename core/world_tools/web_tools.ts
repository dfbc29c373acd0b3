/**
 * The world's web tools: web_search {query, count?} and web_fetch {url}. Both are answered by
 * the attempt's web (core/web/types.ts), which the host builds under the bundle's policy:
 * live (a GET from the host, Brave Search) or frozen (web.edn only). Offered only when the
 * attempt has a web at all.
 */
import type { ToolOutput, WorldTool } from "./types.ts";

/** Hits web_search returns when no count is given (docs/compatibility.md §9.4's frozen default). */
export const SEARCH_DEFAULT_COUNT = 5;
/** The most hits one search may ask for (Brave's own limit). */
export const SEARCH_MAX_COUNT = 20;
/** Longest query accepted (docs/compatibility.md §9.4). */
export const QUERY_MAX_CHARS = 4096;
/** Characters of a page web_fetch shows; the rest is cut with a note (the record keeps more). */
export const FETCH_SHOW_LIMIT = 60_000;

/** Characters of a hit's description shown (a frozen web's description is its whole page). */
export const DESCRIPTION_LIMIT = 300;

function clip(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n)}…`;
}

const fail = (content: string): ToolOutput => ({ content: `Error: ${content}`, isError: true });

const webSearch: WorldTool = {
  name: "web_search",
  readOnly: true,
  openWorld: true,
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "What to search the web for." },
      count: {
        type: "integer",
        description: `How many results (1–${SEARCH_MAX_COUNT}, default ${SEARCH_DEFAULT_COUNT}).`,
      },
    },
    required: ["query"],
    additionalProperties: false,
  },
  offered: (world) => world.web !== null,
  description: (world) =>
    "Search the web. Answers one result per block: title, URL and a description. " +
    (world.web?.mode === "frozen"
      ? "This task's web is a fixed set of pages; the search looks only at them."
      : "Every query counts against this attempt."),
  async run(args, world, signal) {
    if (world.web === null) return fail("this task may not use the web");
    const q = args.query;
    if (typeof q !== "string" || q.trim() === "") return fail("query must be a non-empty string");
    if (q.length > QUERY_MAX_CHARS) {
      return fail(`query has ${q.length} characters, over the limit of ${QUERY_MAX_CHARS}`);
    }
    const count = args.count ?? SEARCH_DEFAULT_COUNT;
    if (
      typeof count !== "number" || !Number.isInteger(count) || count < 1 ||
      count > SEARCH_MAX_COUNT
    ) {
      return fail(`count must be a whole number from 1 to ${SEARCH_MAX_COUNT}`);
    }
    const r = await world.web.search(q.trim(), count, signal);
    if (!r.ok) return fail(r.message);
    if (r.hits.length === 0) return { content: "(no results)", isError: false };
    return {
      content: r.hits.map((h, i) =>
        `${i + 1}. ${h.title}\n   ${h.url}\n   ${clip(h.description, DESCRIPTION_LIMIT)}`
      ).join("\n\n"),
      isError: false,
    };
  },
};

const webFetch: WorldTool = {
  name: "web_fetch",
  readOnly: true,
  openWorld: true,
  inputSchema: {
    type: "object",
    properties: {
      url: { type: "string", description: 'An http(s) URL, e.g. "https://example.com/about".' },
    },
    required: ["url"],
    additionalProperties: false,
  },
  offered: (world) => world.web !== null,
  description: () =>
    `Fetch a web page (GET) and read it as text. Text past ${FETCH_SHOW_LIMIT} characters is cut. ` +
    "Some hosts may not be read for this task.",
  async run(args, world, signal) {
    if (world.web === null) return fail("this task may not use the web");
    const url = args.url;
    if (typeof url !== "string" || url.trim() === "") return fail("url must be a non-empty string");
    const r = await world.web.fetch(url.trim(), signal);
    if (!r.ok) return fail(r.message);
    const head = `HTTP ${r.status} ${r.finalUrl}${
      r.finalUrl !== r.url ? ` (redirected from ${r.url})` : ""
    }`;
    const text = r.text.length > FETCH_SHOW_LIMIT
      ? `${
        r.text.slice(0, FETCH_SHOW_LIMIT)
      }\n[… cut: the page has ${r.text.length} characters, ${FETCH_SHOW_LIMIT} shown]`
      : r.text;
    return { content: `${head}\n\n${text}`, isError: r.status >= 400 };
  },
};

export const WEB_TOOLS: readonly WorldTool[] = [webSearch, webFetch];
