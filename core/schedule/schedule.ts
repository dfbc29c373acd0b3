/**
 * Schedule arithmetic, pure: an interval (`30m`, `1h`, `1d`, `7d`; at least one minute), an
 * optional time of day (`--at HH:MM`, UTC), the first slot, the slot due at a moment and the
 * next run. Slots are `anchor + k × every`; at a moment only the latest slot that has come is
 * due, so a schedule missed for a week runs once, not once per missed slot.
 */
import type { ScheduleRecord } from "./records.ts";

export const MINUTE_MS = 60_000;
const UNITS: Record<string, number> = {
  m: MINUTE_MS,
  h: 60 * MINUTE_MS,
  d: 1440 * MINUTE_MS,
  w: 10_080 * MINUTE_MS,
};
/** The longest interval: a year. */
export const MAX_EVERY_MS = 365 * UNITS.d;

/** An interval's milliseconds, or why the text is not one. */
export function readEvery(text: string): { ms: number } | { problem: string } {
  const m = /^(\d{1,6})(m|h|d|w)$/.exec(text.trim());
  if (!m) return { problem: "expected a number and a unit: m, h, d or w (e.g. 30m, 1h, 1d, 7d)" };
  const ms = Number(m[1]) * UNITS[m[2]];
  if (ms < MINUTE_MS) return { problem: "the shortest interval is one minute (1m)" };
  if (ms > MAX_EVERY_MS) return { problem: "the longest interval is a year (365d)" };
  return { ms };
}

/** Minutes after midnight UTC of `HH:MM`, or null when the text is not such a time. */
export function readAt(text: string): number | null {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text.trim());
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

/** The first slot: the creation moment, or with `at` the first such time of day from it on. */
export function firstSlot(createdMs: number, atMinutes: number | null): number {
  if (atMinutes === null) return createdMs;
  const day = Math.floor(createdMs / UNITS.d) * UNITS.d;
  const today = day + atMinutes * MINUTE_MS;
  return today >= createdMs ? today : today + UNITS.d;
}

/** The latest slot at or before `now`, or null before the first. */
function latestSlot(s: Pick<ScheduleRecord, "anchor" | "everyMs">, now: number): number | null {
  if (now < s.anchor) return null;
  return s.anchor + Math.floor((now - s.anchor) / s.everyMs) * s.everyMs;
}

/** The slot due at `now` (the latest that has come and was not claimed), or null. */
export function dueSlot(s: ScheduleRecord, now: number): number | null {
  if (s.cancelledAt !== null) return null;
  const slot = latestSlot(s, now);
  return slot !== null && (s.lastSlot === null || slot > s.lastSlot) ? slot : null;
}

/** When the schedule runs next, as of `now` (a due slot: now); null when cancelled. */
export function nextRun(s: ScheduleRecord, now: number): number | null {
  if (s.cancelledAt !== null) return null;
  const due = dueSlot(s, now);
  if (due !== null) return due;
  const slot = latestSlot(s, now);
  return slot === null ? s.anchor : slot + s.everyMs;
}

/** An interval as text: days, hours or minutes, the largest that divides it (`7d`, `90m`). */
export function everyText(ms: number): string {
  for (const u of ["d", "h", "m"]) if (ms % UNITS[u] === 0) return `${ms / UNITS[u]}${u}`;
  return `${ms}ms`;
}
