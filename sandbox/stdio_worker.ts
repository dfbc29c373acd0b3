/**
 * Serves a worker's message handler over the process's stdin and stdout as JSON lines
 * (sandbox/json_lines.ts): how both process entries (sandbox/checker_process.ts,
 * sandbox/clojure_process.ts) talk to their pool.
 *
 * Permissions: none (stdin and stdout need none).
 */
import type { HostMessage } from "./protocol.ts";
import { encodeJsonLine, readJsonLines } from "./json_lines.ts";
import { messagesFromArgs } from "./init_args.ts";

function writeAll(bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.byteLength) at += Deno.stdout.writeSync(bytes.subarray(at));
}

/** Size of the buffer stdin is read into (reused: json_lines.ts copies what it keeps). */
const READ_BYTES = 256 * 1024;

/**
 * stdin's bytes, read directly rather than through `Deno.stdin.readable`: a worker then
 * loads no web streams (~100 ms of CPU at its start) and a read costs no stream machinery.
 */
async function* stdinChunks(): AsyncGenerator<Uint8Array> {
  const buf = new Uint8Array(READ_BYTES);
  for (;;) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return;
    if (n > 0) yield buf.subarray(0, n);
  }
}

/**
 * Builds the handler with a `send` that writes to stdout, then feeds it the messages its
 * arguments carry, if any (sandbox/init_args.ts: a worker process started early), then
 * stdin's, one at a time, in order (a call runs to its end before the next is read), until
 * stdin ends.
 */
export async function serveStdio<W>(
  create: (send: (message: W) => void) => (message: HostMessage) => Promise<void>,
): Promise<void> {
  const handle = create((message) => writeAll(encodeJsonLine(message)));
  for (const message of messagesFromArgs(Deno.args)) await handle(message);
  for await (const message of readJsonLines<HostMessage>(stdinChunks())) {
    await handle(message);
  }
}
