/**
 * A schedule stored by `dvergr deploy`: a room's bundle run by one candidate every so often.
 * Its slots are `anchor + k × every`; `lastSlot` is the latest slot a process claimed (and
 * started a run for), so each slot is started once whoever ticks.
 */
export interface ScheduleRecord {
  /** `s-` then 8 hex digits. */
  id: string;
  room: string;
  name: string;
  candidate: string;
  params: Record<string, string>;
  /** The interval in milliseconds (at least one minute). */
  everyMs: number;
  /** `--at HH:MM` (UTC) as given, or null. */
  at: string | null;
  /** The first slot (ms since the epoch). */
  anchor: number;
  createdAt: string;
  /** The latest slot claimed (ms), or null before the first run. */
  lastSlot: number | null;
  /** The run started for the latest slot. */
  lastRun: string | null;
  cancelledAt: string | null;
}

/**
 * The schedule with slot `slot` claimed for run `run`, or null when it cannot be: cancelled,
 * or a slot as late or later claimed already. Every store's claimSlot applies it atomically.
 */
export function withSlotClaimed(
  s: ScheduleRecord,
  slot: number,
  run: string,
): ScheduleRecord | null {
  return s.cancelledAt === null && (s.lastSlot === null || s.lastSlot < slot)
    ? { ...s, lastSlot: slot, lastRun: run }
    : null;
}

/** The schedule cancelled at `at`, or null when it was cancelled already. */
export function withCancel(s: ScheduleRecord, at: string): ScheduleRecord | null {
  return s.cancelledAt === null ? { ...s, cancelledAt: at } : null;
}
