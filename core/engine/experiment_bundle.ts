/**
 * The bundle an experiment ran, read back: from its room (`workflows/<bundle name>/` when the
 * room still holds that version, the same content id), else from the store's blobs by the
 * experiment's file manifest (a shared store, read on a machine without the room); null when
 * neither has it. Also writes that manifest: each file a blob, the manifest a blob of path →
 * blob id.
 */
import type { Bundle } from "../bundle/types.ts";
import { parseBundleLazily } from "../bundle/parse_lazily.ts";
import { type FileBundle, type FileMap, filesUnder } from "../bundle/file_map.ts";
import type { RoomStore } from "../ports/room_store.ts";
import type { ExperimentMeta } from "../ports/state_store.ts";
import { type BlobStore, getJson, putJson } from "../ports/blob_store.ts";

/** Stores a bundle's files as blobs; the blob id of its manifest (path → blob id). */
export async function putBundleFiles(blobs: BlobStore, files: FileMap): Promise<string> {
  const manifest: Record<string, string> = {};
  for (const [path, text] of [...files].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    manifest[path] = await blobs.put(text);
  }
  return await putJson(blobs, manifest);
}

/** A bundle's files from their manifest's blob id; null when a blob is missing. */
export async function bundleFilesOf(
  blobs: BlobStore,
  name: string,
  manifestId: string,
): Promise<FileBundle | null> {
  const manifest = await getJson<Record<string, string>>(blobs, manifestId);
  if (manifest === null) return null;
  const files: FileMap = new Map();
  const decoder = new TextDecoder();
  for (const [path, id] of Object.entries(manifest)) {
    const bytes = await blobs.get(id);
    if (bytes === null) return null;
    files.set(path, decoder.decode(bytes));
  }
  return { name, files };
}

async function parsedIfSame(fb: FileBundle, meta: ExperimentMeta): Promise<Bundle | null> {
  try {
    const bundle = await parseBundleLazily(fb);
    return bundle.id === meta.bundleId ? bundle : null;
  } catch {
    return null;
  }
}

/** The bundle an experiment ran, from its room or the store's blobs; null when neither has it. */
export async function experimentBundle(
  home: { rooms: RoomStore; blobs: BlobStore },
  meta: ExperimentMeta,
): Promise<Bundle | null> {
  const prefix = `workflows/${meta.bundleName}`;
  const inRoom = await home.rooms.hasRoom(meta.room).catch(() => false)
    ? filesUnder(await home.rooms.readFiles(meta.room, prefix), prefix)
    : new Map<string, string>();
  const fromRoom = inRoom.size > 0
    ? await parsedIfSame({ name: meta.bundleName, files: inRoom }, meta)
    : null;
  if (fromRoom !== null || meta.bundleFiles === undefined) return fromRoom;
  const stored = await bundleFilesOf(home.blobs, meta.bundleName, meta.bundleFiles);
  return stored === null ? null : await parsedIfSame(stored, meta);
}
