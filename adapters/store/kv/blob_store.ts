/**
 * A blob store in a directory (`<home>/blobs/`): the embedded home's blobs beside its KV.
 *
 * Permissions: --allow-read and --allow-write on its directory.
 */
import { join } from "node:path";
import { blobId, type BlobStore, bytesOf } from "../../../core/ports/blob_store.ts";

const ID = /^[0-9a-f]{64}$/;

/** Blob ids a directory store remembers having written, at most. */
const KNOWN_MAX = 4096;

/**
 * Blobs up to this size are written with synchronous calls (an attempt's evidence, a few
 * KiB): an asynchronous call costs a thread's hand-off each (20-70 us of CPU, measured here),
 * more than writing the bytes. Larger ones do not hold the event loop while they are written.
 */
const SYNC_MAX_BYTES = 64 * 1024;

/**
 * A blob store in a directory: `<dir>/<first two hex digits>/<id>`. Each blob is written to
 * a temporary sibling and renamed into place, so a reader never sees a partial blob and a
 * process killed mid-write leaves at most a stray temporary file.
 */
export function dirBlobStore(dir: string): BlobStore {
  const pathOf = (id: string) => join(dir, id.slice(0, 2), id);
  /** Blobs this store wrote or found, and shard directories it made: no syscall to ask again. */
  const known = new Set<string>();
  const shards = new Set<string>();
  return {
    async put(content) {
      const bytes = bytesOf(content);
      const id = blobId(bytes);
      if (known.has(id)) return id;
      const path = pathOf(id);
      // No look first: a blob another process wrote has the same bytes, so renaming over it
      // changes nothing a reader can see (and costs less than a failed lstat per new blob).
      const shard = id.slice(0, 2);
      const small = bytes.length <= SYNC_MAX_BYTES;
      if (!shards.has(shard)) {
        if (small) Deno.mkdirSync(join(dir, shard), { recursive: true });
        else await Deno.mkdir(join(dir, shard), { recursive: true });
        shards.add(shard);
      }
      const tmp = `${path}.tmp-${crypto.randomUUID()}`;
      try {
        if (small) {
          Deno.writeFileSync(tmp, bytes);
          Deno.renameSync(tmp, path);
        } else {
          await Deno.writeFile(tmp, bytes);
          await Deno.rename(tmp, path);
        }
      } catch (e) {
        await Deno.remove(tmp).catch(() => {});
        throw e;
      }
      // Bounded: a run of 100,000 cells must not grow with its cells.
      if (known.size >= KNOWN_MAX) known.clear();
      known.add(id);
      return id;
    },
    async get(id) {
      if (!ID.test(id)) return null;
      try {
        return await Deno.readFile(pathOf(id));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    },
    async has(id) {
      if (!ID.test(id)) return false;
      try {
        await Deno.lstat(pathOf(id));
        return true;
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return false;
        throw e;
      }
    },
  };
}
