/**
 * The web and judge part of a scorecard and its report (pure): per candidate, over every
 * try it made, the searches, GET requests, pages fetched and denials by who decided them
 * (REFERENCE §9.3), and the judge's calls and cost.
 */
import type { AttemptRecord } from "./records.ts";
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

/** The web and judge stats of one candidate's tries; null when none had a web or a judge. */
export function webStatsOf(tries: readonly AttemptRecord[]): WebStats | null {
  const withWeb = tries.filter((r) => r.web);
  const judged = tries.filter((r) => r.judge);
  if (withWeb.length === 0 && judged.length === 0) return null;
  const denials: Record<string, number> = {};
  for (const r of withWeb) {
    for (const [k, n] of Object.entries(r.web!.denials)) denials[k] = (denials[k] ?? 0) + (n ?? 0);
  }
  const sum = (f: (r: AttemptRecord) => number, rs: readonly AttemptRecord[]) =>
    rs.reduce((n, r) => n + f(r), 0);
  return {
    attempts: withWeb.length,
    searches: sum((r) => r.web!.searches, withWeb),
    requests: sum((r) => r.web!.requests, withWeb),
    pages: sum((r) => r.web!.pages, withWeb),
    denials: Object.fromEntries(Object.entries(denials).sort(([a], [b]) => (a < b ? -1 : 1))),
    judge: judged.length === 0 ? null : {
      calls: sum((r) => r.judge!.calls, judged),
      billedMicros: sum((r) => r.judge!.billedMicros, judged),
      listMicros: sum((r) => r.judge!.listMicros ?? r.judge!.billedMicros, judged),
    },
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
