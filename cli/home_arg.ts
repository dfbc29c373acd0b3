/**
 * The home of room commands (`--home DIR`, else `$DVERGR_HOME`, else `.dvergr` in the working
 * directory) and the op context the CLI runs ops in: the same ops MCP calls.
 */
import { DvergrError } from "../core/errors.ts";
import { resolveHomeDir } from "../adapters/store/kv/home.ts";
import { isDir } from "../adapters/files/fs.ts";
import { composeServices, openHomeAt } from "../adapters/compose.ts";
import { storeUrl } from "../adapters/store/postgres/url.ts";
import { blobsTarget, type S3Target } from "../adapters/store/s3/target.ts";
import type { OpContext } from "../core/ops/op.ts";
import type { CheckerRunner } from "../core/checker.ts";
import type { CheckerPool } from "../sandbox/checker_pool.ts";
import type { CliContext } from "./context.ts";
import { importLater } from "./import_later.ts";

/** The help line every room command shares. */
export const HOME_HELP =
  "  --home DIR      the home (default: $DVERGR_HOME, else .dvergr in the working directory)";

/** The help of `--home` and `--store` for the commands that keep runs, reviews and schedules. */
export const DEPLOY_HOME_HELP = `${HOME_HELP}
  --store URL     keep the runs, reviews and schedules in a PostgreSQL store shared by other
                  machines, postgres://USER@HOST:PORT/DATABASE (default: $DVERGR_STORE); the
                  rooms stay in the home
  --blobs URL     with --store: its blobs are in this S3 bucket, s3://BUCKET/PREFIX
                  (default: $DVERGR_BLOBS; credentials from the AWS_* variables)`;

/** The home directory of room commands, absolute (adapters/store/kv/home.ts resolveHomeDir()). */
export function roomHomeDir(
  flag: string | undefined,
  ctx: Pick<CliContext, "env" | "cwd">,
): string {
  return resolveHomeDir({ flag, env: ctx.env, cwd: ctx.cwd });
}

/** A checker runner that starts its QuickJS workers only when a checker first runs. */
export function lazyRunner(): CheckerRunner {
  let pool: Promise<CheckerPool> | null = null;
  let closed = false;
  const get = () =>
    pool ??= importLater<typeof import("../sandbox/checker_pool.ts")>(
      "../sandbox/checker_pool.ts",
      import.meta.url,
    ).then((m) => m.createCheckerPool({ workers: 2 }));
  return {
    check: async (source, input, opts) => (await get()).check(source, input, opts),
    judgeRequests: async (source, input, opts) => (await get()).judgeRequests(source, input, opts),
    generate: async (source, request, opts) => (await get()).generate(source, request, opts),
    close() {
      if (closed) return;
      closed = true;
      pool?.then((p) => p.close());
    },
  };
}

/**
 * Opens the home at `dir` (refusing a missing one unless `create`), runs `f` with an op
 * context on it, and closes everything.
 */
/**
 * The store `--store` or DVERGR_STORE names for the deploy commands, or null (the home's
 * own), and the bucket of its blobs (`--blobs`, DVERGR_BLOBS), if any.
 */
export function deployStore(
  flag: string | undefined,
  ctx: Pick<CliContext, "env">,
  blobsFlag?: string,
): { store: string | null; blobs: S3Target | null } {
  const store = storeUrl(flag, ctx.env);
  return { store, blobs: blobsTarget(blobsFlag, ctx.env, store) };
}

/** The flags of commands that work on a home that may live in a PostgreSQL store. */
export interface DeployHomeFlags {
  home?: string;
  store?: string;
  blobs?: string;
}

/** withOpContext on the home, store and blobs that `flags` (or the environment) name. */
export function withDeployOp<T>(
  ctx: CliContext,
  flags: DeployHomeFlags,
  f: (op: OpContext) => Promise<T>,
): Promise<T> {
  return withOpContext(
    ctx,
    roomHomeDir(flags.home, ctx),
    deployStore(flags.store, ctx, flags.blobs),
    f,
  );
}

export async function withOpContext<T>(
  ctx: CliContext,
  dir: string,
  opts: { create?: boolean; store?: string | null; blobs?: S3Target | null },
  f: (op: OpContext) => Promise<T>,
): Promise<T> {
  if (!opts.create && !(await isDir(dir))) {
    throw new DvergrError("NOT_FOUND", `Cannot open the home "${dir}": no such directory`, {
      hint:
        "Pass --home DIR or set DVERGR_HOME to the home that holds your rooms, or create a room with `dvergr room create NAME`",
      details: { home: dir },
    });
  }
  const home = await openHomeAt(dir, opts.store ?? null, opts.blobs ?? null);
  const runner = lazyRunner();
  try {
    return await f({
      home,
      services: composeServices(),
      runner,
      env: ctx.env,
      cwd: ctx.cwd,
      clock: () => new Date(),
    });
  } finally {
    runner.close();
    await home.close();
  }
}
