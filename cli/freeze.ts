import { dirname, join } from "node:path";

import { parseBundleCommand, readBundleArg } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { isDir, pathExists } from "../adapters/files/fs.ts";
import { FREEZE_FORMAT } from "../core/ops/catalog_freeze.ts";
import { printJson } from "./render.ts";
import { DvergrError } from "../core/errors.ts";
import { parseBundle } from "../core/bundle/parse.ts";
import { resolveHomeDir } from "../adapters/store/kv/home.ts";
import { openHomeAt } from "../adapters/compose.ts";
import { storeUrl } from "../adapters/store/postgres/url.ts";
import { blobsTarget } from "../adapters/store/s3/target.ts";
import { roomSlug } from "../core/room_slug.ts";
import { readBundleDir, writeBundleDir } from "../adapters/files/bundle_dir.ts";
import { freezeBundle } from "../core/ops/catalog_freeze.ts";

export const HELP =
  `dvergr freeze <bundle|ROOM/NAME> [--experiment ID] [--as NAME] [--home DIR] [--store URL]
              [--json]

Makes a stable benchmark of a live one: the pages the bundle's attempts fetched (as recorded
in the home, never fetched again) become a new bundle NAME-frozen whose workflow.edn says
:web :frozen and whose web.edn holds those pages as text. Its attempts see only those pages
(search lexical over them, 404 otherwise, no network), so its scores compare over time.
Pages of the bundle's :blocked-sources are left out. It is a bundle of its own: a new
content id, calibrated and promoted on its own.

The frozen bundle is written into the bundle's room in the home (workflows/NAME-frozen/)
and, for a bundle directory, also as the directory NAME-frozen beside it.

Exit status: 0 frozen; 1 nothing to freeze (no fetched pages); 2 bad input.

Options:
  --experiment ID  only the pages of this experiment's attempts (default: every experiment of the bundle)
  --as NAME        name of the frozen bundle (default: NAME-frozen)
  --home DIR       the home the bundle was benchmarked in (default: as \`dvergr benchmark\`)
  --store URL      read the attempts from a PostgreSQL store shared by workers (default:
                   $DVERGR_STORE); the frozen bundle still goes into the bundle's room, so
                   --home must be the home that ran \`dvergr benchmark … --store\` (it holds
                   the room: rooms are git repositories on that machine, not in the store)
  --blobs URL      with --store: its blobs are in this S3 bucket, s3://BUCKET/PREFIX
                   (default: $DVERGR_BLOBS; credentials from the AWS_* variables)
  --json           print the result as JSON
  -h, --help       show this help

Example:
  dvergr freeze examples/workflows/tool-rivals --as tool-rivals-2026
`;

export const OPTIONS = {
  experiment: { type: "string" },
  as: { type: "string" },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

function nothingToFreeze(home: string): DvergrError {
  return new DvergrError("NOT_FOUND", "Nothing to freeze: no fetched pages", {
    result: true,
    hint:
      `The home ${home} holds no benchmark of this bundle: run \`dvergr benchmark\` on it first (or pass --home)`,
  });
}

/** A directory the frozen bundle may be written to: missing, empty, or an earlier frozen bundle. */
async function replaceableDir(dir: string): Promise<boolean> {
  if (!(await isDir(dir))) return true;
  try {
    const fb = await readBundleDir(dir);
    return fb.files.size === 0 || parseBundle(fb).definition.web === "frozen";
  } catch {
    return false;
  }
}

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  return parseBundleCommand(
    "freeze",
    args,
    OPTIONS,
    "Run `dvergr freeze path/to/bundle` or `dvergr freeze ROOM/NAME --home DIR`",
  );
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const fb = await readBundleArg("freeze", positionals[0], { home: values.home, ctx });
  const bundle = parseBundle(fb);
  const { source } = fb;
  const homeDir = source.kind === "room"
    ? source.home
    : resolveHomeDir({ flag: values.home, env: ctx.env, cwd: ctx.cwd, bundleName: bundle.name });
  const room = source.kind === "room" ? source.room : roomSlug(bundle.name);
  const target = values.as ?? `${bundle.name}-frozen`;
  const outDir = source.kind === "dir" ? join(dirname(source.dir), target) : null;
  if (outDir !== null && !(await replaceableDir(outDir))) {
    throw new DvergrError(
      "TARGET_EXISTS",
      `Cannot write the frozen bundle to "${outDir}": the directory exists and is not a frozen bundle`,
      { hint: "Name another bundle with --as NAME" },
    );
  }
  // A home that does not exist holds nothing to freeze; a path that is not a directory
  // is refused by openHome() as for every command.
  if (!(await pathExists(homeDir))) throw nothingToFreeze(homeDir);
  const store = storeUrl(values.store, ctx.env);
  const home = await openHomeAt(homeDir, store, blobsTarget(values.blobs, ctx.env, store));
  let result;
  try {
    if (!(await home.rooms.hasRoom(room))) throw nothingToFreeze(homeDir);
    result = await freezeBundle(home, bundle, {
      room,
      as: values.as,
      experiment: values.experiment,
    });
  } finally {
    await home.close();
  }
  const { files, ...summary } = result;
  if (outDir !== null) await writeBundleDir(outDir, files, { force: true });
  if (values.json) {
    printJson(ctx, FREEZE_FORMAT, { ...summary, home: homeDir, directory: outDir });
    return 0;
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  out(
    `Froze ${summary.pages} page${
      summary.pages === 1 ? "" : "s"
    } of ${bundle.name} into ${summary.bundle} ${summary.bundleId}`,
  );
  out(`  room: ${room}/${summary.bundle} in ${homeDir}`);
  if (outDir !== null) out(`  directory: ${outDir}`);
  if (summary.dropped.length > 0) {
    out(`  left out (blocked sources): ${summary.dropped.join(", ")}`);
  }
  out(`Next: dvergr calibrate ${outDir ?? `${room}/${summary.bundle} --home ${homeDir}`}`);
  return 0;
}
