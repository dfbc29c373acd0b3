/**
 * The inside of a checker.js worker: the worker service (sandbox/worker_service.ts) with a
 * QuickJSSandbox (sandbox/quickjs_call.ts) as its engine. An init's boot image comes as the
 * bytes of its file (sandbox/quickjs_image_cache.ts), and so does a checker image: checked
 * here (sandbox/quickjs_image.ts) before the engine sees them; bytes that do not hold are no
 * image.
 *
 * The check of an image (a SHA-256 with crypto.subtle, off this thread) starts as its
 * message arrives, so that the boot image is checked while QuickJS loads and a checker image
 * while the worker boots (~4-7 ms of a thread worker's start otherwise); the messages are
 * still handled one at a time, in the order they came.
 *
 * Permissions: none.
 */
import type { CallOutcome, HostMessage, WorkerMessage } from "./protocol.ts";
import { QuickJSSandbox } from "./quickjs_call.ts";
import { createWorkerService } from "./worker_service.ts";
import { imageOfFile } from "./quickjs_image.ts";

/** The image a file's bytes hold, or null when they do not hold one (never rejects). */
const checked = (bytes: Uint8Array): Promise<Uint8Array | null> =>
  imageOfFile(bytes).catch(() => null);

/**
 * Returns the message handler of one checker.js worker; `send` carries its answers to the
 * host. Call it with each message as it arrives: it handles them in that order, one at a
 * time (a call runs to its end before the next is handled), and its promise settles once
 * that message was handled. Permissions: none.
 */
export function createCheckerService(
  send: (message: WorkerMessage<CallOutcome>) => void,
): (message: HostMessage) => Promise<void> {
  /** The boot image of the init, as checked (null: none, or bytes that do not hold). */
  let bootImage: Promise<Uint8Array | null> = Promise.resolve(null);
  const handle = createWorkerService<CallOutcome>(
    send,
    async ({ module, memory, heapLimitBytes, capBytes }, init) => {
      const image = await bootImage;
      return new QuickJSSandbox(module, memory, {
        memoryLimitBytes: heapLimitBytes,
        memoryCapBytes: capBytes,
        wasmBytes: () => memory.buffer.byteLength,
        stackBytes: init.stackBytes,
        layout: init.layout,
        image: image ?? undefined,
        keepImage: init.keepImage,
      });
    },
    "The sandbox",
  );
  let queue = Promise.resolve();
  return (message) => {
    let next: () => Promise<void> = () => handle(message);
    if (message.type === "init") {
      // The engine takes the checked image (the bytes in the message are never used).
      bootImage = message.image === undefined ? Promise.resolve(null) : checked(message.image);
    } else if (message.type === "prepared") {
      // A checker image comes as its file's bytes too; bytes that do not hold are dropped.
      const image = checked(message.image);
      next = async () => {
        const bytes = await image;
        if (bytes !== null) await handle({ ...message, image: bytes });
      };
    }
    return queue = queue.then(next);
  };
}
