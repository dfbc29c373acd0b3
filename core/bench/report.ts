/**
 * The benchmark report as Markdown, from a scorecard (docs/compatibility.md §8.7): the frontier,
 * resources, where answers fail, the paired comparison against the baseline, and for case
 * packs which cases could grade an answer. Pure: the same scorecard gives the same text.
 */
import type { ReportBlock, ReportTable } from "./report_blocks.ts";
import { webReportBlocks } from "./web_stats.ts";
import type { CandidateSummary, Comparison, Scorecard } from "./scorecard.ts";
import type { TrustTier } from "./records.ts";
import { formatFixed } from "./format_fixed.ts";
import type { Diagnosis } from "./diagnosis.ts";
import { outcomeCountsText } from "./outcome.ts";
import type { ComparisonStop } from "./sequential.ts";
import { caseResultBlocks, itemAnalysisBlocks, whatWentWrongBlocks } from "./report_diagnosis.ts";
import { markdownSafe } from "./markdown_safe.ts";
import { terminalSafe } from "../terminal_safe.ts";
import { regradeBlocks, type RegradeComparison } from "./regrade_comparison.ts";

export { formatFixed };

/** A case pack's certification counts (certification.edn). */
export interface CertificationSummary {
  cases: number;
  certified: number;
  /** Reason → count, in the certification's order; "certified" is not an exclusion. */
  byReason: Record<string, number>;
}

export interface ReportOptions {
  /** Default "Benchmark report". */
  title?: string;
  /** A paragraph under the title. */
  note?: string;
  certification?: CertificationSummary | null;
  /** Why attempts ran without isolation (e.g. "bubblewrap is not installed"), when some did. */
  isolatedNote?: string;
  /** The resource limits command candidates ran under, when there were any. */
  limitsNote?: string;
  /** Outcomes, causes, per-case results and item analysis, from the attempt records. */
  diagnosis?: Diagnosis | null;
  /** A re-grade's comparison with the experiment it graded again (`dvergr regrade`). */
  regrade?: RegradeComparison | null;
}

const DASH = "–";

/** Microdollars as `$%.4f`. */
function money(micros: number): string {
  return "$" + formatFixed(micros / 1e6, 4);
}

/** A share as `%.0f%%`, or an en dash when unknown. */
function pct(x: number | null): string {
  return x === null ? DASH : formatFixed(100 * x, 0) + "%";
}

/** Whole seconds as the reference prints them; under a second in ms, which "0 s" would hide. */
function seconds(ms: number | null): string {
  if (ms === null) return DASH;
  return ms < 950 ? formatFixed(ms, 0) + " ms" : formatFixed(ms / 1000, 0) + " s";
}

/** Minutes with one decimal from a minute on; below, seconds or ms (never "0.0 min"). */
function minutes(ms: number | null): string {
  if (ms === null) return DASH;
  return ms < 59_950 ? seconds(ms) : formatFixed(ms / 60000, 1) + " min";
}

function orDash<T>(x: T | null, f: (v: T) => string): string {
  return x === null ? DASH : f(x);
}

function signed(x: number, digits: number): string {
  const s = formatFixed(x, digits);
  return x > 0 && /[1-9]/.test(s) ? "+" + s : s;
}

/** Candidates by name, as the reference report lists them. */
function byName(scorecard: Scorecard): CandidateSummary[] {
  return [...scorecard.candidates].sort((a, b) =>
    a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0
  );
}

export type { ReportBlock, ReportTable } from "./report_blocks.ts";

function table(header: string[], align: string, rows: string[][]): ReportTable {
  return {
    header,
    align: [...align].map((a) => (a === "r" ? "right" : "left")),
    rows,
  };
}

const TRUST_TEXT: Record<TrustTier, string> = {
  trusted: "Scored by a **trusted** verifier (host code).",
  room: "Scored by a **room** verifier: the bundle's checker, promoted on this host after it " +
    "calibrated.",
  "ad-hoc": "Scored by an **ad-hoc** verifier: the bundle's checker, not promoted on this host.",
};

