/** core/sha1.ts gives node:crypto's SHA-1, for every length around the block edges and in parts. */
import assert from "node:assert/strict";
import { testBytes as bytes } from "../helpers/test_bytes.ts";
import { createHash } from "node:crypto";
import { Sha1 } from "../../core/sha1.ts";
import { objectId } from "../../core/codecs/git/objects.ts";

const native = (data: Uint8Array) => createHash("sha1").update(data).digest("hex");

Deno.test("Sha1 equals node:crypto's for lengths 0 to 300 and a long input, whole and in parts", () => {
  const h = new Sha1();
  for (const n of [...Array(301).keys(), 5000]) {
    const data = bytes(n, n);
    assert.equal(h.reset().update(data).hexDigest(), native(data), `n=${n}`);
    // Single bytes and parts of every size in turn, across the block edges; reset() forgot
    // the hash before.
    h.reset();
    for (let i = 0; i < n;) {
      if (i % 3 === 0) h.byte(data[i++]);
      else {
        const end = Math.min(n, i + 1 + (i % 70));
        h.update(data.subarray(i, end));
        i = end;
      }
    }
    assert.equal(h.hexDigest(), native(data), `n=${n} in parts`);
  }
});

Deno.test("objectId() is git's: SHA-1 of the header and the content, small and native-sized", () => {
  // `git hash-object` of "hello\n" and of the empty blob.
  const hello = new TextEncoder().encode("hello\n");
  assert.equal(objectId("blob", hello), "ce013625030ba8dba906f756967f9e9ca394464a");
  assert.equal(objectId("blob", new Uint8Array()), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  for (const n of [55, 56, 63, 64, 65, 1000, 1 << 16, (1 << 16) + 1]) {
    const data = bytes(n, 3);
    const expected = createHash("sha1").update(`tree ${n}\0`).update(data).digest("hex");
    assert.equal(objectId("tree", data), expected, `n=${n}`);
  }
});
