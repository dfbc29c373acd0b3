/**
 * The inside of a Clojure checker worker: the worker service (sandbox/worker_service.ts)
 * with SCI booted in QuickJS (sandbox/sci_engine.ts) as its engine, after checking
 * scittle's text against its SHA-256.
 *
 * Permissions: none. scittle's text and the QuickJS wasm are part of the module graph.
 */
import type { HostMessage, WorkerMessage } from "./protocol.ts";
import { type ClojureOutcome, SciEngine } from "./sci_engine.ts";
import { SCITTLE_SHA256, SCITTLE_SOURCE, sha256Hex } from "./scittle_source.ts";
import { createWorkerService } from "./worker_service.ts";

/**
 * Returns the message handler of one Clojure worker; `send` carries its answers to the
 * host. The handler never throws: a failed start is an "init-failed" message.
 */
export function createClojureService(
  send: (message: WorkerMessage<ClojureOutcome>) => void,
): (message: HostMessage) => Promise<void> {
  // Checked once per worker, before SCI is ever evaluated.
  const pinned = sha256Hex(SCITTLE_SOURCE);
  let engine: SciEngine | undefined;
  const handle = createWorkerService<ClojureOutcome>(
    (message) => {
      send(message);
      // The answer is on its way: the memory goes back to the checker's snapshot now, while
      // the host reads it, instead of when the next call arrives (sandbox/sci_engine.ts).
      if (message.type === "result") engine?.settle();
    },
    ({ module, memory, heapLimitBytes, capBytes }, init) =>
      engine = SciEngine.boot(module, memory, SCITTLE_SOURCE, {
        memoryLimitBytes: Math.max(32 * 1024 * 1024, heapLimitBytes),
        memoryCapBytes: capBytes,
        stackBytes: init.stackBytes,
        image: init.image,
        keepImage: init.keepImage,
      }),
    "The Clojure sandbox",
  );
  return async (message) => {
    if (message.type === "init") {
      const sha = await pinned;
      if (sha !== SCITTLE_SHA256) {
        send({
          type: "init-failed",
          message:
            `scittle's dist/scittle.js is not the one dvergr was built with (sha256 ${sha}, expected ${SCITTLE_SHA256}): run \`deno install --frozen\``,
        });
        return;
      }
    }
    await handle(message);
  };
}