function verifierText(sc: Scorecard, rows: CandidateSummary[], isolatedNote?: string): string {
  let out = `${TRUST_TEXT[sc.trust]} Bundle \`${sc.bundleId}\`, experiment \`${sc.experimentId}\`.`;
  const otherTiers = rows.filter((r) => r.attempts + r.faults > 0 && r.trust !== sc.trust);
  if (otherTiers.length > 0) {
    out += " Some attempts were scored by a verifier of another tier: " +
      otherTiers.map((r) => `${markdownSafe(r.candidate)} (${r.trust})`).join(", ") + ".";
  }
  if (sc.isolated) return out + " Every attempt ran isolated.";
  const parts = rows.filter((r) => r.notIsolated > 0).map((r) =>
    `${markdownSafe(r.candidate)} ${r.notIsolated} of ${r.attempts + r.faults}`
  );
  return out + ` Not every attempt ran isolated (without isolation: ${parts.join(", ")})` +
    (isolatedNote ? `; ${isolatedNote.replace(/\.$/, "")}.` : ".");
}

/** A candidate some of whose attempts ran a model without known prices: its cost is unknown. */
function unpriced(r: CandidateSummary): boolean {
  return (r.cost.unpricedAttempts ?? 0) > 0;
}

/** What a money cell says of a candidate whose cost is unknown (never $0). */
const COST_UNKNOWN = "cost unknown";

function unpricedText(rows: readonly CandidateSummary[]): string {
  const names = rows.filter(unpriced).map((r) => markdownSafe(r.candidate));
  if (names.length === 0) return "";
  return ` The cost of ${names.join(", ")} is unknown: ${
    names.length === 1 ? "its model is" : "their models are"
  } not in the model registry, so the tokens are counted but not priced, and ${
    names.length === 1 ? "it ranks" : "they rank"
  } after every priced candidate of equal reward. To price them, ` +
    "add the model's prices (dollars per million tokens) to `<home>/models.edn`, e.g. " +
    '`{:models {"openai/gpt-5.2" {:provider :openai :prices {:input 1.25 :output 10}}}}`.';
}

function frontierTable(rows: CandidateSummary[]): ReportTable {
  return table(
    [
      "Candidate",
      "Attempts",
      "Passed",
      "95% interval",
      "Mean reward",
      "Cost / attempt",
      "Cost / pass",
      "Tokens / attempt",
      "Median time",
      "Outcomes",
    ],
    "lrrlrrrrrl",
    rows.map((r) => [
      r.candidate,
      String(r.attempts),
      `${r.passes} (${pct(r.passRate)})`,
      orDash(r.passInterval, ([lo, hi]) => `${pct(lo)}${DASH}${pct(hi)}`),
      orDash(r.meanReward, (x) => formatFixed(x, 3)),
      unpriced(r) ? COST_UNKNOWN : orDash(r.cost.listPerAttempt, money),
      unpriced(r) ? COST_UNKNOWN : orDash(r.cost.listPerPass, money),
      orDash(r.tokens.perAttempt, String),
      seconds(r.time.medianMs),
      r.outcomes ? outcomeCountsText(r.outcomes) : DASH,
    ]),
  );
}

function resourcesTable(rows: CandidateSummary[]): ReportTable {
  return table(
    [
      "Candidate",
      "Input tokens / attempt",
      "Output tokens / attempt",
      "Cached input",
      "Median time",
      "p90 time",
      "Summed time",
      "Wall clock",
      "Total cost",
    ],
    "lrrrrrrrr",
    rows.map((r) => [
      r.candidate,
      orDash(r.tokens.inputPerAttempt, String),
      orDash(r.tokens.outputPerAttempt, String),
      pct(r.tokens.cacheShare),
      seconds(r.time.medianMs),
      seconds(r.time.p90Ms),
      minutes(r.time.summedMs),
      minutes(r.time.wallClockMs),
      unpriced(r) ? COST_UNKNOWN : money(r.cost.listMicros),
    ]),
  );
}

