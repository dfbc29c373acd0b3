import assert from "node:assert/strict";
import { concatBytes, encodeJsonLine, readJsonLines } from "../../sandbox/json_lines.ts";

/**
 * The wire's bytes in chunks of `size`, every chunk in the same buffer, overwritten as soon
 * as the reader asks for the next (as a worker's stdin reader hands them on).
 */
async function* reusedChunks(wire: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  const buf = new Uint8Array(size);
  for (let i = 0; i < wire.byteLength; i += size) {
    const n = Math.min(size, wire.byteLength - i);
    buf.set(wire.subarray(i, i + n));
    yield buf.subarray(0, n);
    buf.fill(0x7b); // what the next read would leave there ("{{{…")
  }
}

Deno.test("JSON lines read from one reused buffer: lines and attachments split across chunks keep their bytes", async () => {
  const bytes = Uint8Array.from({ length: 5_000 }, (_, i) => (i * 7) % 256);
  const messages = [
    { type: "call", id: 1, input: "x".repeat(300) },
    { type: "prepared", key: "k", image: bytes },
    { type: "call", id: 2, input: "é\u2028\n" },
    { type: "call", id: 3, input: "" },
  ];
  // Several messages in one write, as the pool sends the calls of one turn.
  const wire = concatBytes(messages.map(encodeJsonLine));
  for (const size of [1, 5, 64, 1000, wire.byteLength]) {
    const got: Record<string, unknown>[] = [];
    for await (const m of readJsonLines<Record<string, unknown>>(reusedChunks(wire, size))) {
      got.push(m);
    }
    assert.deepEqual(got, messages, `chunks of ${size}`);
  }
});

Deno.test("concatBytes joins its parts in order", () => {
  assert.deepEqual(
    concatBytes([Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3)]),
    Uint8Array.of(1, 2, 3),
  );
  assert.deepEqual(concatBytes([]), new Uint8Array(0));
});
