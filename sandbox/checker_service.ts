/**
 * The inside of a checker.js worker: the worker service (sandbox/worker_service.ts) with a
 * QuickJSSandbox (sandbox/quickjs_call.ts) as its engine.
 *
 * Permissions: none.
 */
import type { CallOutcome, HostMessage, WorkerMessage } from "./protocol.ts";
import { QuickJSSandbox } from "./quickjs_call.ts";
import { createWorkerService } from "./worker_service.ts";

/**
 * Returns the message handler of one checker.js worker; `send` carries its answers to the
 * host. Permissions: none.
 */
export function createCheckerService(
  send: (message: WorkerMessage<CallOutcome>) => void,
): (message: HostMessage) => Promise<void> {
  return createWorkerService<CallOutcome>(
    send,
    ({ module, memory, heapLimitBytes, capBytes }, init) =>
      new QuickJSSandbox(module, memory, {
        memoryLimitBytes: heapLimitBytes,
        memoryCapBytes: capBytes,
        wasmBytes: () => memory.buffer.byteLength,
        stackBytes: init.stackBytes,
        layout: init.layout,
      }),
    "The sandbox",
  );
}
