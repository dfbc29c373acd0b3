/**
 * The web as an attempt's tools see it: a search and a GET, both answered by the host under
 * the bundle's web policy (core/web/policy.ts), live or from a frozen web. Plain values only,
 * so the tools, the agent loop and the per-attempt MCP server share one contract.
 */

/** Who refused a request (docs/compatibility.md §9.3): a deny-list, an allow-list, or the host's own rules. */
export type DenialReason = "blocked" | "not-allowed" | "private-address" | "scheme";

/** One search hit. */
export interface SearchHit {
  url: string;
  title: string;
  description: string;
}

export type WebSearchOutcome =
  | { ok: true; hits: SearchHit[] }
  | { ok: false; message: string };

/**
 * A GET as the attempt sees it: any HTTP answer is `ok` (a 404 too: the status says so);
 * a request that was refused or could not be made is not.
 */
export type WebFetchOutcome =
  | {
    ok: true;
    /** The URL asked for. */
    url: string;
    /** The URL that answered, after redirects. */
    finalUrl: string;
    status: number;
    /** The page as text (docs/compatibility.md §9.1 conversion for HTML). */
    text: string;
  }
  | { ok: false; message: string; denied?: DenialReason };

/** The web of one attempt. */
export interface WorldWeb {
  /** "live" reaches the internet from the host; "frozen" answers from web.edn only. */
  readonly mode: "live" | "frozen";
  /**
   * Live, and the bundle's policy refuses no host: a web nothing is held back from, so a
   * provider's own web tools (which dvergr can neither hold to a policy nor record) may be
   * used through the model gateway. Absent: false.
   */
  readonly unrestricted?: boolean;
  search(query: string, count: number, signal?: AbortSignal): Promise<WebSearchOutcome>;
  fetch(url: string, signal?: AbortSignal): Promise<WebFetchOutcome>;
}
