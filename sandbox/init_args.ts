/**
 * A worker process's first messages as its command-line arguments: how the checker.js worker
 * process a benchmark starts early (cli/early_start.ts, sandbox/worker_process.ts) gets its
 * init, boot image included, from its first instruction on. Any local user can read a
 * process's arguments: they carry nothing of a bundle (its checker's image goes over stdin).
 *
 * Sent over stdin instead, a boot image (~220 KB) crossed the 64 KiB pipe only as this
 * process's event loop turned, and it does not turn while `dvergr benchmark` loads its
 * command's modules (~50-100 ms of one synchronous load): the worker, up long before, sat
 * waiting for the rest of its init until then, and restored its image after the run's first
 * call was due. Arguments cost no permission: the worker still runs with every one denied.
 *
 * Arguments are C strings of at most 128 KiB each (Linux's MAX_ARG_STRLEN): the images go as
 * base64 in chunks below that, the messages without them as one JSON argument. Images too
 * large for the arguments together are left out (the caller sends its messages over stdin).
 *
 * Permissions: none.
 */
import type { InitMessage, PreparedMessage } from "./protocol.ts";

/** A message a worker process can be given as arguments. */
export type ArgMessage = InitMessage | PreparedMessage;

/** The first argument of messages given as arguments. */
const MARK = "--dvergr-messages";
/** Characters of base64 in one argument: below MAX_ARG_STRLEN (131,072 with its NUL). */
const CHUNK_CHARS = 120_000;
/** Largest sum of images given as arguments (1 MiB of base64, half of Linux's usual ARG_MAX). */
export const MAX_ARG_IMAGE_BYTES = 768 * 1024;

/** `messages` as arguments, or null when their images are too large for them. */
export function messageArgs(messages: readonly ArgMessage[]): string[] | null {
  const bytes = messages.reduce((n, m) => n + (m.image?.byteLength ?? 0), 0);
  if (bytes > MAX_ARG_IMAGE_BYTES) return null;
  const chunks: string[] = [];
  const plain = messages.map(({ image, ...rest }) => {
    if (image === undefined) return { ...rest, imageChunks: -1 };
    const text = image.toBase64();
    const before = chunks.length;
    for (let at = 0; at < text.length; at += CHUNK_CHARS) {
      chunks.push(text.slice(at, at + CHUNK_CHARS));
    }
    return { ...rest, imageChunks: chunks.length - before };
  });
  return [MARK, JSON.stringify(plain), ...chunks];
}

/**
 * The messages `args` carry (as messageArgs() wrote them); none when they carry none or are
 * not such arguments.
 */
export function messagesFromArgs(args: readonly string[]): ArgMessage[] {
  if (args[0] !== MARK || args.length < 2) return [];
  try {
    const plain = JSON.parse(args[1]) as (ArgMessage & { imageChunks: number })[];
    let at = 2;
    const messages = plain.map(({ imageChunks, ...rest }) => {
      if (rest.type !== "init" && rest.type !== "prepared") throw new Error("not a message");
      if (!Number.isInteger(imageChunks) || imageChunks < 0) return rest as ArgMessage;
      const text = args.slice(at, at += imageChunks).join("");
      return { ...rest, image: Uint8Array.fromBase64(text) } as ArgMessage;
    });
    return at === args.length ? messages : [];
  } catch {
    return [];
  }
}
