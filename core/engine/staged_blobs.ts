/**
 * The blobs of one attempt, held until its record is committed: a small blob (the evidence
 * of a fast cell is well under a kilobyte) waits here and is stored in KV in the record's
 * own commit, instead of a file, a temporary name and a rename per cell; a large one goes
 * to the home's blob store at once, as before. Either way a record never lands before a
 * blob it refers to.
 */
import { blobId, type BlobStore } from "../ports/blob_store.ts";
import { SMALL_BLOB_BYTES } from "../ports/state_store.ts";

export interface StagedBlobs extends BlobStore {
  /** The small blobs put so far, to commit with the record (and forgets them). */
  take(): Map<string, Uint8Array>;
}

/** Stages the small blobs of one attempt in front of the home's blob store `under`. */
export function stagedBlobs(under: BlobStore): StagedBlobs {
  let staged = new Map<string, Uint8Array>();
  const encoder = new TextEncoder();
  return {
    put(content) {
      const bytes = typeof content === "string" ? encoder.encode(content) : content;
      if (bytes.length > SMALL_BLOB_BYTES) return under.put(bytes);
      const id = blobId(bytes);
      staged.set(id, bytes.slice());
      return Promise.resolve(id);
    },
    get(id) {
      const bytes = staged.get(id);
      return bytes ? Promise.resolve(bytes.slice()) : under.get(id);
    },
    has(id) {
      return staged.has(id) ? Promise.resolve(true) : under.has(id);
    },
    take() {
      const out = staged;
      staged = new Map();
      return out;
    },
  };
}
