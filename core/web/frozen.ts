/**
 * The frozen web (docs/compatibility.md §9.4): pages by URL, lexical search over them, 404 otherwise,
 * no network. `frozenPages` makes the pages from recorded fetches (what `dvergr freeze`
 * writes to web.edn); `frozenTransport` answers requests from them with §9.4's exact status
 * codes and messages. The policy's deny-list is applied before this transport is asked.
 */
import { DvergrError } from "../errors.ts";
import { pageText, pageTitle } from "./text.ts";

/** A frozen page: its title and its text. */
export interface FrozenPage {
  title: string;
  body: string;
}

export type FrozenPages = Record<string, FrozenPage>;

/** The search endpoint a frozen web answers (Brave's; never frozen as a page). */
export const BRAVE_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search";
/** Characters of a frozen page's body. */
export const FROZEN_BODY_LIMIT = 50_000;

/** http and https pages alike: a live attempt may fetch either, and `show` lists both. */
const FROZEN_URL = /^https?:\/\/[^\s?#]+$/;

/**
 * Pages from a sequence of `{url: body}` maps (attempts' fetched evidence, oldest first):
 * http and https URLs without query or fragment, not the search endpoint, text as in §9.1, empty
 * texts dropped, title = `<title>` else the URL, body cut to 50,000 characters; later maps
 * override earlier ones; sorted by URL.
 */
export function frozenPages(
  fetched: readonly Record<string, string>[],
  /** Titles recorded beside the pages (the recording keeps text, where `<title>` is gone). */
  titles: readonly Record<string, string>[] = [],
): FrozenPages {
  const pages = new Map<string, FrozenPage>();
  fetched.forEach((m, i) => {
    for (const [url, raw] of Object.entries(m)) {
      if (!FROZEN_URL.test(url) || url === BRAVE_SEARCH_URL) continue;
      const body = pageText(raw);
      if (body === "") continue;
      const title = pageTitle(raw) ??
        (titles[i] && Object.hasOwn(titles[i], url) ? titles[i][url] : url);
      pages.set(url, { title, body: body.slice(0, FROZEN_BODY_LIMIT) });
    }
  });
  return Object.fromEntries([...pages].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export interface FrozenRequest {
  method: string;
  url: string;
  /** A request body, if any (a GET must have none). */
  body?: string | null;
}

export interface FrozenResponse {
  status: number;
  contentType: string;
  body: string;
}

/** The terms of a text: lower-cased runs of Unicode letters and digits. */
export function searchTerms(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

function text(status: number, body: string): FrozenResponse {
  return { status, contentType: "text/plain; charset=utf-8", body };
}

/** Pages that share a query term, by score (distinct query terms present) then URL. */
export function searchFrozen(pages: FrozenPages, query: string, count: number): {
  url: string;
  title: string;
  description: string;
}[] {
  const q = searchTerms(query);
  const scored: { url: string; page: FrozenPage; score: number }[] = [];
  for (const [url, page] of Object.entries(pages)) {
    const terms = searchTerms(`${page.title} ${page.body}`);
    let score = 0;
    for (const t of q) if (terms.has(t)) score++;
    if (score > 0) scored.push({ url, page, score });
  }
  scored.sort((a, b) => b.score - a.score || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  return scored.slice(0, count).map((s) => ({
    url: s.url,
    title: s.page.title,
    description: s.page.body,
  }));
}

/** Problems of a frozen web's pages, or [] when they are a non-empty map of http(s) URLs to {title, body}. */
export function frozenPagesProblems(pages: unknown): string[] {
  if (pages === null || typeof pages !== "object" || Array.isArray(pages)) {
    return ["expected a map of http(s) URLs to {:title :body}"];
  }
  const entries = Object.entries(pages as Record<string, unknown>);
  if (entries.length === 0) return ["expected at least one page"];
  const problems: string[] = [];
  for (const [url, page] of entries) {
    if (!FROZEN_URL.test(url)) {
      problems.push(`${JSON.stringify(url)}: expected an http(s) URL without query or fragment`);
    }
    const p = page as Record<string, unknown> | null;
    const keys = p && typeof p === "object" && !Array.isArray(p) ? Object.keys(p).sort() : [];
    if (
      keys.join(",") !== "body,title" || typeof p!.title !== "string" || typeof p!.body !== "string"
    ) {
      problems.push(`${JSON.stringify(url)}: expected exactly {:title "…" :body "…"} strings`);
    }
  }
  return problems;
}

/**
 * A transport answering from frozen pages only. Throws when the pages are not a non-empty
 * map of http(s) URLs to exactly `{title, body}` strings.
 */
export function frozenTransport(pages: FrozenPages): (req: FrozenRequest) => FrozenResponse {
  if (frozenPagesProblems(pages).length > 0) {
    throw new DvergrError("BUNDLE_INVALID", "Expected frozen HTTPS pages with title and body", {
      hint: 'web.edn maps http(s) URLs (no query or fragment) to {:title "…" :body "…"}',
    });
  }
  return (req) => {
    if (req.method.toUpperCase() !== "GET") return text(405, "Frozen web only supports GET");
    if (req.body !== undefined && req.body !== null && req.body !== "") {
      return text(400, "GET bodies are unsupported");
    }
    let u: URL;
    try {
      u = new URL(req.url);
    } catch {
      return text(404, "Not present in frozen web");
    }
    const path = `${u.origin}${u.pathname}`;
    if (path === BRAVE_SEARCH_URL) {
      const params = [...u.searchParams];
      const names = params.map(([k]) => k);
      const one = (k: string) => params.filter(([n]) => n === k).map(([, v]) => v);
      const q = one("q");
      const count = one("count");
      const country = one("country");
      const ok = names.every((n) => n === "q" || n === "count" || n === "country") &&
        q.length === 1 && q[0].length >= 1 && q[0].length <= 4096 &&
        count.length <= 1 && (count.length === 0 || /^[1-9][0-9]*$/.test(count[0]) &&
            Number(count[0]) >= 1 && Number(count[0]) <= 50) &&
        country.length <= 1 && (country.length === 0 || country[0] === "US");
      if (!ok) return text(400, "Unsupported frozen search parameters");
      const results = searchFrozen(pages, q[0], count.length ? Number(count[0]) : 5);
      return {
        status: 200,
        contentType: "application/json",
        body: JSON.stringify({ web: { results } }),
      };
    }
    if (u.search !== "" || req.url.includes("?")) {
      return text(400, "Frozen pages do not support query parameters");
    }
    const page = Object.hasOwn(pages, req.url) ? pages[req.url] : undefined;
    return page ? text(200, page.body) : text(404, "Not present in frozen web");
  };
}
