/**
 * The memory home: the Home port over the memory stores (tests, and any run that keeps
 * nothing). Permissions: --allow-read and --allow-write on the system's temporary directory
 * (attempt worlds).
 */
import { join } from "node:path";
import type { Home } from "../../../core/ports/home.ts";
import { memoryRoomStore } from "../../rooms/memory/room_store.ts";
import { memoryBlobStore } from "./blob_store.ts";
import { memoryStateStore } from "./state_store.ts";

/**
 * A home whose records, rooms and blobs live in memory (the memory state, room and blob
 * stores); only attempt worlds touch the disk, in a temporary directory removed on close.
 */
export async function memoryHome(): Promise<Home> {
  const state = memoryStateStore(memoryBlobStore());
  const tmp = await Deno.makeTempDir({ prefix: "dvergr-home-" });
  return {
    dir: tmp,
    state,
    rooms: memoryRoomStore(),
    blobs: state.blobs,
    worldsDir: join(tmp, "worlds"),
    candidatesFile: join(tmp, "candidates.edn"),
    async close() {
      state.close();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    },
  };
}