function failuresBlocks(rows: CandidateSummary[]): ReportBlock[] {
  const checks = [...new Set(rows.flatMap((r) => Object.keys(r.failedChecks)))].sort();
  if (checks.length === 0) return [];
  return [
    { kind: "heading", text: "Where answers fail" },
    { kind: "paragraph", text: "How often each check failed, of all attempts." },
    {
      kind: "table",
      table: table(
        ["Failed check", ...rows.map((r) => r.candidate)],
        "l" + "r".repeat(rows.length),
        checks.map((check) => [
          check,
          ...rows.map((r) => `${r.failedChecks[check] ?? 0} / ${r.attempts}`),
        ]),
      ),
    },
  ];
}

function pValue(p: number): string {
  return p < 0.0001 ? "< 0.0001" : formatFixed(p, 4);
}

function comparisonBlocks(sc: Scorecard): ReportBlock[] {
  const heading: ReportBlock = { kind: "heading", text: "Paired comparison" };
  if (sc.baseline === null || sc.comparisons.length === 0) {
    const text = "There is no other candidate to compare with" +
      (sc.baseline === null ? "." : ` the baseline, **${markdownSafe(sc.baseline)}**.`);
    return [heading, { kind: "paragraph", text }];
  }
  const comparisons = [...sc.comparisons].sort((a: Comparison, b: Comparison) =>
    a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0
  );
  const unknownCost = new Set(sc.candidates.filter(unpriced).map((r) => r.candidate));
  return [
    heading,
    {
      kind: "paragraph",
      text: `Each candidate against the baseline, **${markdownSafe(sc.baseline)}**, on the same ` +
        "cases and " +
        "repetitions.",
    },
    {
      kind: "table",
      table: table(
        [
          "Candidate",
          "Paired cases",
          "Reward difference",
          "95% interval",
          "Only candidate passed (b)",
          "Only baseline passed (c)",
          "McNemar p",
          "P(higher pass rate)",
          "P(no worse)",
          "Cost / pass ratio",
        ],
        "lrrlrrrrrr",
        comparisons.map((c) => [
          c.candidate,
          String(c.pairedCases),
          orDash(c.rewardDifference, (x) => signed(x, 3)),
          orDash(
            c.rewardDifferenceInterval,
            ([lo, hi]) => `${signed(lo, 3)} to ${signed(hi, 3)}`,
          ),
          String(c.mcnemar.b),
          String(c.mcnemar.c),
          pValue(c.mcnemar.p),
          pct(c.pPassRateHigher),
          pct(c.pPassRateNoWorse),
          unknownCost.has(c.candidate) || unknownCost.has(c.baseline)
            ? COST_UNKNOWN
            : orDash(c.costPerPassRatio, (x) => formatFixed(x, 2) + "×"),
        ]),
      ),
    },
    {
      kind: "paragraph",
      text: "The reward difference is the candidate's mean reward minus the baseline's, each " +
        "averaged over repetitions per case, then over the cases both ran. b and c count the " +
        "attempts (same case and repetition, both graded) that only one of the two passed; " +
        "McNemar p is the exact two-sided test on them. P(higher pass rate) and P(no worse) (at " +
        "most 5 points below) are probabilities under Jeffreys posteriors of the two pass " +
        "rates. The cost ratio compares list price per pass.",
    },
  ];
}

