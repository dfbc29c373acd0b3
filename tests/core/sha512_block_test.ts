/**
 * core/sha512_block.ts holds the bytes core/sha512_block_source.ts assembles, and its
 * compress() is SHA-512's block function (the standard's initial state and one padded block).
 */
import assert from "node:assert/strict";
import { SHA512_BLOCK_MODULE, sha512Block } from "../../core/sha512_block.ts";
import { sha512BlockModule } from "../../core/sha512_block_source.ts";

Deno.test("the embedded module is the one its source assembles", () => {
  assert.equal(
    SHA512_BLOCK_MODULE,
    sha512BlockModule().toBase64(),
    "core/sha512_block_source.ts changed: put sha512BlockModule().toBase64() into " +
      "core/sha512_block.ts's SHA512_BLOCK_MODULE",
  );
});

Deno.test("compress(1) of the padded block of 'abc' from the initial state gives its SHA-512", () => {
  const block = sha512Block();
  const initial = [
    0x6a09e667f3bcc908n,
    0xbb67ae8584caa73bn,
    0x3c6ef372fe94f82bn,
    0xa54ff53a5f1d36f1n,
    0x510e527fade682d1n,
    0x9b05688c2b3e6c1fn,
    0x1f83d9abfb41bd6bn,
    0x5be0cd19137e2179n,
  ];
  const state = new BigUint64Array(block.state.buffer, block.state.byteOffset, 8);
  state.set(initial);
  block.blocks.fill(0, 0, 128);
  block.blocks.set([0x61, 0x62, 0x63, 0x80]);
  block.blocks[127] = 24; // the length in bits
  block.compress(1);
  const hex = Array.from(state, (w) => w.toString(16).padStart(16, "0")).join("");
  assert.equal(
    hex,
    "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a" +
      "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
  );
});
