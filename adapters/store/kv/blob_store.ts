/**
 * Content-addressed blobs: large evidence (captured files, candidate transcripts) that
 * does not fit in a KV value. A blob's id is the SHA-256 of its bytes (hex), so writing
 * the same content twice stores it once.
 *
 * Permissions: the directory store needs --allow-read and --allow-write on its directory.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

export interface BlobStore {
  /** Stores bytes or UTF-8 text and returns its id (SHA-256, hex). Idempotent. */
  put(content: Uint8Array | string): Promise<string>;
  /** The blob's bytes, or null when no blob has that id. */
  get(id: string): Promise<Uint8Array | null>;
  has(id: string): Promise<boolean>;
}

const ID = /^[0-9a-f]{64}$/;

/** The SHA-256 (hex) of bytes or UTF-8 text: the id a blob store gives them. */
export function blobId(content: Uint8Array | string): string {
  return createHash("sha256").update(
    typeof content === "string" ? new TextEncoder().encode(content) : content,
  ).digest("hex");
}

function bytesOf(content: Uint8Array | string): Uint8Array {
  return typeof content === "string" ? new TextEncoder().encode(content) : content;
}

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

/** Blob ids a directory store remembers having written, at most. */
const KNOWN_MAX = 4096;

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
      if (!shards.has(shard)) {
        await Deno.mkdir(join(dir, shard), { recursive: true });
        shards.add(shard);
      }
      const tmp = `${path}.tmp-${crypto.randomUUID()}`;
      try {
        await Deno.writeFile(tmp, bytes);
        await Deno.rename(tmp, path);
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

/** Stores a JSON value as a blob (UTF-8 JSON text) and returns its id. */
export function putJson(blobs: BlobStore, value: unknown): Promise<string> {
  return blobs.put(JSON.stringify(value));
}

/** Reads a JSON blob, or null when it is absent. */
export async function getJson<T = unknown>(blobs: BlobStore, id: string): Promise<T | null> {
  const bytes = await blobs.get(id);
  return bytes === null ? null : JSON.parse(new TextDecoder().decode(bytes)) as T;
}
