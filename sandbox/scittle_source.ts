/**
 * The text of SCI (the Small Clojure Interpreter) as the `scittle` npm package builds it:
 * `dist/scittle.js`, a 972 KB script that defines `scittle.core.eval_string`. It is only
 * ever evaluated inside QuickJS (sandbox/sci_engine.ts), never by the host's V8.
 *
 * Imported as text, so the Clojure worker needs no read permission to have it.
 */
import source from "scittle/dist/scittle.js" with { type: "text" };

/** dist/scittle.js of scittle@0.8.33. */
export const SCITTLE_SOURCE: string = source;

/** The SHA-256 of the dist/scittle.js the sandbox was built and measured with. */
export const SCITTLE_SHA256 = "e04a33ff90947057772f42e683314e9c9f8671ebb922398208b4ad1c76991373";

/** SHA-256 of a text's UTF-8 bytes, as lower-case hex. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
