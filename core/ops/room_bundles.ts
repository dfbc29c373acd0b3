/**
 * Bundles in rooms: a bundle is the directory `workflows/<name>/` of a room's workspace,
 * present when it holds `workflow.edn` (docs/compatibility.md §1.1). Also the path rule that every
 * writer into a room shares.
 *
 * Works on a RoomStore, so it needs whatever permissions the store needs.
 */
import { DvergrError } from "../errors.ts";
import { type FileBundle, filesUnder, relativePathProblem } from "../bundle/file_map.ts";
import type { RoomStore } from "../ports/room_store.ts";
import { checkBundleName } from "../bundle/bundle_name.ts";
import { longSegmentProblem } from "../bundle/export.ts";

/**
 * Why a path may not be written into a room, or null: the bundle path rules (relative,
 * normalised, no `..`, NUL or backslash, no segment taken for `.git`: a clone of the room
 * would refuse such a tree), well-formed text, no overlong segment.
 */
export function roomPathProblem(path: string): string | null {
  const why = relativePathProblem(path, "room");
  if (why) return why;
  if (!path.isWellFormed()) return "is not UTF-8 text (it holds an unpaired surrogate)";
  return longSegmentProblem(path);
}

/**
 * The file of a room that stands where directory `dir` or one of its parents would go
 * (a file `workflows/x` for the directory `workflows/x/`), or null. Writing into the
 * directory would replace that file. Reads the directory, and its parents only while they
 * hold nothing.
 */
export async function fileInTheWay(
  rooms: RoomStore,
  room: string,
  dir: string,
): Promise<string | null> {
  if ((await rooms.readFiles(room, dir)).size > 0) return null;
  const segments = dir.split("/");
  for (let i = segments.length - 1; i >= 1; i--) {
    const parent = segments.slice(0, i).join("/");
    const path = segments.slice(0, i + 1).join("/");
    const siblings = await rooms.readFiles(room, parent);
    if (siblings.has(path)) return path;
    // A parent holding files is a directory: nothing above it is a file.
    if (siblings.size > 0) return null;
  }
  return (await rooms.readFiles(room)).has(segments[0]) ? segments[0] : null;
}

/** The directory of bundle `name` in a room: `workflows/<name>`. */
export function bundleDir(name: string): string {
  return `workflows/${name}`;
}

/** The names of a room's bundles (every `workflows/<name>/workflow.edn`), sorted. */
export async function listRoomBundles(rooms: RoomStore, room: string): Promise<string[]> {
  const files = await rooms.readFiles(room, "workflows");
  return bundleNamesIn(filesUnder(files, "workflows"));
}

/** Bundle names among paths relative to `workflows/`. */
function bundleNamesIn(files: Map<string, string>): string[] {
  const names: string[] = [];
  for (const p of files.keys()) {
    const m = /^([^/]+)\/workflow\.edn$/.exec(p);
    if (m) names.push(m[1]);
  }
  return names.sort();
}

/**
 * Every bundle of a room with its files, read in one pass over `workflows/`, sorted by
 * name. A directory without workflow.edn is not a bundle.
 */
export async function readRoomBundles(rooms: RoomStore, room: string): Promise<FileBundle[]> {
  const all = filesUnder(await rooms.readFiles(room, "workflows"), "workflows");
  return bundleNamesIn(all).map((name) => ({ name, files: filesUnder(all, name) }));
}

/**
 * The bundle `name` of a room, paths relative to its directory. Throws NOT_FOUND when the
 * room has no `workflows/<name>/` files (naming the bundles it does have).
 */
export async function readRoomBundle(
  rooms: RoomStore,
  room: string,
  name: string,
): Promise<FileBundle> {
  checkBundleName(name);
  const files = filesUnder(await rooms.readFiles(room, bundleDir(name)), bundleDir(name));
  if (files.size === 0) {
    const names = await listRoomBundles(rooms, room);
    throw new DvergrError(
      "NOT_FOUND",
      `Cannot read bundle "${room}/${name}": no workflow ${name} in room ${room} (expected ${
        bundleDir(name)
      }/)`,
      {
        hint: names.length > 0
          ? `Its bundles: ${names.join(", ")}`
          : `Room ${room} has no bundles yet; import one with \`dvergr import FILE --room ${room}\``,
        details: { room, name, bundles: names },
      },
    );
  }
  return { name, files };
}
