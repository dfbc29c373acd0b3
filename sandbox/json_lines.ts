/**
 * Messages as JSON lines over a byte stream: how the checker pool and a checker process talk
 * over the process's stdin and stdout. JSON text has no raw newline, so a newline ends a
 * message. Plain functions over streams; no permissions.
 */

const NEWLINE = 0x0a;

/** Largest binary attachment accepted: a boot image is at most the worker's memory cap. */
const MAX_ATTACHMENT_BYTES = 1024 * 1024 * 1024;

/**
 * Yields each message of `stream`, parsed; ends when the stream ends. A message with an
 * attachment (see `encodeJsonLine`) is yielded once its bytes have arrived, with them in
 * its field.
 */
export async function* readJsonLines<T>(stream: AsyncIterable<Uint8Array>): AsyncGenerator<T> {
  const decoder = new TextDecoder();
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let waiting: { message: Record<string, unknown>; field: string; bytes: Uint8Array } | null = null;
  let filled = 0;
  for await (const chunk of stream) {
    let start = 0;
    while (start < chunk.byteLength) {
      if (waiting) {
        const take = Math.min(waiting.bytes.byteLength - filled, chunk.byteLength - start);
        waiting.bytes.set(chunk.subarray(start, start + take), filled);
        filled += take;
        start += take;
        if (filled === waiting.bytes.byteLength) {
          waiting.message[waiting.field] = waiting.bytes;
          const done = waiting.message;
          waiting = null;
          yield done as T;
        }
        continue;
      }
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) {
        // The source may reuse its buffer: keep a copy of the unfinished line.
        pending.push(chunk.slice(start));
        pendingBytes += chunk.byteLength - start;
        break;
      }
      let line = chunk.subarray(start, nl);
      if (pendingBytes > 0) {
        line = concat([...pending, line], pendingBytes + line.byteLength);
        pending = [];
        pendingBytes = 0;
      }
      start = nl + 1;
      const message = JSON.parse(decoder.decode(line));
      const attached = attachment(message);
      if (attached === null) {
        yield message as T;
      } else {
        delete message.$binary;
        waiting = { message, field: attached.field, bytes: new Uint8Array(attached.length) };
        filled = 0;
        if (attached.length === 0) {
          message[attached.field] = waiting.bytes;
          waiting = null;
          yield message as T;
        }
      }
    }
  }
}

function attachment(message: unknown): { field: string; length: number } | null {
  if (typeof message !== "object" || message === null || !("$binary" in message)) return null;
  const b = (message as { $binary: unknown }).$binary as Record<string, unknown> | null;
  if (
    typeof b?.field !== "string" || !Number.isSafeInteger(b.length) ||
    (b.length as number) < 0 || (b.length as number) > MAX_ATTACHMENT_BYTES
  ) {
    throw new Error("a message announced a binary attachment it cannot have");
  }
  return { field: b.field, length: b.length as number };
}

/**
 * One message as a line of bytes. A top-level field holding a Uint8Array (at most one) is
 * sent as raw bytes after the line, which announces them (`$binary`), so megabytes of
 * memory image cross without being written as JSON.
 */
export function encodeJsonLine(message: unknown): Uint8Array {
  const encoder = new TextEncoder();
  if (typeof message === "object" && message !== null) {
    const entry = Object.entries(message).find(([, v]) => v instanceof Uint8Array);
    if (entry) {
      const [field, bytes] = entry as [string, Uint8Array];
      const head = encoder.encode(
        JSON.stringify({
          ...message,
          [field]: undefined,
          $binary: { field, length: bytes.byteLength },
        }) +
          "\n",
      );
      return concat([head, bytes], head.byteLength + bytes.byteLength);
    }
  }
  return encoder.encode(JSON.stringify(message) + "\n");
}

/** The bytes of `parts`, one after another. */
export function concatBytes(parts: Uint8Array[]): Uint8Array {
  return concat(parts, parts.reduce((n, p) => n + p.byteLength, 0));
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
