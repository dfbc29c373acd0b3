/**
 * core/sha256_block.ts holds the bytes core/sha256_block_source.ts assembles, and its memory
 * grows for a long text with the state kept.
 */
import assert from "node:assert/strict";
import { SHA256_BLOCK_MODULE, sha256Block } from "../../core/sha256_block.ts";
import { sha256BlockModule } from "../../core/sha256_block_source.ts";

Deno.test("the embedded SHA-256 module is the one its source assembles", () => {
  assert.equal(
    SHA256_BLOCK_MODULE,
    sha256BlockModule().toBase64(),
    "core/sha256_block_source.ts changed: put sha256BlockModule().toBase64() into " +
      "core/sha256_block.ts's SHA256_BLOCK_MODULE",
  );
});

Deno.test("blocks() grows the memory, and the state view follows it", () => {
  const block = sha256Block();
  block.state.set([1, 2, 3, 4, 5, 6, 7, 8]);
  const big = block.blocks(200_000);
  assert.ok(big.length >= 200_000);
  assert.deepEqual([...block.state], [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(block.blocks(10), big, "a shorter request keeps the view");
});
