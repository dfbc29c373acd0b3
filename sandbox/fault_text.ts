/**
 * The pieces of a fault's wording both sandbox engines use, and the Fault they throw inside
 * themselves (returned to the pool as a value, never thrown past an engine). No permissions.
 */
import type { CheckerFault } from "../core/checker.ts";

/** A fault found while running; thrown inside an engine only, returned as a value. */
export class Fault {
  constructor(readonly fault: CheckerFault, readonly message: string) {}
}

/** "12 MiB". */
export function mib(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MiB`;
}

/** `s`, cut to `max` characters with an ellipsis. */
export function clip(s: string, max = 500): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** "RangeError: message" of a thrown value. */
export function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
