/**
 * The BlobStore contract (core/ports/blob_store.ts): what every implementation must do, as
 * one suite run against each of them by tests/ports/blob_store_test.ts.
 *
 * A new implementation plugs in with one line there:
 *
 * ```ts
 * blobStoreContract("myBlobs", async () => ({ blobs: await openMyBlobs(), close: async () => {} }));
 * ```
 *
 * The factory gives a fresh, empty store per test and a `close` that removes what it made;
 * `{ ignore: true }` skips a store that cannot run on this host.
 *
 * Covered: ids are the SHA-256 of the bytes (text as UTF-8), writing twice stores once and
 * gives the same id, bytes come back whole (empty, binary, large), absent and malformed ids
 * read as absent, and what a caller does to bytes it gave or got does not reach the store.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { BlobStore } from "../../core/ports/blob_store.ts";

export interface BlobStoreSubject {
  blobs: BlobStore;
  close(): Promise<void>;
}

export type BlobStoreFactory = () => Promise<BlobStoreSubject>;

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Registers the contract's tests for one implementation. */
export function blobStoreContract(
  name: string,
  open: BlobStoreFactory,
  opts: { ignore?: boolean } = {},
): void {
  const test = (what: string, fn: (b: BlobStore) => Promise<void>) =>
    Deno.test({
      name: `BlobStore contract [${name}]: ${what}`,
      ignore: opts.ignore,
      async fn() {
        const subject = await open();
        try {
          await fn(subject.blobs);
        } finally {
          await subject.close();
        }
      },
    });

  test("put() names bytes by their SHA-256 and text by its UTF-8 bytes' SHA-256", async (b) => {
    const text = "Grüße, blobs";
    const bytes = new TextEncoder().encode(text);
    const id = await b.put(text);
    assert.equal(id, sha256(bytes));
    assert.equal(await b.put(bytes), id);
    assert.deepEqual(await b.get(id), bytes);
    assert.equal(await b.has(id), true);
  });

  test("put() is idempotent and keeps bytes whole: empty, binary, a few MiB", async (b) => {
    const binary = new Uint8Array(256).map((_, i) => i);
    const large = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7919) % 251);
    for (const content of [new Uint8Array(0), binary, large]) {
      const id = await b.put(content);
      assert.equal(await b.put(content), id);
      assert.equal(id, sha256(content));
      const back = await b.get(id);
      assert.equal(back?.length, content.length);
      assert.ok(back!.every((x, i) => x === content[i]));
    }
  });

  test("get() and has() say absent for an unknown id and for one that is no id at all", async (b) => {
    const unknown = sha256(new TextEncoder().encode("never stored"));
    assert.equal(await b.get(unknown), null);
    assert.equal(await b.has(unknown), false);
    for (const bad of ["", "../etc/passwd", "ABC", unknown.toUpperCase().slice(0, 10)]) {
      assert.equal(await b.get(bad), null, bad);
      assert.equal(await b.has(bad), false, bad);
    }
  });

  test("bytes a caller changes after put() or get() stay as they were in the store", async (b) => {
    const given = new Uint8Array([1, 2, 3, 4]);
    const id = await b.put(given);
    given[0] = 99;
    const got = (await b.get(id))!;
    assert.deepEqual([...got], [1, 2, 3, 4]);
    got[1] = 99;
    assert.deepEqual([...(await b.get(id))!], [1, 2, 3, 4]);
  });
}
