/**
 * The blob store port: content-addressed bytes (large evidence: captured files, candidate
 * transcripts, values too large for a state record). A blob's id is the SHA-256 of its
 * bytes (hex), so writing the same content twice stores it once. Implemented by a
 * directory of files (adapters/store/kv/blob_store.ts) and in memory
 * (adapters/store/memory/blob_store.ts); tests/ports/blob_store_contract.ts says what each
 * must do.
 */
import { createHash } from "node:crypto";

export interface BlobStore {
  /** Stores bytes or UTF-8 text and returns its id (SHA-256, hex). Idempotent. */
  put(content: Uint8Array | string): Promise<string>;
  /** The blob's bytes, or null when no blob has that id. */
  get(id: string): Promise<Uint8Array | null>;
  has(id: string): Promise<boolean>;
}

/** The SHA-256 (hex) of bytes or UTF-8 text: the id a blob store gives them. */
export function blobId(content: Uint8Array | string): string {
  return createHash("sha256").update(
    typeof content === "string" ? new TextEncoder().encode(content) : content,
  ).digest("hex");
}

/** Bytes as given, or UTF-8 text encoded. */
export function bytesOf(content: Uint8Array | string): Uint8Array {
  return typeof content === "string" ? new TextEncoder().encode(content) : content;
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
