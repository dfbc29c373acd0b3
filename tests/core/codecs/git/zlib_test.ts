import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { deflateSync } from "node:zlib";
import { adler32, zlibDecode } from "../../../../core/codecs/git/zlib.ts";

Deno.test('adler32() gives the known checksum of "Wikipedia" and of nothing', () => {
  assert.equal(adler32(new TextEncoder().encode("Wikipedia")), 0x11e60398);
  assert.equal(adler32(new Uint8Array()), 1);
});

Deno.test("adler32() agrees with the checksum zlib writes at the end of a long stream", () => {
  const data = new Uint8Array(100_000).map((_, i) => (i * 7919) & 0xff);
  const z = deflateSync(data);
  assert.equal(adler32(data), Buffer.from(z).readUInt32BE(z.length - 4));
});

Deno.test("zlibDecode() copies out stored blocks and inflates compressed ones", () => {
  const data = new TextEncoder().encode("some text, ".repeat(10_000)); // several stored blocks
  for (const level of [0, 1, 9]) {
    assert.deepEqual(new Uint8Array(zlibDecode(deflateSync(data, { level }), data.length)), data);
  }
});

Deno.test("zlibDecode() of a stored stream with a wrong checksum falls back to zlib, which refuses it", () => {
  const data = new TextEncoder().encode("hello\n");
  const z = new Uint8Array(deflateSync(data, { level: 0 }));
  z[z.length - 1] ^= 0xff;
  assert.throws(() => zlibDecode(z, data.length));
});
