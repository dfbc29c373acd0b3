/**
 * The RoomStore contract (room_store_contract.ts) run against every implementation: git
 * repositories in a directory (what a home keeps) and memory.
 */
import { roomStoreContract } from "./room_store_contract.ts";
import { gitRoomStore } from "../../adapters/rooms/git/room_store.ts";
import { memoryRoomStore } from "../../adapters/rooms/memory/room_store.ts";

roomStoreContract("git", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-rooms-contract-" });
  return { rooms: gitRoomStore(dir), close: () => Deno.remove(dir, { recursive: true }) };
});

roomStoreContract(
  "memory",
  () => Promise.resolve({ rooms: memoryRoomStore(), close: () => Promise.resolve() }),
);
