/**
 * The image files' frame (sandbox/image_frame.ts), shared by the QuickJS and the Clojure
 * images: what is framed unframes to the same image and hash; short, long and foreign bytes
 * are no image.
 */
import assert from "node:assert/strict";
import { frameHeader, sameHash, unframeImage } from "../../sandbox/image_frame.ts";

const MAGIC = new TextEncoder().encode("TESTIMG1");

function framed(image: Uint8Array, hash: Uint8Array): Uint8Array {
  const head = frameHeader(MAGIC, hash, image.byteLength);
  const out = new Uint8Array(head.byteLength + image.byteLength);
  out.set(head);
  out.set(image, head.byteLength);
  return out;
}

Deno.test("unframeImage() gives back the framed image and hash; short, long and foreign bytes are none", () => {
  const image = new Uint8Array(1000).map((_, i) => i % 251);
  const hash = new Uint8Array(32).map((_, i) => 255 - i);
  const bytes = framed(image, hash);
  const back = unframeImage(bytes, MAGIC);
  assert.ok(back);
  assert.deepEqual([...back.image], [...image]);
  assert.ok(sameHash(back.hash, hash));
  assert.equal(unframeImage(bytes.subarray(0, bytes.byteLength - 1), MAGIC), null);
  const longer = new Uint8Array(bytes.byteLength + 1);
  longer.set(bytes);
  assert.equal(unframeImage(longer, MAGIC), null);
  assert.equal(unframeImage(bytes, new TextEncoder().encode("OTHERIM1")), null);
  assert.equal(unframeImage(bytes.subarray(0, 20), MAGIC), null);
  // An empty image frames too; a view into a larger buffer unframes from its own offset.
  assert.equal(unframeImage(framed(new Uint8Array(0), hash), MAGIC)?.image.byteLength, 0);
  const padded = new Uint8Array(bytes.byteLength + 7);
  padded.set(bytes, 7);
  assert.deepEqual([...unframeImage(padded.subarray(7), MAGIC)!.image], [...image]);
});

Deno.test("frameHeader() writes the length as 64 bits, little-endian", () => {
  const head = frameHeader(MAGIC, new Uint8Array(32), 2 ** 32 + 5);
  const view = new DataView(head.buffer);
  assert.equal(view.getUint32(40, true), 5);
  assert.equal(view.getUint32(44, true), 1);
  assert.ok(!sameHash(new Uint8Array(32), new Uint8Array(31)));
});
