/**
 * Item analysis of a benchmark's cases, as test theory does it for exam questions: how
 * often each case is passed over all candidates, and how well it tells stronger candidates
 * from weaker ones (discrimination: the correlation, across candidates, of their pass share
 * on the case with their mean reward on the other cases). Cases no candidate passes may be
 * broken (wrong gold, a checker bug); cases every candidate passes measure nothing
 * (saturated); cases stronger candidates fail more often than weaker ones are
 * anti-correlated. Pure.
 */
import type { CaseResult } from "./case_results.ts";
import { markdownCodeSpan } from "./markdown_safe.ts";

/** Discrimination at or below this flags a case as anti-correlated. */
export const ANTI_CORRELATION = -0.3;
/** Candidates with a result on a case needed before its discrimination means anything. */
export const MIN_CANDIDATES_FOR_DISCRIMINATION = 3;

export type ItemFlag = "broken" | "saturated" | "anti-correlated";

export interface ItemStats {
  caseId: string | null;
  /** Graded attempts on the case over all candidates. */
  attempts: number;
  passes: number;
  /** passes / attempts; null without attempts. */
  passRate: number | null;
  /**
   * Pearson correlation across candidates of (pass share on this case) with (mean reward on
   * the other cases); null with fewer than 3 candidates or when either side does not vary.
   */
  discrimination: number | null;
  /** Why the case deserves a look, or null. */
  flag: ItemFlag | null;
}

/** Pearson's r of paired values; null when fewer than 2 pairs or a side has no variance. */
export function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return null;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += xs[i];
    my += ys[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i] - mx;
    const dy = ys[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx < 1e-12 || syy < 1e-12) return null;
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

/**
 * The item statistics of every case, in the order of `results`. Flags: "broken" when no
 * attempt on the case passed although some candidate passed another case (when nothing
 * passes anywhere, the candidates are the problem, not the cases); "saturated" when at
 * least two candidates were graded on it and every attempt passed; "anti-correlated" when
 * its discrimination is at most −0.3.
 */
export function itemAnalysis(results: readonly CaseResult[]): ItemStats[] {
  // Each candidate's reward sum and graded count over all cases, for the rest scores.
  const totals = new Map<string, { sum: number; n: number }>();
  for (const res of results) {
    for (const c of res.cells) {
      if (c.graded === 0 || c.reward === null) continue;
      const t = totals.get(c.candidate) ?? { sum: 0, n: 0 };
      t.sum += c.reward * c.graded;
      t.n += c.graded;
      totals.set(c.candidate, t);
    }
  }
  const passedSomewhere = results.map((res) => res.cells.reduce((n, c) => n + c.passes, 0));
  const anyPass = passedSomewhere.some((n) => n > 0);

  return results.map((res, i) => {
    const graded = res.cells.filter((c) => c.graded > 0);
    const attempts = graded.reduce((n, c) => n + c.graded, 0);
    const passes = passedSomewhere[i];
    const passRate = attempts > 0 ? passes / attempts : null;

    const xs: number[] = [];
    const ys: number[] = [];
    for (const c of graded) {
      const t = totals.get(c.candidate)!;
      const restN = t.n - c.graded;
      if (restN <= 0) continue;
      xs.push(c.passes / c.graded);
      ys.push((t.sum - (c.reward ?? 0) * c.graded) / restN);
    }
    const discrimination = xs.length >= MIN_CANDIDATES_FOR_DISCRIMINATION ? pearson(xs, ys) : null;

    let flag: ItemFlag | null = null;
    if (attempts > 0 && passes === 0 && anyPass) flag = "broken";
    else if (attempts > 0 && passes === attempts && graded.length >= 2) flag = "saturated";
    else if (discrimination !== null && discrimination <= ANTI_CORRELATION) {
      flag = "anti-correlated";
    }
    return { caseId: res.caseId, attempts, passes, passRate, discrimination, flag };
  });
}

/** The sentence a report gives a flagged case (paragraph markup: the case id in a code span). */
export function itemSentence(item: ItemStats): string {
  const name = item.caseId === null ? "The environment" : `Case ${markdownCodeSpan(item.caseId)}`;
  switch (item.flag) {
    case "broken":
      return `${name}: no candidate passed it (0 of ${item.attempts} attempts), although ` +
        "candidates passed other cases; it may be broken (wrong gold or a checker bug).";
    case "saturated":
      return `${name}: every candidate passed it (${item.passes} of ${item.attempts} attempts); ` +
        "it is saturated and does not tell the candidates apart.";
    case "anti-correlated":
      return `${name}: stronger candidates fail it more often than weaker ones (discrimination ${
        item.discrimination!.toFixed(2)
      }); check its gold and what it rewards.`;
    default:
      return `${name}: nothing to note.`;
  }
}

/**
 * One line naming the flagged cases by kind ("Item analysis: 1 case possibly broken (c3); 1
 * saturated (c1)"), at most five ids each; null when no case is flagged.
 */
export function itemSummaryLine(items: readonly ItemStats[]): string | null {
  const kinds: [ItemFlag, string][] = [
    ["broken", "possibly broken (no candidate passes)"],
    ["saturated", "saturated (every candidate passes)"],
    ["anti-correlated", "anti-correlated (stronger candidates fail more)"],
  ];
  const parts = kinds.flatMap(([flag, words]) => {
    const ids = items.filter((i) => i.flag === flag).map((i) => i.caseId ?? "(the environment)");
    if (ids.length === 0) return [];
    const shown = ids.slice(0, 5).join(", ") + (ids.length > 5 ? `, … ${ids.length - 5} more` : "");
    return [`${ids.length} case${ids.length === 1 ? "" : "s"} ${words}: ${shown}`];
  });
  return parts.length === 0 ? null : `Item analysis: ${parts.join("; ")} (the report says more)`;
}
