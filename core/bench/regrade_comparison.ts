/**
 * Two verifiers compared cell by cell: an experiment and its re-grade (`dvergr regrade`),
 * the same attempts graded by the original and by the changed checker. Which verdicts
 * changed (passed → failed, failed → passed, reward only), per candidate before and after,
 * the cells that could not be graded again and why, and what the judge reused. Pure: fed
 * the latest record of each cell of both experiments.
 */
import type { AttemptRecord } from "./records.ts";
import { cellKey } from "./records.ts";
import type { ReportBlock, ReportTable } from "./report_blocks.ts";
import { formatFixed } from "./format_fixed.ts";
import { markdownSafe } from "./markdown_safe.ts";

/** One side of a cell: its verdict under one verifier. */
export interface CellSide {
  outcome: "passed" | "failed" | "no verdict";
  reward: number | null;
}

/** A cell whose verdict the changed verifier changed. */
export interface CellChange {
  candidate: string;
  caseId: string | null;
  repetition: number;
  before: CellSide;
  after: CellSide;
  /** Checks whose value differs (present in one verdict only counts too). */
  checks: string[];
}

/** A cell the re-grade could not grade, and why. */
export interface NotRegradedCell {
  candidate: string;
  caseId: string | null;
  repetition: number;
  /** evidence-gone, original-fault, no-attempt, or the fault's kind (a checker fault…). */
  reason: string;
  message: string;
}

/** Before and after for one candidate, over its cells graded by both verifiers. */
export interface CandidateChange {
  candidate: string;
  /** Cells with a verdict under both. */
  compared: number;
  passesBefore: number;
  passesAfter: number;
  meanRewardBefore: number | null;
  meanRewardAfter: number | null;
  passedToFailed: number;
  failedToPassed: number;
  rewardChanged: number;
}

export interface RegradeComparison {
  original: string;
  regrade: string;
  cells: number;
  /** Cells with a verdict under both verifiers. */
  compared: number;
  unchanged: number;
  passedToFailed: number;
  failedToPassed: number;
  /** Same pass or fail, another reward. */
  rewardChanged: number;
  /** Cells without a verdict under the original that have one now (a fixed checker fault). */
  gainedVerdict: number;
  /** Cells of the re-grade without a verdict, by reason (not re-graded; not failures). */
  notRegraded: Record<string, number>;
  /** Cells the re-grade has not reached yet (an interrupted run). */
  pending: number;
  perCandidate: CandidateChange[];
  /** The changed cells, in plan order, the first CHANGES_LISTED. */
  changes: CellChange[];
  changesNotListed: number;
  notRegradedCells: NotRegradedCell[];
  notRegradedNotListed: number;
  judge: { reused: number; asked: number; billedMicros: number };
}

/** Changed (and not re-graded) cells listed, at most; the counts cover every cell. */
export const CHANGES_LISTED = 200;

function sideOf(r: AttemptRecord | undefined): CellSide {
  if (!r || r.verdict === null) return { outcome: "no verdict", reward: null };
  return { outcome: r.passed ? "passed" : "failed", reward: r.verdict.reward };
}

/** What a cell of the original keeps for the comparison: its side and checks. */
interface Before {
  side: CellSide;
  checks: Record<string, boolean> | null;
}

/** Folds both experiments' latest records into their comparison. */
export class RegradeFold {
  readonly before = new Map<string, Before>();
  readonly c: RegradeComparison;
  readonly byCandidate = new Map<
    string,
    CandidateChange & { sumBefore: number; sumAfter: number }
  >();
  seen = 0;

  constructor(original: string, regrade: string, candidates: string[], cells: number) {
    this.c = {
      original,
      regrade,
      cells,
      compared: 0,
      unchanged: 0,
      passedToFailed: 0,
      failedToPassed: 0,
      rewardChanged: 0,
      gainedVerdict: 0,
      notRegraded: {},
      pending: 0,
      perCandidate: [],
      changes: [],
      changesNotListed: 0,
      notRegradedCells: [],
      notRegradedNotListed: 0,
      judge: { reused: 0, asked: 0, billedMicros: 0 },
    };
    for (const candidate of candidates) {
      this.byCandidate.set(candidate, {
        candidate,
        compared: 0,
        passesBefore: 0,
        passesAfter: 0,
        meanRewardBefore: null,
        meanRewardAfter: null,
        passedToFailed: 0,
        failedToPassed: 0,
        rewardChanged: 0,
        sumBefore: 0,
        sumAfter: 0,
      });
    }
  }

