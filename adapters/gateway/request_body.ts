/**
 * Request bodies read with bounds, for the servers that untrusted clients reach (the world
 * gateway's two sockets, dvergr's MCP over HTTP). Bytes are counted as they stream in and
 * reading stops (the rest of the stream is cancelled) as soon as a bound is passed, so a
 * body of any length costs at most its bound in memory; `await req.text()` would hold all
 * of it first.
 *
 * Two bounds: each body's own, and the bytes of all bodies being read (and held) at once
 * by one server, so many large bodies in parallel cannot add up either.
 *
 * Permissions: none.
 */

/** A body, or why it was not read to the end. */
export type BoundedBody =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too-large" | "too-many-at-once"; message: string };

/**
 * The bytes of bodies one server holds at once: a body takes what it reads and gives it
 * back (`release`) once the request no longer needs it.
 */
export class BodyBytes {
  private held = 0;

  constructor(
    /** Largest body, bytes. */
    readonly maxBody: number,
    /** Largest total of the bodies held at once, bytes. */
    readonly maxHeld: number,
  ) {}

  /** Bytes held now (tests). */
  get inUse(): number {
    return this.held;
  }

  /**
   * Reads `req`'s body within both bounds. On success the caller holds `bytes.length`
   * bytes until it calls `release` with that count; on refusal nothing is held.
   */
  async read(req: Request): Promise<BoundedBody> {
    const declared = Number(req.headers.get("content-length") ?? "0");
    if (declared > this.maxBody) {
      await req.body?.cancel().catch(() => {});
      return this.tooLarge();
    }
    if (req.body === null) return { ok: true, bytes: new Uint8Array(0) };
    const chunks: Uint8Array[] = [];
    let size = 0;
    let refusal: BoundedBody | null = null;
    try {
      for await (const chunk of req.body) {
        if (size + chunk.byteLength > this.maxBody) {
          refusal = this.tooLarge();
          break;
        }
        if (this.held + chunk.byteLength > this.maxHeld) {
          refusal = {
            ok: false,
            reason: "too-many-at-once",
            message: `Payload Too Large: the request bodies being read at once are over ` +
              `${this.maxHeld} bytes; send fewer at a time`,
          };
          break;
        }
        size += chunk.byteLength;
        this.held += chunk.byteLength;
        chunks.push(chunk);
      }
    } catch (e) {
      // The client went away mid-body: nothing to answer.
      this.release(size);
      throw e;
    }
    if (refusal !== null) {
      // Leaving the loop cancelled the rest of the stream; what was read is dropped.
      this.release(size);
      return refusal;
    }
    const all = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.byteLength;
    }
    return { ok: true, bytes: all };
  }

  /** Gives back bytes a body took. */
  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }

  private tooLarge(): BoundedBody {
    return {
      ok: false,
      reason: "too-large",
      message: `Payload Too Large: a request body is at most ${this.maxBody} bytes`,
    };
  }
}
