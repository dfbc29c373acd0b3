/** Blobs in memory: the memory home's, and tests'. Needs no permission. */
import { blobId, type BlobStore, bytesOf } from "../../../core/ports/blob_store.ts";

/** An in-memory blob store (tests, dry runs). */
export function memoryBlobStore(): BlobStore & { size(): number } {
  const blobs = new Map<string, Uint8Array>();
  return {
    put(content) {
      const bytes = bytesOf(content);
      const id = blobId(bytes);
      if (!blobs.has(id)) blobs.set(id, bytes.slice());
      return Promise.resolve(id);
    },
    get(id) {
      const b = blobs.get(id);
      return Promise.resolve(b ? b.slice() : null);
    },
    has(id) {
      return Promise.resolve(blobs.has(id));
    },
    size: () => blobs.size,
  };
}
