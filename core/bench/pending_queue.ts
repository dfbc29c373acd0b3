/**
 * The cells a run still has to grade, in order, as a cursor over the plan's index range
 * (cells kept from earlier runs skipped as it passes) plus short lists of cells put back
 * (retries, cells another process held, a lease look that failed): a 100,000-cell run holds
 * no object per pending cell, only those it has taken. Pure.
 */
import type { ExperimentPlan } from "./experiment.ts";
import { CellState, type CellStates, type PendingCell } from "./resume.ts";

/** Indices start..end-1 not yet taken, or cells put back, taken from `at` on. */
type Segment = { start: number; end: number } | { items: PendingCell[]; at: number };

/** A queue of pending cells: the plan's cells not kept, in plan order, then those put back. */
export class PendingQueue {
  #segments: Segment[];
  #length: number;

  /**
   * The cells of `plan` whose state in `states` is not kept, each with its next try number
   * and `retries` extra tries. Cells for which `skip(index)` is true when they come to the
   * front leave the queue untaken (sequential stopping: cells no longer needed).
   */
  constructor(
    private readonly plan: ExperimentPlan,
    private readonly states: CellStates,
    private readonly retries: number,
    private readonly skip?: (index: number) => boolean,
  ) {
    let n = 0;
    for (const s of states.state) if (s !== CellState.Kept) n++;
    this.#length = n;
    this.#segments = n > 0 ? [{ start: 0, end: plan.cells.length }] : [];
  }

  /** Cells in the queue (those `skip` will pass over included). */
  get length(): number {
    return this.#length;
  }

  /** The next cell taken is one put back (unshift or push), not one of the plan's range. */
  putBackFirst(): boolean {
    const seg = this.#segments[0];
    return seg !== undefined && "items" in seg && seg.at < seg.items.length;
  }

  /** Takes up to `n` cells off the front (passing over those `skip` refuses). */
  take(n: number): PendingCell[] {
    const out: PendingCell[] = [];
    while (out.length < n && this.#length > 0 && this.#segments.length > 0) {
      const seg = this.#segments[0];
      if ("items" in seg) {
        while (out.length < n && seg.at < seg.items.length) {
          const item = seg.items[seg.at++];
          this.#length--;
          if (!this.skip?.(item.index)) out.push(item);
        }
        if (seg.at === seg.items.length) this.#segments.shift();
      } else {
        while (out.length < n && seg.start < seg.end) {
          const i = seg.start++;
          if (this.states.state[i] === CellState.Kept) continue;
          this.#length--;
          if (this.skip?.(i)) continue;
          out.push({
            index: i,
            cell: this.plan.cells.at(i),
            tryNo: this.states.tryNo[i] + 1,
            retriesLeft: this.retries,
          });
        }
        if (seg.start === seg.end) this.#segments.shift();
      }
    }
    if (this.#length === 0) this.#segments = [];
    return out;
  }

  /** Puts cells back at the front, in this order. */
  unshift(items: PendingCell[]): void {
    if (items.length === 0) return;
    this.#segments.unshift({ items: [...items], at: 0 });
    this.#length += items.length;
  }

  /** Puts a cell at the end. */
  push(item: PendingCell): void {
    const last = this.#segments.at(-1);
    if (last && "items" in last) last.items.push(item);
    else this.#segments.push({ items: [item], at: 0 });
    this.#length++;
  }

  /**
   * Moves the front of the queue to its end, cut at `fraction` (0 ≤ fraction < 1) of its span
   * (cells kept from earlier runs still inside a range count towards the span).
   */
  rotate(fraction: number): void {
    const span = (s: Segment) => "items" in s ? s.items.length - s.at : s.end - s.start;
    let cut = Math.floor(fraction * this.#segments.reduce((n, s) => n + span(s), 0));
    const moved: Segment[] = [];
    while (this.#segments.length > 1 && cut >= span(this.#segments[0])) {
      const seg = this.#segments.shift()!;
      cut -= span(seg);
      moved.push(seg);
    }
    const seg = this.#segments[0];
    if (seg && cut > 0) {
      if ("items" in seg) {
        moved.push({ items: seg.items.slice(seg.at, seg.at + cut), at: 0 });
        seg.at += cut;
      } else {
        moved.push({ start: seg.start, end: seg.start + cut });
        seg.start += cut;
      }
    }
    this.#segments.push(...moved);
  }
}
