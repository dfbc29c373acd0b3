/**
 * What an attempt did on the web, kept as evidence: searches, requests, denials by who
 * decided them (docs/compatibility.md §9.3), and the pages it fetched successfully (status < 400), as
 * text, for the checker's `fetched` (§9.1: at most 40 pages, 200,000 characters each).
 * Pages are kept in fetch order, the first 40 distinct URLs, each with its latest text, so
 * which pages survive is decided (the earlier system kept an arbitrary 40).
 */
import type { DenialReason } from "./types.ts";

/** Pages kept for the checker. */
export const FETCHED_PAGE_LIMIT = 40;
/** Characters kept of each page. */
export const FETCHED_TEXT_LIMIT = 200_000;
/** Requests listed one by one in the evidence (the counts go on past it). */
export const REQUEST_LOG_LIMIT = 200;

export interface WebRequestEntry {
  url: string;
  /** The final URL, when redirects led elsewhere. */
  finalUrl?: string;
  status?: number;
  denied?: DenialReason;
  /** Why a request failed or was refused. */
  message?: string;
}

/** The small summary kept on the attempt record (scorecard and report read it). */
export interface WebSummary {
  mode: "live" | "frozen";
  searches: number;
  /** GET requests asked for, refused ones included. */
  requests: number;
  /** Distinct pages fetched with status < 400. */
  pages: number;
  /** Refused requests by who refused them. */
  denials: Partial<Record<DenialReason, number>>;
}

export interface WebEvidence extends WebSummary {
  log: WebRequestEntry[];
  logOmitted: number;
  queries: string[];
  /** Successful pages as text, by URL (first 40, 200,000 characters each). */
  fetched: Record<string, string>;
  /** Page titles by URL, where a page had one (for `dvergr freeze`). */
  titles: Record<string, string>;
}

/** Collects one attempt's web effects. */
export class WebRecorder {
  readonly mode: "live" | "frozen";
  #searches = 0;
  #queries: string[] = [];
  #log: WebRequestEntry[] = [];
  #omitted = 0;
  #requests = 0;
  #denials: Partial<Record<DenialReason, number>> = {};
  #pages = new Map<string, string>();
  #titles = new Map<string, string>();
  #succeeded = new Set<string>();

  constructor(mode: "live" | "frozen") {
    this.mode = mode;
  }

  /** A search was made (counted whether or not it answered). */
  search(query: string): void {
    this.#searches++;
    if (this.#queries.length < REQUEST_LOG_LIMIT) this.#queries.push(query.slice(0, 500));
  }

  /** A GET was asked for and how it ended. */
  request(entry: WebRequestEntry): void {
    this.#requests++;
    if (entry.denied) this.#denials[entry.denied] = (this.#denials[entry.denied] ?? 0) + 1;
    if (this.#log.length < REQUEST_LOG_LIMIT) this.#log.push(entry);
    else this.#omitted++;
  }

  /** A page answered with status < 400: kept under each URL it answered for. */
  page(urls: string[], text: string, title: string | null): void {
    for (const url of new Set(urls)) {
      this.#succeeded.add(url);
      if (!this.#pages.has(url) && this.#pages.size >= FETCHED_PAGE_LIMIT) continue;
      this.#pages.set(url, text.slice(0, FETCHED_TEXT_LIMIT));
      if (title !== null) this.#titles.set(url, title);
      else this.#titles.delete(url);
    }
  }

  summary(): WebSummary {
    return {
      mode: this.mode,
      searches: this.#searches,
      requests: this.#requests,
      pages: this.#succeeded.size,
      denials: { ...this.#denials },
    };
  }

  evidence(): WebEvidence {
    return {
      ...this.summary(),
      log: [...this.#log],
      logOmitted: this.#omitted,
      queries: [...this.#queries],
      fetched: Object.fromEntries(this.#pages),
      titles: Object.fromEntries(this.#titles),
    };
  }
}
