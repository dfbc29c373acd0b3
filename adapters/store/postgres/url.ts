/**
 * The PostgreSQL store's URL rules (`--store postgres://…` or `DVERGR_STORE`), apart from
 * the driver so that commands can read their flags without loading it.
 */
import { DvergrError } from "../../../core/errors.ts";

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