  /** The original's latest record of a cell (of the plan's inputs). */
  noteOriginal(r: AttemptRecord): void {
    this.before.set(cellKey(r.candidate, r.caseId, r.repetition), {
      side: sideOf(r),
      checks: r.verdict?.checks ?? null,
    });
  }

  /** The re-grade's latest record of a cell; call after every noteOriginal(). */
  noteRegrade(r: AttemptRecord): void {
    this.seen++;
    const { c } = this;
    const mark = r.regradedFrom;
    if (mark) {
      c.judge.reused += mark.judgeReused;
      c.judge.asked += mark.judgeAsked;
      c.judge.billedMicros += mark.judgeBilledMicros;
    }
    const b = this.before.get(cellKey(r.candidate, r.caseId, r.repetition));
    const before = b?.side ?? { outcome: "no verdict" as const, reward: null };
    const after = sideOf(r);
    const where = { candidate: r.candidate, caseId: r.caseId, repetition: r.repetition };
    if (r.verdict === null) {
      const reason = r.fault?.kind ?? "fault";
      c.notRegraded[reason] = (c.notRegraded[reason] ?? 0) + 1;
      if (c.notRegradedCells.length < CHANGES_LISTED) {
        c.notRegradedCells.push({ ...where, reason, message: r.fault?.message ?? "" });
      } else c.notRegradedNotListed++;
      return;
    }
    if (before.outcome === "no verdict") {
      c.gainedVerdict++;
      return this.listChange({ ...where, before, after, checks: [] });
    }
    const row = this.byCandidate.get(r.candidate);
    c.compared++;
    const flip = before.outcome === after.outcome
      ? (before.reward === after.reward ? null : "rewardChanged" as const)
      : after.outcome === "failed"
      ? "passedToFailed" as const
      : "failedToPassed" as const;
    if (row) {
      row.compared++;
      if (before.outcome === "passed") row.passesBefore++;
      if (after.outcome === "passed") row.passesAfter++;
      row.sumBefore += before.reward ?? 0;
      row.sumAfter += after.reward ?? 0;
      if (flip) row[flip]++;
    }
    if (flip === null) {
      c.unchanged++;
      return;
    }
    c[flip]++;
    this.listChange({
      ...where,
      before,
      after,
      checks: changedChecks(b!.checks, r.verdict.checks),
    });
  }

  listChange(change: CellChange): void {
    if (this.c.changes.length < CHANGES_LISTED) this.c.changes.push(change);
    else this.c.changesNotListed++;
  }

  /** The comparison of what was noted. */
  result(): RegradeComparison {
    const perCandidate = [...this.byCandidate.values()].map(({ sumBefore, sumAfter, ...row }) => ({
      ...row,
      meanRewardBefore: row.compared ? sumBefore / row.compared : null,
      meanRewardAfter: row.compared ? sumAfter / row.compared : null,
    }));
    return { ...this.c, perCandidate, pending: Math.max(0, this.c.cells - this.seen) };
  }
}

/** Checks whose value differs between two verdicts, sorted. */
function changedChecks(
  a: Record<string, boolean> | null,
  b: Record<string, boolean>,
): string[] {
  const names = new Set([...Object.keys(a ?? {}), ...Object.keys(b)]);
  return [...names].filter((n) => (a ?? {})[n] !== b[n]).sort();
}

const REASON_TEXT: Record<string, string> = {
  "evidence-gone": "evidence gone",
  "original-fault": "the original attempt faulted",
  "no-attempt": "no original attempt",
};

/** A reason for people: the known ones in words, a fault's kind as it is. */
export function reasonText(reason: string): string {
  return REASON_TEXT[reason] ?? `fault (${reason})`;
}

function sideText(s: CellSide): string {
  return s.reward === null ? s.outcome : `${s.outcome} (${formatFixed(s.reward, 3)})`;
}