/** How a run with sequential stopping stopped its comparisons, when it had it. */
function sequentialBlocks(sc: Scorecard): ReportBlock[] {
  const s = sc.sequential;
  if (!s) return [];
  const level = formatFixed(100 * (1 - s.alpha), 0);
  const notNeeded = new Map(sc.candidates.map((c) => [c.candidate, c.notNeeded ?? 0]));
  const status = (c: ComparisonStop) =>
    c.status === "decided"
      ? `decided: ${c.higher ? "higher" : "lower"}`
      : c.status === "equivalent"
      ? "equivalent"
      : "open (did not stop)";
  return [
    { kind: "heading", text: "Sequential stopping" },
    {
      kind: "paragraph",
      text: `The run compared each candidate with the baseline, **${markdownSafe(s.baseline)}**, ` +
        "after every " +
        "pair of cells (same case and repetition, both graded, in plan order) with an " +
        `anytime-valid ${level}% confidence sequence of the reward difference (empirical ` +
        `Bernstein, alpha ${s.alpha}), and stopped a comparison once its sequence excluded 0 ` +
        `(decided) or lay inside ±${s.delta} (equivalent). ${s.notNeeded} of ${sc.expectedCells} ` +
        "cells were not needed and did not run.",
    },
    {
      kind: "table",
      table: table(
        ["Candidate", "Status", "Pairs", "Mean difference", `${level}% sequence`, "Not needed"],
        "llrrlr",
        s.comparisons.map((c) => [
          c.candidate,
          status(c),
          `${c.pairs} of ${c.plannedPairs}`,
          orDash(c.meanDifference, (x) => signed(x, 3)),
          `${signed(c.sequence[0], 3)} to ${signed(c.sequence[1], 3)}`,
          String(notNeeded.get(c.candidate) ?? 0),
        ]),
      ),
    },
    {
      kind: "paragraph",
      text: "A decided comparison's sequence says on which side of the baseline the " +
        "candidate's mean reward lies, wrong with probability at most alpha however often the " +
        "run looked; an equivalent one says the difference is within ±delta; an open one " +
        "reached the end of the plan without either, so more cases or repetitions are needed " +
        "(`dvergr plan` estimates how many). " +
        "The baseline's cells are not needed once every " +
        "comparison has stopped. The same command without `--stop-when-decided` runs the " +
        "cells not needed.",
    },
  ];
}

/** What retried faults cost on top of the figures above, when any did. */
function retriesText(rows: readonly CandidateSummary[]): string {
  const extra = rows.filter((r) =>
    r.cost.retriedTries > 0 && r.cost.spentListMicros > r.cost.listMicros
  );
  if (extra.length === 0) return "";
  return " Tries that faulted and ran again cost more on top: " +
    extra.map((r) =>
      `${markdownSafe(r.candidate)} spent ${
        money(r.cost.spentListMicros)
      } in all (${r.cost.retriedTries} ` +
      `retried ${r.cost.retriedTries === 1 ? "try" : "tries"}; billed ${
        money(r.cost.spentBilledMicros)
      })`
    ).join(", ") + ".";
}

/** How the leaderboard ranks, and who has cells without a verdict (counted as not passed). */
function rankText(sc: Scorecard, rows: readonly CandidateSummary[]): string {
  const planned = rows[0]?.plannedCells ?? 0;
  const unfinished = rows.filter((r) => r.unfinished > 0);
  return `Ranked by reward over all ${planned} planned cell${planned === 1 ? "" : "s"} of each ` +
    `candidate${sc.sequential ? " (less those not needed)" : ""}: a cell without a verdict ` +
    "(a fault, or not run yet) counts as not passed, reward 0. Leaderboard: " +
    sc.leaderboard.map(markdownSafe).join(", ") + "." +
    (unfinished.length > 0
      ? " Unfinished: " +
        unfinished.map((r) => `${markdownSafe(r.candidate)} ${r.unfinished} of ${r.plannedCells}`)
          .join(", ") +
        "."
      : "");
}

function casesText(cert: CertificationSummary): string {
  const excluded = Object.entries(cert.byReason).filter(([k]) => k !== "certified");
  return `${cert.certified} of ${cert.cases} cases could grade an answer` +
    (excluded.length > 0
      ? "; the others were excluded: " +
        excluded.map(([k, v]) => `${v} ${markdownSafe(k.replaceAll("-", " "))}`).join(", ") +
        " (`certification.edn` lists each)"
      : "") +
    ".";
}

/**
 * The report as a list of blocks, for any renderer: title, note, the incomplete notice,
 * the verifier, Frontier, Resources, Where answers fail, Paired comparison and Cases.
 * Candidates are listed by name.
 */
