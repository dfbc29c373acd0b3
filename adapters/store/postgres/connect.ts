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

/** Whether `value` names a PostgreSQL store (rather than a home directory). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** The URL as it may be printed: the password, if any, replaced by `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/:\/\/([^:@/]*):[^@/]*@/, "://$1:***@");
  }
}

/** Where `--store` (else DVERGR_STORE) points, or null when neither names a store. */
export function storeUrl(
  flag: string | undefined,
  env: (name: string) => string | undefined,
): string | null {
  const value = flag ?? env("DVERGR_STORE");
  if (value === undefined || value === "") return null;
  if (!isPostgresUrl(value)) {
    throw new DvergrError(
      "USAGE",
      `Cannot use the store "${redactUrl(value)}": it is not a postgres:// URL`,
      { hint: "Give --store postgres://USER@HOST:PORT/DATABASE (or set DVERGR_STORE)" },
    );
  }
  return value;
}

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
