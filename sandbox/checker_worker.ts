/**
 * The checker.js worker as a Deno Worker started with `deno: { permissions: "none" }`: the
 * message handler of sandbox/checker_service.ts on `self`. Used where no `deno` executable
 * can start a checker process (a compiled binary); a Worker busy in one long native call
 * cannot be stopped (denoland/deno#35657), a process can.
 *
 * Permissions: none.
 */
/// <reference lib="deno.worker" />
import type { HostMessage } from "./protocol.ts";
import { createCheckerService } from "./checker_service.ts";

const handle = createCheckerService((message) => self.postMessage(message));

// Given each message as it arrives: the service handles them one at a time, in order (a call
// runs to its end before the next is handled), and starts checking an image at once.
self.onmessage = (event: MessageEvent<HostMessage>) => void handle(event.data);
