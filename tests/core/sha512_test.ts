/** core/sha512.ts gives node:crypto's SHA-512, for every length around the block edges and in parts. */
import assert from "node:assert/strict";
import { testBytes as bytes } from "../helpers/test_bytes.ts";
import { createHash } from "node:crypto";
import { Sha512, sha512 } from "../../core/sha512.ts";

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

Deno.test("sha512() equals node:crypto's for lengths 0 to 400 and a few long inputs", () => {
  // Long inputs too: more blocks than one call of the block function takes (MAX_BLOCKS).
  for (const n of [...Array(401).keys(), 1000, 4096, 65_537, (2 << 20) + 3]) {
    const b = bytes(n, n);
    assert.equal(hex(sha512(b)), createHash("sha512").update(b).digest("hex"), `length ${n}`);
  }
  assert.equal(
    hex(sha512(new TextEncoder().encode("abc"))),
    "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a" +
      "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
  );
});

Deno.test("Sha512 fed in parts, from subarrays, equals the hash of the whole", () => {
  const whole = bytes(1500, 7);
  const expected = createHash("sha512").update(whole).digest("hex");
  for (const step of [1, 3, 64, 127, 128, 129, 300]) {
    const h = new Sha512();
    for (let i = 0; i < whole.length; i += step) h.update(whole.subarray(i, i + step));
    assert.equal(hex(h.digest()), expected, `step ${step}`);
  }
  assert.equal(hex(sha512(whole.subarray(0, 700), whole.subarray(700))), expected);
});

Deno.test("sha512() of parts of more than a MiB equals the hash of the whole", () => {
  const whole = bytes((1 << 20) + 77, 3);
  const expected = createHash("sha512").update(whole).digest("hex");
  assert.equal(hex(sha512(whole.subarray(0, 1000), whole.subarray(1000))), expected);
  assert.equal(hex(new Sha512().update(whole).digest()), expected);
});

Deno.test("Sha512 fed byte by byte between parts, and reset and used again, equals node:crypto's", () => {
  const h = new Sha512();
  for (const n of [0, 1, 111, 112, 127, 128, 129, 255, 256, 300]) {
    const data = bytes(n, n + 7);
    // Parts and single bytes in turn, across the block edges.
    h.reset();
    for (let i = 0; i < n;) {
      if (i % 3 === 0) h.byte(data[i++]);
      else {
        const end = Math.min(n, i + 1 + (i % 50));
        h.update(data.subarray(i, end));
        i = end;
      }
    }
    // The hasher was used for the previous length: reset() forgot it.
    assert.equal(hex(h.digest()), createHash("sha512").update(data).digest("hex"), `n=${n}`);
  }
});
