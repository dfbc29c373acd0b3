/**
 * A worker process's first messages as its arguments (sandbox/init_args.ts): what
 * messageArgs() writes messagesFromArgs() reads back, images byte for byte, in arguments
 * Linux takes (each below 128 KiB); images too large together are refused, and arguments
 * that are not such messages carry none.
 */
import assert from "node:assert/strict";
import {
  type ArgMessage,
  MAX_ARG_IMAGE_BYTES,
  messageArgs,
  messagesFromArgs,
} from "../../sandbox/init_args.ts";
import type { KnownLayout } from "../../sandbox/known_layout.ts";

function bytes(n: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
}

Deno.test("an init and a checker image go as arguments and come back the same", () => {
  const messages: ArgMessage[] = [
    {
      type: "init",
      memoryBytes: 256 * 1024 * 1024,
      stackBytes: 131072,
      image: bytes(221_397, 1),
      keepImage: true,
      layout: { version: 1 } as unknown as KnownLayout,
    },
    { type: "prepared", key: "ab".repeat(32), image: bytes(241_954, 2) },
  ];
  const args = messageArgs(messages)!;
  assert.ok(args.every((a) => new TextEncoder().encode(a).byteLength < 131_072));
  assert.deepEqual(messagesFromArgs(args), messages);
});

Deno.test("an init without an image goes as arguments too", () => {
  const init: ArgMessage = { type: "init", memoryBytes: 1 << 20, stackBytes: 65536 };
  assert.deepEqual(messagesFromArgs(messageArgs([init])!), [init]);
});

Deno.test("images too large for the arguments together are refused", () => {
  const half = MAX_ARG_IMAGE_BYTES / 2 + 1;
  assert.equal(
    messageArgs([
      { type: "init", memoryBytes: 1, stackBytes: 1, image: bytes(half, 1) },
      { type: "prepared", key: "k", image: bytes(half, 2) },
    ]),
    null,
  );
});

Deno.test("arguments that are not messages carry none", () => {
  const args = messageArgs([
    { type: "prepared", key: "k", image: bytes(300_000, 3) },
  ])!;
  for (
    const bad of [
      [],
      ["script-arg"],
      [args[0]],
      [args[0], "not json"],
      [args[0], JSON.stringify([{ type: "call", imageChunks: -1 }])],
      args.slice(0, -1), // a chunk missing
      [...args, "extra"],
    ]
  ) {
    assert.deepEqual(messagesFromArgs(bad), [], JSON.stringify(bad).slice(0, 80));
  }
});
