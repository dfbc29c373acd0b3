/**
 * The benchmark report as Markdown, from a scorecard (REFERENCE.md §8.7): the frontier,
 * resources, where answers fail, the paired comparison against the baseline, and for case
 * packs which cases could grade an answer. Pure: the same scorecard gives the same text.
 */
import type { CandidateSummary, Comparison, Scorecard } from "./scorecard.ts";
import type { TrustTier } from "./records.ts";

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
}

const DASH = "–";

/**
 * `x` with `digits` decimals, rounded half-up on its shortest decimal form, as Java's
 * `String.format("%.nf")` does (so 0.00015 → "0.0002", where toFixed gives "0.0001").
 * A result that rounds to zero carries no minus sign.
 */
export function formatFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return String(x);
  const negative = x < 0;
  const [mantissa, expText] = Math.abs(x).toString().split("e");
  const [whole, frac = ""] = mantissa.split(".");
  let ds = whole + frac;
  let point = whole.length + (expText === undefined ? 0 : Number(expText));
  if (point <= 0) {
    ds = "0".repeat(1 - point) + ds;
    point = 1;
  }
  if (ds.length < point + digits) ds += "0".repeat(point + digits - ds.length);
  const keep = point + digits;
  const kept = ds.slice(0, keep).split("").map(Number);
  if (ds.length > keep && ds.charCodeAt(keep) >= 53 /* "5" */) {
    let i = kept.length - 1;
    while (i >= 0 && kept[i] === 9) kept[i--] = 0;
    if (i >= 0) kept[i]++;
    else {
      kept.unshift(1);
      point++;
    }
  }
  const intPart = kept.slice(0, point).join("").replace(/^0+(?=\d)/, "");
  const fracPart = kept.slice(point).join("");
  const zero = kept.every((d) => d === 0);
  return (negative && !zero ? "-" : "") + intPart + (digits > 0 ? "." + fracPart : "");
}

/** Microdollars as `$%.4f`. */
function money(micros: number): string {
  return "$" + formatFixed(micros / 1e6, 4);
}

/** A share as `%.0f%%`, or an en dash when unknown. */
function pct(x: number | null): string {
  return x === null ? DASH : formatFixed(100 * x, 0) + "%";
}

function seconds(ms: number | null): string {
  return ms === null ? DASH : formatFixed(ms / 1000, 0) + " s";
}

function minutes(ms: number | null): string {
  return ms === null ? DASH : formatFixed(ms / 60000, 1) + " min";
}

function orDash<T>(x: T | null, f: (v: T) => string): string {
  return x === null ? DASH : f(x);
}

function signed(x: number, digits: number): string {
  const s = formatFixed(x, digits);
  return x > 0 && /[1-9]/.test(s) ? "+" + s : s;
}

function row(cells: string[]): string {
  return `| ${cells.join(" | ")} |\n`;
}

/** Candidates by name, as the reference report lists them. */
function byName(scorecard: Scorecard): CandidateSummary[] {
  return [...scorecard.candidates].sort((a, b) =>
    a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0
  );
}

const TRUST_TEXT: Record<TrustTier, string> = {
  trusted: "Scored by a **trusted** verifier (host code).",
  room: "Scored by a **room** verifier: the bundle's checker, promoted on this host after it " +
    "calibrated.",
  "ad-hoc": "Scored by an **ad-hoc** verifier: the bundle's checker, not promoted on this host.",
};

function verifierSection(sc: Scorecard, rows: CandidateSummary[], isolatedNote?: string): string {
  let out = `${TRUST_TEXT[sc.trust]} Bundle \`${sc.bundleId}\`, experiment \`${sc.experimentId}\`.`;
  const otherTiers = rows.filter((r) => r.attempts + r.faults > 0 && r.trust !== sc.trust);
  if (otherTiers.length > 0) {
    out += " Some attempts were scored by a verifier of another tier: " +
      otherTiers.map((r) => `${r.candidate} (${r.trust})`).join(", ") + ".";
  }
  if (sc.isolated) {
    out += " Every attempt ran isolated.";
  } else {
    const parts = rows.filter((r) => r.notIsolated > 0).map((r) =>
      `${r.candidate} ${r.notIsolated} of ${r.attempts + r.faults}`
    );
    out += ` Not every attempt ran isolated (without isolation: ${parts.join(", ")})` +
      (isolatedNote ? `; ${isolatedNote.replace(/\.$/, "")}.` : ".");
  }
  return out + "\n\n";
}

function frontierSection(rows: CandidateSummary[]): string {
  let out = "## Frontier\n\n" +
    row([
      "Candidate",
      "Attempts",
      "Passed",
      "95% interval",
      "Mean reward",
      "Cost / attempt",
      "Cost / pass",
      "Tokens / attempt",
      "Median time",
    ]) +
    "|---|---:|---:|---|---:|---:|---:|---:|---:|\n";
  for (const r of rows) {
    out += row([
      r.candidate,
      String(r.attempts),
      `${r.passes} (${pct(r.passRate)})`,
      orDash(r.passInterval, ([lo, hi]) => `${pct(lo)}${DASH}${pct(hi)}`),
      orDash(r.meanReward, (x) => formatFixed(x, 3)),
      orDash(r.cost.listPerAttempt, money),
      orDash(r.cost.listPerPass, money),
      orDash(r.tokens.perAttempt, String),
      seconds(r.time.medianMs),
    ]);
  }
  return out;
}

