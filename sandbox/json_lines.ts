/**
 * Messages as JSON lines over a byte stream: how the checker pool and a checker process talk
 * over the process's stdin and stdout. JSON text has no raw newline, so a newline ends a
 * message. Plain functions over streams; no permissions.
 */

const NEWLINE = 0x0a;

/** Yields each message of `stream`, parsed; ends when the stream ends. */
export async function* readJsonLines<T>(stream: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const decoder = new TextDecoder();
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  for await (const chunk of stream) {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      let line = chunk.subarray(start, nl);
      if (pendingBytes > 0) {
        line = concat([...pending, line], pendingBytes + line.byteLength);
        pending = [];
        pendingBytes = 0;
      }
      start = nl + 1;
      yield JSON.parse(decoder.decode(line)) as T;
    }
    if (start < chunk.byteLength) {
      // The stream may reuse its buffer: keep a copy of the unfinished line.
      pending.push(chunk.slice(start));
      pendingBytes += chunk.byteLength - start;
    }
  }
}

/** One message as a line of bytes. */
export function encodeJsonLine(message: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(message) + "\n");
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
