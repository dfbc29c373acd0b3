/**
 * The checker worker as a process: `deno run` of this file with no permission flag at all
 * (every permission denied, prompts off), reading call messages as JSON lines on stdin and
 * answering on stdout (sandbox/json_lines.ts). Being a process, it can always be stopped:
 * the pool kills it when a checker is stuck in a native call that never polls QuickJS's
 * interrupt handler, and the CPU it used is free at once.
 *
 * Permissions: none.
 */
import type { HostMessage, WorkerMessage } from "./protocol.ts";
import { createCheckerService } from "./checker_service.ts";
import { encodeJsonLine, readJsonLines } from "./json_lines.ts";

function writeAll(bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.byteLength) at += Deno.stdout.writeSync(bytes.subarray(at));
}

const handle = createCheckerService((message: WorkerMessage) => writeAll(encodeJsonLine(message)));

// One message at a time, in order: a call runs to its end before the next is read.
for await (const message of readJsonLines<HostMessage>(Deno.stdin.readable)) {
  await handle(message);
}
