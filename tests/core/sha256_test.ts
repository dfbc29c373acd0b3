import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../core/sha256.ts";
import { seededRandom } from "../../core/seeded_random.ts";

const reference = (text: string) => createHash("sha256").update(text).digest("hex");

Deno.test("sha256Hex() gives the FIPS 180-4 test vectors", () => {
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(
    sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

Deno.test("sha256Hex() agrees with node:crypto on texts of every padding length, UTF-8 and long ones", () => {
  const r = seededRandom(11);
  const alphabet = ["a", "Z", "0", '"', "é", "ß", "€", "😀", "\u0000", "\n"];
  // Lengths around the 55/56/64-byte padding edges, then random ones, then a long one.
  const lengths = [...Array.from({ length: 140 }, (_, i) => i), 1000, 4095, 70_000];
  for (const n of lengths) {
    let text = "";
    for (let i = 0; i < n; i++) text += alphabet[Math.floor(r() * alphabet.length)];
    assert.equal(sha256Hex(text), reference(text), `length ${n}`);
  }
  // After a long text the buffer is bigger; short texts still hash right.
  assert.equal(sha256Hex("abc"), reference("abc"));
});