function resourcesSection(rows: CandidateSummary[]): string {
  let out = "\n## Resources\n\n" +
    row([
      "Candidate",
      "Input tokens / attempt",
      "Output tokens / attempt",
      "Cached input",
      "Median time",
      "p90 time",
      "Summed time",
      "Wall clock",
      "Total cost",
    ]) +
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const r of rows) {
    out += row([
      r.candidate,
      orDash(r.tokens.inputPerAttempt, String),
      orDash(r.tokens.outputPerAttempt, String),
      pct(r.tokens.cacheShare),
      seconds(r.time.medianMs),
      seconds(r.time.p90Ms),
      minutes(r.time.summedMs),
      minutes(r.time.wallClockMs),
      money(r.cost.listMicros),
    ]);
  }
  out += "\nSummed time adds up every attempt's own time; the wall clock runs from the first " +
    "attempt's start to the last one's end (it includes waits, and is shorter than the sum when " +
    "attempts run in parallel). Cached input is the share of input tokens read from the " +
    `provider's cache (${DASH} where it was not recorded).\n`;
  out += "\nCosts are at the models' list prices (what the same tokens cost through the API), " +
    "whether or not a subscription paid for them. Billed: " +
    rows.map((r) => `${r.candidate} ${money(r.cost.billedMicros)}`).join(", ") + ".\n";
  return out;
}

function failuresSection(rows: CandidateSummary[]): string {
  const checks = [...new Set(rows.flatMap((r) => Object.keys(r.failedChecks)))].sort();
  if (checks.length === 0) return "";
  let out = "\n## Where answers fail\n\nHow often each check failed, of all attempts.\n\n" +
    row(["Failed check", ...rows.map((r) => r.candidate)]) +
    "|---|" + "---:|".repeat(rows.length) + "\n";
  for (const check of checks) {
    out += row([check, ...rows.map((r) => `${r.failedChecks[check] ?? 0} / ${r.attempts}`)]);
  }
  return out;
}

function pValue(p: number): string {
  return p < 0.0001 ? "< 0.0001" : formatFixed(p, 4);
}

function comparisonSection(sc: Scorecard): string {
  let out = "\n## Paired comparison\n\n";
  if (sc.baseline === null || sc.comparisons.length === 0) {
    return out + "There is no other candidate to compare with" +
      (sc.baseline === null ? "." : ` the baseline, **${sc.baseline}**.`) + "\n";
  }
  out += `Each candidate against the baseline, **${sc.baseline}**, on the same cases and ` +
    "repetitions.\n\n" +
    row([
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
    ]) +
    "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n";
  const rows = [...sc.comparisons].sort((a: Comparison, b: Comparison) =>
    a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0
  );
  for (const c of rows) {
    out += row([
      c.candidate,
      String(c.pairedCases),
      orDash(c.rewardDifference, (x) => signed(x, 3)),
      orDash(c.rewardDifferenceInterval, ([lo, hi]) => `${signed(lo, 3)} to ${signed(hi, 3)}`),
      String(c.mcnemar.b),
      String(c.mcnemar.c),
      pValue(c.mcnemar.p),
      pct(c.pPassRateHigher),
      pct(c.pPassRateNoWorse),
      orDash(c.costPerPassRatio, (x) => formatFixed(x, 2) + "×"),
    ]);
  }
  out += "\nThe reward difference is the candidate's mean reward minus the baseline's, each " +
    "averaged over repetitions per case, then over the cases both ran. b and c count the " +
    "attempts (same case and repetition, both graded) that only one of the two passed; McNemar p " +
    "is the exact two-sided test on them. P(higher pass rate) and P(no worse) (at most 5 points " +
    "below) are probabilities under Jeffreys posteriors of the two pass rates. The cost ratio " +
    "compares list price per pass.\n";
  return out;
}

function casesSection(cert: CertificationSummary): string {
  const excluded = Object.entries(cert.byReason).filter(([k]) => k !== "certified");
  return "\n## Cases\n\n" +
    `${cert.certified} of ${cert.cases} cases could grade an answer` +
    (excluded.length > 0
      ? "; the others were excluded: " +
        excluded.map(([k, v]) => `${v} ${k.replaceAll("-", " ")}`).join(", ") +
        " (`certification.edn` lists each)"
      : "") +
    ".\n";
}

/** The report of a scorecard as Markdown (REFERENCE.md §8.7 plus a paired comparison). */
export function renderReport(scorecard: Scorecard, opts: ReportOptions = {}): string {
  const rows = byName(scorecard);
  let out = `# ${opts.title ?? "Benchmark report"}\n\n`;
  if (opts.note) out += `${opts.note}\n\n`;
  if (scorecard.incomplete !== null) {
    const n = scorecard.incomplete.cells;
    out += `**Incomplete:** ${n} cell${n === 1 ? "" : "s"} did not finish, so there is no ` +
      "Scorecard yet; running the experiment again resumes them. The figures below count the " +
      "cells that did finish.\n\n";
  }
  out += verifierSection(scorecard, rows, opts.isolatedNote);
  out += frontierSection(rows);
  out += resourcesSection(rows);
  out += failuresSection(rows);
  out += comparisonSection(scorecard);
  if (opts.certification) out += casesSection(opts.certification);
  return out;
}
