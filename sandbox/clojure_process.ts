/**
 * The Clojure checker worker as a process: `deno run` of this file with every permission
 * denied, reading call messages as JSON lines on stdin and answering on stdout
 * (sandbox/json_lines.ts); everything else is in sandbox/clojure_service.ts. Being a
 * process, it can always be stopped: the pool kills it when a checker hangs.
 *
 * Permissions: none.
 */
import type { ClojureHostMessage, ClojureWorkerMessage } from "./clojure_protocol.ts";
import { createClojureService } from "./clojure_service.ts";
import { encodeJsonLine, readJsonLines } from "./json_lines.ts";

function writeAll(bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.byteLength) at += Deno.stdout.writeSync(bytes.subarray(at));
}

const handle = createClojureService((message: ClojureWorkerMessage) =>
  writeAll(encodeJsonLine(message))
);

// One message at a time, in order: a call runs to its end before the next is read.
for await (const message of readJsonLines<ClojureHostMessage>(Deno.stdin.readable)) {
  await handle(message);
}
