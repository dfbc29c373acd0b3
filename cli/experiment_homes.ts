/**
 * Where the commands that read experiments (`show`, `report`, `experiments`, `plan`) look
 * for them: a PostgreSQL store shared by workers when one is given (`--store`,
 * `$DVERGR_STORE`), else the home given (`--home`, `$DVERGR_HOME`), else `.dvergr` and every
 * `workflow-runs/<bundle>` of the working directory, the homes `benchmark` and `demo` make
 * by default.
 */
import { join, resolve } from "node:path";
import { isDir, pathExists } from "../adapters/files/fs.ts";
import { givenHomeDir } from "../adapters/store/kv/home.ts";
import { openHomeAt } from "../adapters/compose.ts";
import { redactUrl, storeUrl } from "../adapters/store/postgres/url.ts";
import { blobsTarget, type S3Target } from "../adapters/store/s3/target.ts";
import { type Home } from "../core/ports/home.ts";
import type { ExperimentMeta } from "../core/ports/state_store.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import type { CliContext } from "./context.ts";

/** The help line of the commands that read experiments. */
export const EXPERIMENT_HOME_HELP =
  `  --home DIR  the home (default: $DVERGR_HOME, else .dvergr and workflow-runs/* in the
              working directory, whichever holds the experiment)
  --store URL a PostgreSQL store shared by workers, postgres://USER@HOST:PORT/DATABASE
              (default: $DVERGR_STORE): the experiment is read there
  --blobs URL with --store: the store's blobs are in this S3 bucket, s3://BUCKET/PREFIX
              (default: $DVERGR_BLOBS; credentials from AWS_ACCESS_KEY_ID…)`;

/** \`--home\`, \`--store\` and \`--blobs\` as given. */
export interface HomeFlags {
  home?: string;
  store?: string;
  blobs?: string;
}

/** A home to look in: a directory, or a store (with this machine's directory for rooms). */
export interface ExperimentHome {
  dir: string;
  store: string | null;
  /** The bucket of the store's blobs, when they are in one. */
  blobs: S3Target | null;
  /** The directory, or the store's URL without its password. */
  label: string;
}

/** Opens a home experimentHomes() found. */
export function openExperimentHome(h: ExperimentHome): Promise<Home> {
  return openHomeAt(h.dir, h.store, h.blobs);
}

/** The homes to look in that hold a state store: the store alone when one is given. */
export async function experimentHomes(
  flags: HomeFlags,
  ctx: Pick<CliContext, "env" | "cwd">,
): Promise<ExperimentHome[]> {
  const flag = flags.home;
  const given = givenHomeDir({ flag, env: ctx.env, cwd: ctx.cwd });
  const store = storeUrl(flags.store, ctx.env);
  const blobs = blobsTarget(flags.blobs, ctx.env, store);
  if (store !== null) {
    return [{ dir: given ?? resolve(ctx.cwd, ".dvergr"), store, blobs, label: redactUrl(store) }];
  }
  const dirs = given ? [given] : [resolve(ctx.cwd, ".dvergr")];
  const runs = resolve(ctx.cwd, "workflow-runs");
  if (!given && await isDir(runs)) {
    const names: string[] = [];
    for await (const e of Deno.readDir(runs)) if (e.isDirectory) names.push(e.name);
    dirs.push(...names.sort().map((n) => join(runs, n)));
  }
  const out: ExperimentHome[] = [];
  for (const dir of dirs) {
    if (await pathExists(join(dir, "state.kv"))) {
      out.push({ dir, store: null, blobs: null, label: dir });
    }
  }
  return out;
}

/**
 * Opens the home holding the experiment whose id is or starts with `prefix` (at least 4
 * characters) and runs `f` on it; USAGE when the prefix is ambiguous, NOT_FOUND when no
 * home has it.
 */
export async function withExperiment<T>(
  ctx: Pick<CliContext, "env" | "cwd">,
  flags: HomeFlags,
  prefix: string,
  command: string,
  f: (home: Home, meta: ExperimentMeta) => Promise<T>,
): Promise<T> {
  if (prefix.length < 4) {
    throw usageError(
      `Cannot ${command} "${prefix}": give at least 4 characters of the experiment id`,
      "The benchmark prints it as `Experiment <id>: N cells`; `dvergr experiments` lists them",
    );
  }
  const homes = await experimentHomes(flags, ctx);
  const seen: string[] = [];
  for (const h of homes) {
    const home = await openExperimentHome(h);
    try {
      const all = await home.state.listExperiments();
      seen.push(...all.map((m) => m.id));
      const matches = all.filter((m) => m.id.startsWith(prefix));
      if (matches.length > 1) {
        throw usageError(
          `Cannot tell which experiment "${prefix}" means: ${matches.length} ids start with it`,
          "Give more of the id",
        );
      }
      if (matches.length === 1) return await f(home, matches[0]);
    } finally {
      await home.close();
    }
  }
  const where = homes.length > 0
    ? homes.map((h) => h.label).join(", ")
    : (givenHomeDir({ flag: flags.home, env: ctx.env, cwd: ctx.cwd }) ??
      `${ctx.cwd} (no home there)`);
  throw new DvergrError("NOT_FOUND", `No experiment "${prefix}" in ${where}`, {
    hint: seen.length > 0
      ? `Experiments there include: ${
        seen.slice(-5).join(", ")
      } (\`dvergr experiments\` lists them)`
      : "Pass the home it ran in with --home DIR (the benchmark prints it)",
  });
}
