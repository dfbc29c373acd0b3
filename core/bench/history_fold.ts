/**
 * An experiment's attempt history folded into what its scorecard and diagnosis need,
 * record by record, so neither holds the records: per candidate, sums and counts (costs,
 * tokens, checks, outcomes, web and judge), the distinct failure causes with one example
 * each, and of each cell's latest try only a few numbers (case, repetition, reward, passed,
 * time) in typed columns — what the figures that depend on the order of cells (means and
 * intervals, medians, paired comparisons) are computed from in canonical order. Pure.
 *
 * Every try goes to addTry(); the latest try of each cell (latestTries' rule: highest
 * tryNo, then latest start) also to addLatest(). foldGroupedHistory() does both for a
 * history whose tries of one cell come together (the state store lists them so).
 */
import { type AttemptRecord, cellKey, isLaterTry, latestTries, type TrustTier } from "./records.ts";
import { CauseTallies, type Outcome, outcomeOf, OUTCOMES } from "./outcome.ts";

/** A column of numbers that grows (a typed array doubled when full). */
class Column<T extends Float64Array | Int32Array | Uint8Array> {
  length = 0;
  constructor(public data: T) {}
  push(x: number): void {
    if (this.length === this.data.length) {
      const bigger = new (this.data.constructor as new (n: number) => T)(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = x;
  }
  at(i: number): number {
    return this.data[i];
  }
}

/** A cell's place in canonical order: case id (null as ""), then repetition. */
export type CellPlace = { caseId: string | null; repetition: number };

/** Canonical order of cells: case id (string order, null as ""), then repetition. */
export function canonicalBefore(a: CellPlace, b: CellPlace): boolean {
  const x = a.caseId ?? "";
  const y = b.caseId ?? "";
  return x < y || (x === y && a.repetition < b.repetition);
}

const TRUST_RANK: Record<TrustTier, number> = { "ad-hoc": 0, room: 1, trusted: 2 };

/** The reward a verdict counts for (a missing or non-finite one counts 0). */
export function rewardOf(r: AttemptRecord): number {
  const x = r.verdict?.reward;
  return typeof x === "number" && Number.isFinite(x) ? x : 0;
}

/** First start to last end, folded; null before any parseable start. */
export class Span {
  first = Infinity;
  last = -Infinity;
  add(r: AttemptRecord): void {
    const t0 = Date.parse(r.startedAt);
    if (!Number.isFinite(t0)) return;
    this.first = Math.min(this.first, t0);
    this.last = Math.max(this.last, t0 + r.elapsedMs);
  }
  get ms(): number | null {
    return Number.isFinite(this.first) ? this.last - this.first : null;
  }
}

/** The folded latest tries and every try of one candidate. */
export class CandidateFold {
  // Latest try of each cell: one row per cell.
  readonly caseIndex = new Column(new Int32Array(16));
  readonly repetition = new Column(new Int32Array(16));
  readonly reward = new Column(new Float64Array(16));
  /** 1 graded, 2 passed (and graded). */
  readonly flags = new Column(new Uint8Array(16));
  readonly elapsed = new Column(new Float64Array(16));
  graded = 0;
  passes = 0;
  readonly passCounts = new Map<string, number>();
  readonly failed: Record<string, number> = {};
  billed = 0;
  list = 0;
  readonly tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  cacheRecorded = false;
  notIsolated = 0;
  unpriced = 0;
  lowestTrust: TrustTier = "trusted";
  readonly span = new Span();
  readonly outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  readonly causes = new CauseTallies<CellPlace>(canonicalBefore);
  // Every try.
  tries = 0;
  spentBilled = 0;
  spentList = 0;
  withWeb = 0;
  readonly web = { searches: 0, requests: 0, pages: 0 };
  readonly denials: Record<string, number> = {};
  judged = 0;
  readonly judge = { calls: 0, billedMicros: 0, listMicros: 0 };

  get latest(): number {
    return this.flags.length;
  }
}

/** The fold of an experiment's history over its candidates (records of others are left out). */
export class HistoryFold {
  readonly candidates = new Map<string, CandidateFold>();
  /** Case ids in the order first met; rows refer to them by index. */
  readonly caseIds: (string | null)[] = [];
  private readonly caseIndex = new Map<string | null, number>();
  readonly span = new Span();
  latest = 0;
  graded = 0;
  notIsolated = 0;

  constructor(candidates: readonly string[]) {
    for (const c of candidates) this.candidates.set(c, new CandidateFold());
  }

  /** Canonical rows per candidate, sorted once (the scorecard and the diagnosis share them). */
  private readonly sorted = new Map<string, Int32Array>();

  /**
   * Row numbers of a candidate's latest tries in canonical order (case id, then
   * repetition), so sums of non-integers come out as they did over sorted records.
   */
  canonicalRows(candidate: string): Int32Array {
    const known = this.sorted.get(candidate);
    const c = this.candidates.get(candidate)!;
    if (known && known.length === c.latest) return known;
    // Rank the case ids once, so the sort compares numbers.
    const order = this.caseIds.map((id, i) => [id ?? "", i] as const)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    const rank = new Int32Array(this.caseIds.length);
    order.forEach(([id, i], n) =>
      rank[i] = n > 0 && order[n - 1][0] === id ? rank[order[n - 1][1]] : n
    );
    const rows = new Int32Array(c.latest).map((_, i) => i).sort((a, b) =>
      rank[c.caseIndex.at(a)] - rank[c.caseIndex.at(b)] ||
      c.repetition.at(a) - c.repetition.at(b)
    );
    this.sorted.set(candidate, rows);
    return rows;
  }

  /** The index of a case id in caseIds, or -1 when no record had it. */
  indexOfCase(caseId: string | null): number {
    return this.caseIndex.get(caseId) ?? -1;
  }

  private caseOf(caseId: string | null): number {
    let i = this.caseIndex.get(caseId);
    if (i === undefined) {
      i = this.caseIds.length;
      this.caseIds.push(caseId);
      this.caseIndex.set(caseId, i);
    }
    return i;
  }

  /** One try of a cell (every try, the latest included). */
  addTry(r: AttemptRecord): void {
    const c = this.candidates.get(r.candidate);
    if (!c) return;
    c.tries++;
    c.spentBilled += r.billedMicros;
    c.spentList += r.listMicros ?? r.billedMicros;
    if (r.web) {
      c.withWeb++;
      c.web.searches += r.web.searches;
      c.web.requests += r.web.requests;
      c.web.pages += r.web.pages;
      for (const [k, n] of Object.entries(r.web.denials)) {
        c.denials[k] = (c.denials[k] ?? 0) + (n ?? 0);
      }
    }
    if (r.judge) {
      c.judged++;
      c.judge.calls += r.judge.calls;
      c.judge.billedMicros += r.judge.billedMicros;
      c.judge.listMicros += r.judge.listMicros ?? r.judge.billedMicros;
    }
  }

  /** The latest try of a cell (once per cell). */
  addLatest(r: AttemptRecord): void {
    const c = this.candidates.get(r.candidate);
    if (!c) return;
    this.latest++;
    this.span.add(r);
    if (!r.isolated) this.notIsolated++;
    const graded = r.verdict !== null;
    if (graded) this.graded++;
    c.caseIndex.push(this.caseOf(r.caseId));
    c.repetition.push(r.repetition);
    c.reward.push(graded ? rewardOf(r) : 0);
    c.flags.push(graded ? (r.passed ? 3 : 1) : 0);
    c.elapsed.push(r.elapsedMs);
    if (graded) {
      c.graded++;
      if (r.passed) c.passes++;
      for (const [check, ok] of Object.entries(r.verdict!.checks)) {
        c.passCounts.set(check, (c.passCounts.get(check) ?? 0) + (ok === true ? 1 : 0));
        if (ok === false) c.failed[check] = (c.failed[check] ?? 0) + 1;
      }
    }
    c.billed += r.billedMicros;
    c.list += r.listMicros ?? r.billedMicros;
    c.tokens.input += r.usage.input;
    c.tokens.output += r.usage.output;
    c.tokens.cacheRead += r.usage.cacheRead;
    c.tokens.cacheWrite += r.usage.cacheWrite;
    if (r.usage.cacheRead > 0 || r.usage.cacheWrite > 0) c.cacheRecorded = true;
    if (!r.isolated) c.notIsolated++;
    if (r.unpriced === true) c.unpriced++;
    if (TRUST_RANK[r.trust] < TRUST_RANK[c.lowestTrust]) c.lowestTrust = r.trust;
    c.span.add(r);
    c.outcomes[outcomeOf(r)]++;
    c.causes.add(r, { caseId: r.caseId, repetition: r.repetition });
  }
}

/**
 * Folds a history whose tries of one cell come one after another (any order of cells and
 * of tries within a cell), holding one cell's tries at a time. `check` sees every record
 * first (and may throw).
 */
export async function foldGroupedHistory(
  history: AsyncIterable<AttemptRecord> | Iterable<AttemptRecord>,
  fold: HistoryFold,
  check?: (r: AttemptRecord) => void,
): Promise<void> {
  let cell: string | null = null;
  let latest: AttemptRecord | null = null;
  for await (const r of history) {
    check?.(r);
    const key = cellKey(r.candidate, r.caseId, r.repetition);
    if (key !== cell) {
      if (latest) fold.addLatest(latest);
      cell = key;
      latest = null;
    }
    fold.addTry(r);
    if (latest === null || isLaterTry(r, latest)) latest = r;
  }
  if (latest) fold.addLatest(latest);
}

/** Folds records in any order (they are all in memory already). */
export function foldRecords(records: readonly AttemptRecord[], fold: HistoryFold): void {
  for (const r of records) fold.addTry(r);
  for (const r of latestTries(records)) fold.addLatest(r);
}
