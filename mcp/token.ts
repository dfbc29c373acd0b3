/**
 * The bearer token of the HTTP transport: 32 random bytes as hex in
 * `<home>/mcp/http-token` (mode 0600), created on the first start and kept after.
 *
 * Permissions: --allow-read and --allow-write on the home.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { DvergrError } from "../core/errors.ts";

export interface HttpToken {
  token: string;
  path: string;
  /** Made by this call (the first start). */
  created: boolean;
}

/** A new token: 32 random bytes, hex. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether two tokens are equal, in time independent of where they differ. */
export function tokensEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** The home's HTTP token, created (mode 0600) when there is none yet. */
export async function ensureHttpToken(homeDir: string): Promise<HttpToken> {
  const dir = join(homeDir, "mcp");
  const path = join(dir, "http-token");
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const token = newToken();
  try {
    const file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
    try {
      await file.write(new TextEncoder().encode(token + "\n"));
    } finally {
      file.close();
    }
    // The mode given at creation is narrowed by the umask only; make it exact.
    await Deno.chmod(path, 0o600);
    return { token, path, created: true };
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  }
  const existing = (await Deno.readTextFile(path)).trim();
  if (!/^[\x21-\x7e]{32,}$/.test(existing)) {
    throw new DvergrError(
      "USAGE",
      `Cannot use the HTTP token in "${path}": it is not a token (at least 32 visible characters)`,
      { hint: "Remove the file: the next start writes a new token" },
    );
  }
  const mode = (await Deno.stat(path)).mode;
  if (mode !== null && (mode & 0o077) !== 0) await Deno.chmod(path, 0o600);
  return { token: existing, path, created: false };
}
