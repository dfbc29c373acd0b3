/**
 * The Clojure checker worker as a Deno Worker started with `deno: { permissions: "none" }`:
 * the message handler of sandbox/clojure_service.ts on `self`.
 *
 * Permissions: none. The pool replaces the worker when it is poisoned, grew too large or
 * hangs.
 */
/// <reference lib="deno.worker" />
import type { HostMessage } from "./protocol.ts";
import { createClojureService } from "./clojure_service.ts";

const handle = createClojureService((message) => self.postMessage(message));

// One message at a time, in order: a call runs to its end before the next is handled.
let queue = Promise.resolve();
self.onmessage = (event: MessageEvent<HostMessage>) => {
  queue = queue.then(() => handle(event.data));
};
