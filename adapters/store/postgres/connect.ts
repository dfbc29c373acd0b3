/**
 * Connections to a PostgreSQL store (`--store postgres://…` or `DVERGR_STORE`): a pool from
 * the `postgres` npm driver, a first contact that turns a store that is down or refuses us
 * into a user-facing error (exit 2, the URL named without its password), and the store's URL
 * rules. Permissions: --allow-net to the server (--allow-env and --allow-read for the
 * driver's defaults, e.g. PGPASSWORD and a Unix socket path).
 */
import postgres from "postgres";
import { DvergrError } from "../../../core/errors.ts";

/** A pool of connections to one store. */
export type Sql = postgres.Sql;

export { isPostgresUrl, redactUrl, storeUrl } from "./url.ts";
import { redactUrl } from "./url.ts";
import { guardClosedSocketWrites } from "./closed_socket_guard.ts";

export interface ConnectOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /** How long the first contact may take before the store counts as down (default 10 s). */
  connectTimeoutSeconds?: number;
}

function reason(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: string }).code;
    return code && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
  }
  return String(e);
}

/**
 * A pool on `url` whose server answered a first query. A store that cannot be reached, or
 * refuses the login, is a DvergrError naming it (exit 2), not a stack trace.
 */
export async function connectPostgres(url: string, opts: ConnectOptions = {}): Promise<Sql> {
  guardClosedSocketWrites();
  let sql: Sql;
  try {
    sql = postgres(url, {
      max: opts.max ?? 10,
      connect_timeout: opts.connectTimeoutSeconds ?? 10,
      idle_timeout: 30,
      onnotice: () => {},
      // Times are ours to read as numbers; bigints as JavaScript numbers where they fit.
      types: {},
    });
  } catch (e) {
    throw unreachable(url, e);
  }
  try {
    await sql`select 1`;
  } catch (e) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw unreachable(url, e);
  }
  return sql;
}

function unreachable(url: string, e: unknown): DvergrError {
  return new DvergrError("IO", `Cannot reach the store ${redactUrl(url)}: ${reason(e)}`, {
    hint:
      "Check that the PostgreSQL server is running and the URL (host, port, database, user) is right",
    cause: e,
  });
}

/** The driver's codes for a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);

/**
 * Whether an error means the server is out of reach for now: a connection refused or lost,
 * or the server shutting down or starting (SQLSTATE classes 08 and 57P), also when wrapped
 * as the cause of another error.
 */
export function storeUnavailable(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x && depth < 5; depth++) {
    const code = String((x as { code?: unknown }).code ?? "");
    if (CONNECTION_CODES.has(code) || /^08/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    if (x instanceof Deno.errors.ConnectionRefused || x instanceof Deno.errors.ConnectionReset) {
      return true;
    }
    x = (x as { cause?: unknown }).cause;
  }
  return false;
}
