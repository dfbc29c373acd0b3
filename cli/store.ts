import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { STORE_MIGRATE_FORMAT, STORE_STATUS_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";

export const HELP = `dvergr store migrate|status --store URL [--json]

The PostgreSQL store that holds experiments shared by workers on many machines. dvergr
creates and migrates its schema itself whenever a command opens the store; this command does
only that, so an operator can migrate before starting workers (and see the version).

  migrate   bring the store's schema up to this dvergr's version (safe to run many times,
            from many machines at once); a schema newer than this dvergr knows is refused
  status    print the store's schema version and this dvergr's

Example:
  dvergr store migrate --store postgres://dvergr@db.internal:5432/dvergr

Exit status: 0 done; 2 bad input, a store that cannot be reached, or a schema newer than
this dvergr knows.

Options:
  --store URL   postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (default: $DVERGR_STORE)
  --json        print the result as JSON
  -h, --help    show this help
`;

export const OPTIONS = {
  store: { type: "string" },
  json: { type: "boolean" },
} as const;

const ACTIONS = ["migrate", "status"];

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("store", args, OPTIONS);
  const [action, ...rest] = positionals;
  if (action === undefined || !ACTIONS.includes(action) || rest.length > 0) {
    throw usageError(
      action === undefined
        ? `"dvergr store" needs an action: ${ACTIONS.join(" or ")}`
        : `"dvergr store" takes one action (${ACTIONS.join(" or ")}), got "${
          positionals.join(" ")
        }"`,
      "Run `dvergr store migrate --store postgres://…`",
    );
  }
  return { action: action as "migrate" | "status", values };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { connectPostgres, redactUrl, storeUrl } = await import(
    "../adapters/store/postgres/connect.ts"
  );
  const { migrate, schemaVersion, SCHEMA_VERSION } = await import(
    "../adapters/store/postgres/migrations.ts"
  );
  const url = storeUrl(opts.values.store, ctx.env);
  if (url === null) {
    throw usageError(
      `"dvergr store ${opts.action}" needs a store`,
      "Give --store postgres://USER@HOST:PORT/DATABASE (or set DVERGR_STORE)",
    );
  }
  const sql = await connectPostgres(url, { max: 1 });
  try {
    const store = redactUrl(url);
    if (opts.action === "status") {
      const version = await schemaVersion(sql);
      if (opts.values.json) {
        printJson(ctx, STORE_STATUS_FORMAT, { store, schema: version, known: SCHEMA_VERSION });
      } else {ctx.stdout(
          `${store}: schema version ${version} (this dvergr knows ${SCHEMA_VERSION})\n`,
        );}
      return 0;
    }
    const r = await migrate(sql);
    if (opts.values.json) printJson(ctx, STORE_MIGRATE_FORMAT, { store, ...r });
    else if (r.applied.length === 0) {
      ctx.stdout(`${store}: schema at version ${r.to}, nothing to do\n`);
    } else {
      ctx.stdout(
        `${store}: schema ${r.from} → ${r.to} (${
          r.applied.map((m) => `${m.version} ${m.name}`).join("; ")
        })\n`,
      );
    }
    return 0;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
