/** core/path.ts's functions that need the working directory, given the process's. */
import { relativeFrom, resolveFrom } from "../../core/path.ts";

/** The absolute path the segments name, from the process's working directory (node:path's resolve). */
export function resolve(...parts: string[]): string {
  return resolveFrom(Deno.cwd(), ...parts);
}

/** The path from `from` to `to` (node:path's relative). */
export function relative(from: string, to: string): string {
  return relativeFrom(Deno.cwd(), from, to);
}
