/**
 * The ranges of every time, size and count a user can give (flags, MCP inputs, bundle
 * fields). A value outside its range is refused with a USAGE error (exit 2) naming where it
 * came from: a huge timeout must not overflow a timer and become 1 ms, a huge repetition
 * count must not plan billions of cells. The README lists the same table.
 */
import { DvergrError, usageError } from "./errors.ts";

export interface Range {
  min: number;
  max: number;
  /** Whole numbers only. */
  integer: boolean;
  /** The unit as the README says it. */
  unit: string;
}

const DAY_MS = 86_400_000;

/** Every range, by the name the README's table uses. */
export const RANGES = {
  /** Per-attempt time limit: `--timeout-ms`, `timeout_ms`, `:timeout-ms`. At most a day. */
  timeoutMs: { min: 1000, max: DAY_MS, integer: true, unit: "ms" },
  /** Attempts per candidate per case. */
  repetitions: { min: 1, max: 1000, integer: true, unit: "" },
  /** The first N cases of the fixed shuffle; or the worlds a generator makes. */
  cases: { min: 1, max: 1_000_000, integer: true, unit: "" },
  /** The seed generated worlds' seeds are derived from (`--seed`, MCP `seed`). */
  seed: { min: 0, max: 4_294_967_295, integer: true, unit: "" },
  /** Cells at once. */
  parallel: { min: 1, max: 64, integer: true, unit: "" },
  /** Budget per attempt, in dollars. */
  budgetDollars: { min: 0, max: 10_000, integer: false, unit: "$" },
  /** Cells of one experiment (candidates × cases × repetitions). */
  cells: { min: 1, max: 1_000_000, integer: true, unit: "" },
  /** Memory of a command candidate (bytes; flag in MiB). */
  memoryMiB: { min: 16, max: 1 << 20, integer: true, unit: "MiB" },
  /** Bytes a command candidate may write under its world (flag in MiB). */
  worldMiB: { min: 1, max: 1 << 20, integer: true, unit: "MiB" },
  /** Processes (and threads) of a command candidate at once. */
  processes: { min: 1, max: 1_000_000, integer: true, unit: "" },
  /** Open files per process of a command candidate. */
  openFiles: { min: 16, max: 1_048_576, integer: true, unit: "" },
  /** Commits listed by `room log --limit`. */
  logLimit: { min: 1, max: 100_000, integer: true, unit: "" },
  /** The least margin automatic calibration accepts (`--min-margin`, MCP `min_margin`). */
  minMargin: { min: 0, max: 1, integer: false, unit: "" },
  /** Asks per judge request when measuring the judge's consistency (`--k`). */
  judgeAsks: { min: 2, max: 20, integer: true, unit: "" },
  /** Seconds a worker waits without a cell before it ends (`dvergr worker --idle-exit`). */
  idleExitSeconds: { min: 0, max: 7 * 86_400, integer: true, unit: "s" },
  /** The MCP HTTP port (0: any free port). */
  port: { min: 0, max: 65535, integer: true, unit: "" },
  /** The error level of sequential stopping and of the planner's intervals. */
  alpha: { min: 0.0001, max: 0.5, integer: false, unit: "" },
  /** The equivalence margin of sequential stopping (a reward difference). */
  delta: { min: 0, max: 0.5, integer: false, unit: "" },
  /** The half-width a planned interval should have (a reward difference). */
  halfWidth: { min: 0.001, max: 1, integer: false, unit: "" },
} as const satisfies Record<string, Range>;

export type RangeName = keyof typeof RANGES;

/** Whether `n` is inside `range`. */
export function inRange(n: number, range: Range): boolean {
  return Number.isFinite(n) && n >= range.min && n <= range.max &&
    (!range.integer || Number.isSafeInteger(n));
}

/** "1000 to 86400000 ms" — how the README and the messages say a range. */
export function describeRange(range: Range): string {
  const unit = range.unit === "" ? "" : range.unit === "$" ? "" : ` ${range.unit}`;
  const fmt = (x: number) => (range.unit === "$" ? `$${x}` : String(x));
  return `${range.integer ? "a whole number " : ""}from ${fmt(range.min)} to ${
    fmt(range.max)
  }${unit}`;
}

/**
 * Returns `n` when it lies in the range `name`, else throws a USAGE error naming `what`
 * (a flag such as `--timeout-ms`, an MCP field, or a bundle file and key).
 */
export function checkRange(name: RangeName, n: number, what: string): number {
  const range: Range = RANGES[name];
  if (!inRange(n, range)) {
    throw new DvergrError("USAGE", `Cannot use ${what} ${n}: expected ${describeRange(range)}`, {
      hint: "The README's table of ranges lists every limit",
      details: { field: what, value: n, min: range.min, max: range.max },
    });
  }
  return n;
}

/**
 * A number written as text (a flag's value) in the range `name`, or a USAGE error naming
 * `what` (e.g. `--timeout-ms`) and the range, with `hint`.
 */
export function readRangeText(name: RangeName, text: string, what: string, hint: string): number {
  const range: Range = RANGES[name];
  const shape = range.integer ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
  const n = Number(text.trim());
  if (!shape.test(text.trim()) || !inRange(n, range)) {
    throw usageError(`Cannot use ${what} "${text}": expected ${describeRange(range)}`, hint);
  }
  return n;
}
