/**
 * The world a production run starts from and the changes it leaves: pure functions over file
 * maps. The world is the room's tree without `workflows/` (the bundles, their checkers and
 * gold are never shown to a candidate, nor changed by a run); the changes are what differs
 * under the bundle's capture directories between the room and what the capture read back.
 */

/** Where a room keeps its bundles: never part of a run's world or of its changes. */
export const BUNDLES_DIR = "workflows/";

/** The world of a room's tree: world path ("/wiki/a.md") → text, without `workflows/`. */
export function worldOfRoom(files: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, text] of files) if (!path.startsWith(BUNDLES_DIR)) out["/" + path] = text;
  return out;
}

/** Whether a world path lies under one of the capture directories ("/wiki", or "/"). */
function captured(path: string, dirs: readonly string[]): boolean {
  return dirs.some((d) => {
    const dir = d.endsWith("/") ? d : d + "/";
    return path.startsWith(dir);
  });
}

/**
 * Room path → new text, or null for a removal: what the capture holds that the world did not
 * (or held otherwise), and the world's files under a capture directory the capture lacks.
 * Paths under `workflows/` are left out, and so are files the capture saw but did not keep
 * (`notKept`: too large, binary…), which are never taken for removed.
 */
export function captureChanges(
  world: Record<string, string>,
  capture: Record<string, string>,
  dirs: readonly string[],
  notKept: ReadonlySet<string> = new Set(),
): Map<string, string | null> {
  const changes = new Map<string, string | null>();
  for (const [path, text] of Object.entries(capture)) {
    const room = path.replace(/^\/+/, "");
    if (room.startsWith(BUNDLES_DIR) || !captured(path, dirs)) continue;
    if (world[path] !== text) changes.set(room, text);
  }
  for (const path of Object.keys(world)) {
    if (captured(path, dirs) && !(path in capture) && !notKept.has(path)) {
      changes.set(path.slice(1), null);
    }
  }
  return new Map([...changes].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
}
