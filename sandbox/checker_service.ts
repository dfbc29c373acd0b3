/**
 * The inside of a checker.js worker: the worker service (sandbox/worker_service.ts) with a
 * QuickJSSandbox (sandbox/quickjs_call.ts) as its engine. An init's boot image comes as the
 * bytes of its file (sandbox/quickjs_image_cache.ts), and so does a checker image: checked
 * here (sandbox/quickjs_image.ts) before the engine sees them; bytes that do not hold are no
 * image.
 *
 * Permissions: none.
 */
import type { CallOutcome, HostMessage, WorkerMessage } from "./protocol.ts";
import { QuickJSSandbox } from "./quickjs_call.ts";
import { createWorkerService } from "./worker_service.ts";
import { imageOfFile } from "./quickjs_image.ts";

/**
 * Returns the message handler of one checker.js worker; `send` carries its answers to the
 * host. Permissions: none.
 */
export function createCheckerService(
  send: (message: WorkerMessage<CallOutcome>) => void,
): (message: HostMessage) => Promise<void> {
  const handle = createWorkerService<CallOutcome>(
    send,
    ({ module, memory, heapLimitBytes, capBytes }, init) =>
      new QuickJSSandbox(module, memory, {
        memoryLimitBytes: heapLimitBytes,
        memoryCapBytes: capBytes,
        wasmBytes: () => memory.buffer.byteLength,
        stackBytes: init.stackBytes,
        layout: init.layout,
        image: init.image,
        keepImage: init.keepImage,
      }),
    "The sandbox",
  );
  return async (message) => {
    if (message.type === "init" && message.image !== undefined) {
      const image = await imageOfFile(message.image).catch(() => null);
      message = { ...message, image: image ?? undefined };
    } else if (message.type === "prepared") {
      // A checker image comes as its file's bytes too; bytes that do not hold are dropped.
      const image = await imageOfFile(message.image).catch(() => null);
      if (image === null) return;
      message = { ...message, image };
    }
    await handle(message);
  };
}
