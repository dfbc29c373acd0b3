/**
 * The home port: where dvergr keeps everything of a benchmark between runs — its records
 * (StateStore), rooms (RoomStore) and blobs (BlobStore) — and where this process makes
 * attempt worlds. Opened by adapters/store/kv/home.ts (the embedded home on disk), by
 * adapters/store/postgres/home.ts (records and blobs in a PostgreSQL store shared by many
 * machines, rooms and worlds on this one) or in memory (tests); adapters/compose.ts
 * (openHomeAt) chooses.
 */
import type { BlobStore } from "./blob_store.ts";
import type { ExperimentQueue } from "./experiment_queue.ts";
import type { RoomStore } from "./room_store.ts";
import type { StateStore } from "./state_store.ts";

export interface Home {
  /** Absolute directory of the home (a temporary one for a memory home). */
  dir: string;
  state: StateStore;
  rooms: RoomStore;
  blobs: BlobStore;
  /** Where this process creates attempt worlds. */
  worldsDir: string;
  /** Path of the optional named-candidates file. */
  candidatesFile: string;
  /** Experiments open to workers: only a store shared by machines has it. */
  queue?: ExperimentQueue;
  /** Where the records are, for messages: the home's directory, or the store's URL. */
  where?: string;
  close(): Promise<void>;
}
