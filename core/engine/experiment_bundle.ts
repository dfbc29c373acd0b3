/**
 * The bundle an experiment ran, read back from its room: `workflows/<bundle name>/` when the
 * room still holds that version (the same content id), else null.
 */
import type { Bundle } from "../bundle/types.ts";
import { parseBundle } from "../bundle/parse.ts";
import { filesUnder } from "../bundle/file_map.ts";
import type { RoomStore } from "../ports/room_store.ts";
import type { ExperimentMeta } from "../ports/state_store.ts";

/** The room's bundle an experiment ran, when the room still holds that version of it. */
export async function experimentBundle(
  rooms: RoomStore,
  meta: ExperimentMeta,
): Promise<Bundle | null> {
  const prefix = `workflows/${meta.bundleName}`;
  const files = filesUnder(await rooms.readFiles(meta.room, prefix), prefix);
  if (files.size === 0) return null;
  try {
    const bundle = parseBundle({ name: meta.bundleName, files });
    return bundle.id === meta.bundleId ? bundle : null;
  } catch {
    return null;
  }
}
