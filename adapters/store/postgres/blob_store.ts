/**
 * Blobs in the PostgreSQL store (`dvergr_blobs`, bytea by content id), so workers on any
 * machine read the evidence and bundle files others wrote. Permissions: --allow-net to the
 * server.
 */
import { blobId, type BlobStore } from "../../../core/ports/blob_store.ts";
import type { Sql } from "./connect.ts";

function bytesOf(content: Uint8Array | string): Uint8Array {
  return typeof content === "string" ? new TextEncoder().encode(content) : content;
}

/** A blob store on the store's `dvergr_blobs` table. */
export function postgresBlobStore(sql: Sql): BlobStore {
  return {
    async put(content) {
      const bytes = bytesOf(content);
      const id = blobId(bytes);
      await sql`insert into dvergr_blobs (id, bytes) values (${id}, ${bytes})
        on conflict (id) do nothing`;
      return id;
    },
    async get(id) {
      const rows = await sql`select bytes from dvergr_blobs where id = ${id}`;
      return rows.length === 0 ? null : new Uint8Array(rows[0].bytes as Uint8Array);
    },
    async has(id) {
      const rows = await sql`select 1 from dvergr_blobs where id = ${id}`;
      return rows.length > 0;
    },
  };
}