/** One line for a changed cell: where, before → after, the checks that moved. */
export function changeLine(ch: CellChange): string {
  return `${ch.candidate} / ${ch.caseId ?? "-"} / ${ch.repetition}: ${sideText(ch.before)} → ${
    sideText(ch.after)
  }` + (ch.checks.length > 0 ? `  checks: ${ch.checks.join(", ")}` : "");
}

/** The counts in one line: "2 passed → failed, 1 failed → passed, 0 reward only, 9 unchanged". */
export function countsLine(c: RegradeComparison): string {
  const gone = Object.values(c.notRegraded).reduce((a, b) => a + b, 0);
  return `${c.passedToFailed} passed → failed, ${c.failedToPassed} failed → passed, ` +
    `${c.rewardChanged} reward changed, ${c.unchanged} unchanged` +
    (c.gainedVerdict > 0 ? `, ${c.gainedVerdict} graded now (no verdict before)` : "") +
    (gone > 0 ? `, ${gone} not re-graded` : "") +
    (c.pending > 0 ? `, ${c.pending} not reached yet` : "");
}

function table(header: string[], align: string, rows: string[][]): ReportTable {
  return { header, align: [...align].map((a) => (a === "r" ? "right" : "left")), rows };
}

const mean = (x: number | null) => (x === null ? "–" : formatFixed(x, 3));

/** The report's section on the re-grade: counts, per candidate, changed and missing cells. */
export function regradeBlocks(c: RegradeComparison): ReportBlock[] {
  const gone = Object.entries(c.notRegraded);
  const blocks: ReportBlock[] = [
    { kind: "heading", text: "Re-grading" },
    {
      kind: "paragraph",
      text: `Every cell was graded again from the evidence experiment \`${c.original}\` kept ` +
        "(the files its attempt left, the pages it fetched, its judge answers) with this " +
        "bundle's checker; no candidate ran again. Outcomes, tokens, costs and times above are " +
        `the original attempts'. Verdicts against the original's: ${markdownSafe(countsLine(c))}.` +
        ` Judge: ${c.judge.reused} answers reused (same judge, same request), ${c.judge.asked} ` +
        `asked anew ($${formatFixed(c.judge.billedMicros / 1e6, 4)}, not in the costs above).`,
    },
    {
      kind: "table",
      table: table(
        [
          "Candidate",
          "Compared",
          "Passed before",
          "Passed now",
          "Mean reward before",
          "Mean reward now",
          "Passed → failed",
          "Failed → passed",
          "Reward changed",
        ],
        "lrrrrrrrr",
        c.perCandidate.map((r) => [
          r.candidate,
          String(r.compared),
          String(r.passesBefore),
          String(r.passesAfter),
          mean(r.meanRewardBefore),
          mean(r.meanRewardAfter),
          String(r.passedToFailed),
          String(r.failedToPassed),
          String(r.rewardChanged),
        ]),
      ),
    },
  ];
  if (c.changes.length > 0) {
    blocks.push(
      { kind: "paragraph", text: "Cells whose verdict changed:" },
      {
        kind: "table",
        table: table(
          ["Candidate", "Case", "Repetition", "Before", "Now", "Checks that changed"],
          "llrlll",
          c.changes.map((ch) => [
            ch.candidate,
            ch.caseId ?? "–",
            String(ch.repetition),
            sideText(ch.before),
            sideText(ch.after),
            ch.checks.join(", "),
          ]),
        ),
      },
    );
    if (c.changesNotListed > 0) {
      blocks.push({ kind: "paragraph", text: `${c.changesNotListed} more changed cells.` });
    }
  }
  if (gone.length > 0) {
    blocks.push(
      {
        kind: "paragraph",
        text: "Cells not re-graded (" +
          gone.map(([k, n]) => `${n} ${markdownSafe(reasonText(k))}`).join(", ") +
          "): they have no new verdict and none was made up. They count as unfinished cells, " +
          "like faults: outside the pass rate and mean reward, and as reward 0 in the " +
          "leaderboard's rank, which counts every planned cell; they are not failures.",
      },
      {
        kind: "table",
        table: table(
          ["Candidate", "Case", "Repetition", "Why"],
          "llrl",
          c.notRegradedCells.map((m) => [
            m.candidate,
            m.caseId ?? "–",
            String(m.repetition),
            m.message,
          ]),
        ),
      },
    );
  }
  return blocks;
}
