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