export function reportBlocks(scorecard: Scorecard, opts: ReportOptions = {}): ReportBlock[] {
  const rows = byName(scorecard);
  const blocks: ReportBlock[] = [{ kind: "title", text: opts.title ?? "Benchmark report" }];
  if (opts.note) blocks.push({ kind: "paragraph", text: opts.note });
  if (scorecard.incomplete !== null) {
    const n = scorecard.incomplete.cells;
    blocks.push({
      kind: "paragraph",
      text: `**Incomplete:** ${n} cell${n === 1 ? "" : "s"} did not finish, so there is no ` +
        "Scorecard yet; running the experiment again resumes them. The figures below count " +
        "the cells that did finish.",
    });
  }
  blocks.push(
    { kind: "paragraph", text: verifierText(scorecard, rows, opts.isolatedNote) },
    ...(opts.limitsNote ? [{ kind: "paragraph" as const, text: opts.limitsNote }] : []),
    { kind: "heading", text: "Frontier" },
    { kind: "table", table: frontierTable(rows) },
    { kind: "paragraph", text: rankText(scorecard, rows) },
    { kind: "frontier-plot" },
    ...(opts.regrade ? regradeBlocks(opts.regrade) : []),
    { kind: "heading", text: "Resources" },
    { kind: "table", table: resourcesTable(rows) },
    {
      kind: "paragraph",
      text: "Summed time adds up every attempt's own time; the wall clock runs from the first " +
        "attempt's start to the last one's end (it includes waits, and is shorter than the sum " +
        "when attempts run in parallel). Cached input is the share of input tokens read from " +
        `the provider's cache (${DASH} where it was not recorded).`,
    },
    {
      kind: "paragraph",
      text: "Costs are at the models' list prices (what the same tokens cost through the API), " +
        "whether or not a subscription paid for them. Billed: " +
        rows.map((r) =>
          `${markdownSafe(r.candidate)} ${unpriced(r) ? COST_UNKNOWN : money(r.cost.billedMicros)}`
        )
          .join(", ") +
        "." + retriesText(rows) + unpricedText(rows),
    },
    ...failuresBlocks(rows),
    ...webReportBlocks(rows),
    ...(opts.diagnosis ? whatWentWrongBlocks(opts.diagnosis) : []),
    ...comparisonBlocks(scorecard),
    ...sequentialBlocks(scorecard),
    ...(opts.diagnosis ? caseResultBlocks(opts.diagnosis) : []),
    ...(opts.diagnosis ? itemAnalysisBlocks(opts.diagnosis) : []),
  );
  if (opts.certification) {
    blocks.push(
      { kind: "heading", text: "Cases" },
      { kind: "paragraph", text: casesText(opts.certification) },
    );
  }
  return blocks;
}

function markdownTable(t: ReportTable): string {
  const line = (cells: string[]) => `| ${cells.map(markdownSafe).join(" | ")} |\n`;
  return line(t.header) +
    "|" + t.align.map((a) => (a === "right" ? "---:|" : "---|")).join("") + "\n" +
    t.rows.map(line).join("");
}

/** A fenced block longer than any run of backticks in the text. */
function markdownCode(text: string): string {
  const safe = terminalSafe(text);
  const longest = Math.max(2, ...(safe.match(/`+/g) ?? []).map((m) => m.length));
  const fence = "`".repeat(longest + 1);
  return `${fence}text\n${safe}\n${fence}\n`;
}

/** The report of a scorecard as Markdown (docs/compatibility.md §8.7 plus a paired comparison). */
export function renderReport(scorecard: Scorecard, opts: ReportOptions = {}): string {
  return reportBlocks(scorecard, opts)
    .flatMap((b) => {
      switch (b.kind) {
        case "title":
          return [`# ${markdownSafe(b.text)}\n`];
        case "heading":
          return [`## ${markdownSafe(b.text)}\n`];
        case "paragraph":
          return [`${b.text}\n`];
        case "table":
          return [markdownTable(b.table)];
        case "code":
          return [markdownCode(b.text)];
        case "frontier-plot":
          return [];
      }
    })
    .join("\n");
}
