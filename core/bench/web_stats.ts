/**
 * The web and judge part of a scorecard and its report (pure): per candidate, over every
 * try it made, the searches, GET requests, pages fetched and denials by who decided them
 * (docs/compatibility.md §9.3), and the judge's calls and cost.
 */
import type { ReportBlock, ReportTable } from "./report_blocks.ts";

export interface WebStats {
  /** Tries that had a web. */
  attempts: number;
  searches: number;
  requests: number;
  /** Distinct pages fetched with status < 400, summed over tries. */
  pages: number;
  /** Refused requests by reason (blocked, not-allowed, private-address, scheme). */
  denials: Record<string, number>;
  /** The judge's calls and cost (included in the candidate's cost); null without a judge. */
  judge: { calls: number; billedMicros: number; listMicros: number } | null;
}

/** Web and judge sums over tries (HistoryFold's CandidateFold folds them). */
export interface WebTally {
  /** Tries with a web. */
  withWeb: number;
  web: { searches: number; requests: number; pages: number };
  denials: Record<string, number>;
  /** Tries with a judge. */
  judged: number;
  judge: { calls: number; billedMicros: number; listMicros: number };
}

/** The web and judge stats of folded tries; null when none had a web or a judge. */
export function webStatsOfFold(t: WebTally): WebStats | null {
  if (t.withWeb === 0 && t.judged === 0) return null;
  return {
    attempts: t.withWeb,
    searches: t.web.searches,
    requests: t.web.requests,
    pages: t.web.pages,
    denials: Object.fromEntries(Object.entries(t.denials).sort(([a], [b]) => (a < b ? -1 : 1))),
    judge: t.judged === 0 ? null : { ...t.judge },
  };
}

function money(micros: number): string {
  return `$${(micros / 1_000_000).toFixed(4)}`;
}

/** The report's Web section: one row per candidate that had a web or a judge. */
export function webReportBlocks(
  rows: readonly { candidate: string; web?: WebStats | null }[],
): ReportBlock[] {
  const withStats = rows.filter((r) => r.web);
  if (withStats.length === 0) return [];
  const judged = withStats.some((r) => r.web!.judge);
  const table: ReportTable = {
    header: [
      "Candidate",
      "Attempts",
      "Searches",
      "Requests",
      "Pages fetched",
      "Denied",
      ...(judged ? ["Judge calls", "Judge cost"] : []),
    ],
    align: [
      "left",
      "right",
      "right",
      "right",
      "right",
      "left",
      ...(judged ? ["right", "right"] as const : []),
    ],
    rows: withStats.map(({ candidate, web: w }) => {
      const denied = Object.entries(w!.denials).filter(([, n]) => n > 0);
      return [
        candidate,
        String(w!.attempts),
        String(w!.searches),
        String(w!.requests),
        String(w!.pages),
        denied.length === 0 ? "none" : denied.map(([k, n]) => `${k} ${n}`).join(", "),
        ...(judged
          ? [String(w!.judge?.calls ?? 0), w!.judge ? money(w!.judge.listMicros) : "–"]
          : []),
      ];
    }),
  };
  return [
    { kind: "heading", text: "Web" },
    { kind: "table", table },
    {
      kind: "paragraph",
      text: "Counted over every try. Requests are the GETs asked for, refused ones included; " +
        "denied requests are counted by who refused them: `blocked` (the bundle's " +
        ":blocked-sources), `not-allowed` (outside :allowed-sources), `private-address` (a " +
        "loopback, private or link-local address the bundle does not name) and `scheme` " +
        "(not http or https)." +
        (judged ? " The judge's cost, at list price, is included in the candidate's cost." : ""),
    },
  ];
}
