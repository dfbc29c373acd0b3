/**
 * The home: where dvergr keeps everything of a benchmark between runs.
 *
 * ```
 * <home>/rooms/<slug>/       one bare git repository per room (its workspace)
 * <home>/state.kv            Deno KV: experiments, attempt records, scorecards, promotions
 * <home>/blobs/<ab>/<sha256> content-addressed evidence
 * <home>/worlds/p<pid>/…     attempt worlds while they exist (removed after capture)
 * <home>/candidates.edn      optional named command candidates
 * <home>/web-policy.edn      optional web policy of every benchmark (docs/web-policy.md)
 * ```
 *
 * Permissions: --allow-read and --allow-write on the home; --allow-env=IGNORE_TEST_WIN32
 * (git); --allow-run (/bin/sh, to see whether a world's process still runs);
 * `"unstable": ["kv"]`.
 */
export { roomSlug } from "../../../core/room_slug.ts";
import { DvergrError } from "../../../core/errors.ts";
import { join, resolve } from "node:path";
import { processAlive } from "../../system/process_alive.ts";
import { dirBlobStore } from "./blob_store.ts";
import { openKvStateStore } from "./state_store.ts";
import { gitRoomStore } from "../../rooms/git/room_store.ts";
import type { Home } from "../../../core/ports/home.ts";

interface HomeChoice {
  /** `--home DIR`. */
  flag?: string;
  env: (name: string) => string | undefined;
  cwd: string;
}

/** The home the user named (`--home DIR`, else `$DVERGR_HOME`), absolute; null when none. */
export function givenHomeDir(opts: HomeChoice): string | null {
  const given = opts.flag || opts.env("DVERGR_HOME");
  return given ? resolve(opts.cwd, given) : null;
}

/**
 * The home directory to use, the one rule of every command: `--home DIR`, else
 * `$DVERGR_HOME`, else `workflow-runs/<bundle name>` for a command on one bundle and
 * `.dvergr` for the others, in the working directory. Relative paths are resolved against
 * `cwd`.
 */
export function resolveHomeDir(opts: HomeChoice & { bundleName?: string }): string {
  return givenHomeDir(opts) ??
    resolve(opts.cwd, opts.bundleName ? join("workflow-runs", opts.bundleName) : ".dvergr");
}

/** Removes world directories left by processes that no longer run (killed mid-attempt). */
async function sweepWorlds(worldsRoot: string): Promise<void> {
  try {
    for await (const e of Deno.readDir(worldsRoot)) {
      const m = /^p(\d+)$/.exec(e.name);
      if (!m || !e.isDirectory || Number(m[1]) === Deno.pid || await processAlive(Number(m[1]))) {
        continue;
      }
      await Deno.remove(join(worldsRoot, e.name), { recursive: true }).catch(() => {});
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/** Opens (creating when needed) the home at `dir`. */
export async function openHome(dir: string): Promise<Home> {
  const abs = resolve(dir);
  try {
    await Deno.mkdir(abs, { recursive: true });
  } catch (e) {
    // A file where the home goes, a parent that is a file, a place that cannot be written.
    throw new DvergrError(
      "USAGE",
      `Cannot use the home "${dir}": ${
        e instanceof Deno.errors.AlreadyExists
          ? "it is a file, not a directory"
          : e instanceof Error
          ? e.message
          : String(e)
      }`,
      {
        hint: "Give --home (or $DVERGR_HOME) a directory, or a path where one can be made",
        details: { home: dir },
      },
    );
  }
  const state = await openKvStateStore(join(abs, "state.kv"), dirBlobStore(join(abs, "blobs")));
  const worldsRoot = join(abs, "worlds");
  await sweepWorlds(worldsRoot);
  return {
    dir: abs,
    state,
    rooms: gitRoomStore(join(abs, "rooms")),
    // Small evidence is kept in KV with its record: the state store's view reads both.
    blobs: state.blobs,
    worldsDir: join(worldsRoot, `p${Deno.pid}`),
    candidatesFile: join(abs, "candidates.edn"),
    async close() {
      state.close();
      await Deno.remove(join(worldsRoot, `p${Deno.pid}`), { recursive: true }).catch(() => {});
    },
  };
}
