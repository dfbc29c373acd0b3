import { resolve } from "node:path";
import { INPUT_LIMITS, readInputFile } from "../adapters/files/input_file.ts";
import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { HOME_HELP, roomHomeDir, withOpContext } from "./home_arg.ts";
import { IMPORT_FORMAT } from "../core/ops/catalog_bundles.ts";
import { printJson } from "./render.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import { importIntoDir, importIntoRoom, type ImportOutcome } from "../core/ops/catalog_bundles.ts";
import { fileBundleDirs } from "../adapters/files/bundle_dirs.ts";

export const HELP = `dvergr import FILE (--room ROOM | --dir DIR) [--as NAME] [--force] [--json]

Installs an export (\`dvergr export\`, or the earlier system's) after verifying it: format
dvergr-workflow/1, a workflow name ([a-z0-9][a-z0-9-]*), a well-formed bundle, and files
whose recomputed content id is the one the manifest names. A refused export writes
nothing (exit 2).

  --room ROOM   install as workflows/<name>/ of room ROOM, in exactly one commit
  --dir DIR     write the bundle as directory DIR (atomically)

A target that already holds other files is refused, so an import never silently becomes a
different bundle; --force replaces it (a room's history keeps the old files). Importing the
same bundle again changes nothing. The bundle is ad-hoc here until \`dvergr promote\`:
trust does not travel with an export. An export whose checker is checker.clj (the earlier
system's Clojure checker) imports, verifies and runs like any other.

Options:
  --room ROOM     the room to install into (it must exist: \`dvergr room create ROOM\`)
  --dir DIR       the directory to write instead
  --as NAME       install under NAME instead of the manifest's name (rooms only)
  --force         replace a target that holds other files
${HOME_HELP}
  --json          print what was imported as JSON
  -h, --help      show this help

Example:
  dvergr import recall.edn --room contracts

Exit status: 0 installed (or already there); 2 refused (a tampered or malformed export, a
target that holds other files without --force), nothing written.
`;

export const OPTIONS = {
  room: { type: "string" },
  dir: { type: "string" },
  as: { type: "string" },
  force: { type: "boolean" },
  home: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("import", args, OPTIONS);
  if (positionals.length !== 1) {
    throw usageError(
      `"dvergr import" takes one export file, got ${positionals.length}`,
      "Run `dvergr import bundle.edn --room ROOM` or `dvergr import bundle.edn --dir DIR`",
    );
  }
  if ((values.room === undefined) === (values.dir === undefined)) {
    throw usageError(
      `"dvergr import" needs exactly one of --room ROOM or --dir DIR`,
      "Run `dvergr import bundle.edn --room ROOM` or `dvergr import bundle.edn --dir DIR`",
    );
  }
  if (values.dir !== undefined && values.as !== undefined) {
    throw usageError(
      "Cannot use --as with --dir: the directory's name is the bundle's name",
      "Name the directory as you want the bundle called, e.g. --dir bundles/my-name",
    );
  }
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const file = positionals[0];
  const text = await readExport(resolve(ctx.cwd, file), file);

  let r: ImportOutcome;
  if (values.room !== undefined) {
    const room = values.room;
    r = await withOpContext(
      ctx,
      roomHomeDir(values.home, ctx),
      {},
      (op) => importIntoRoom(op, { room, text, file, as: values.as, force: values.force }),
    );
  } else {
    r = await importIntoDir({
      text,
      file,
      dir: resolve(ctx.cwd, values.dir!),
      force: values.force,
    }, fileBundleDirs);
  }

  if (values.json) {
    printJson(ctx, IMPORT_FORMAT, r);
    return 0;
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  const where = r.room !== null ? `room ${r.room} as workflows/${r.bundle}/` : `${values.dir}`;
  if (r.unchanged) out(`${where} already holds exactly ${r.bundle} ${r.bundleId}: nothing to do`);
  else {
    out(
      `Imported ${r.bundle} ${r.bundleId} (${r.files} files) into ${where}${
        r.commit ? ` (commit ${r.commit.slice(0, 10)})` : ""
      }${r.replaced ? ", replacing what was there" : ""}`,
    );
  }
  if (r.tier === "room") out("Trust: room (this content is promoted on this host)");
  else if (r.tier === "ad-hoc" && r.room !== null) {
    out(`Trust: ad-hoc (promote it here with \`dvergr promote ${r.room}/${r.bundle}\`)`);
  }
  for (const n of r.notes) out(`note: ${n}`);
  return 0;
}

async function readExport(path: string, shown: string): Promise<string> {
  // Only a regular file, and a bounded one: /dev/zero or a FIFO must not be read forever.
  const bytes = await readInputFile(path, {
    shown,
    what: "export",
    maxBytes: INPUT_LIMITS.export,
    hint: "Give the path of an export written by `dvergr export` (one EDN file); to install " +
      "a bundle directory, benchmark or export it",
  });
  // Strictly: decoded leniently, a byte of another encoding would become U+FFFD and the
  // export would be refused as changed after export, which it was not.
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const at = firstBadByte(bytes);
    throw new DvergrError(
      "EXPORT_INVALID",
      `Cannot import "${shown}": it is not UTF-8 text${
        at < 0 ? "" : ` (byte 0x${bytes[at].toString(16)} at offset ${at})`
      }`,
      {
        hint:
          "It was probably saved in another encoding (e.g. Windows-1252): use the file `dvergr export` wrote, or convert it back with iconv -t UTF-8",
        details: { file: shown, offset: at },
      },
    );
  }
}

/** Where the first byte that cannot start or continue a UTF-8 sequence is, or -1. */
function firstBadByte(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    const more = c < 0x80
      ? 0
      : c >= 0xc2 && c <= 0xdf
      ? 1
      : c >= 0xe0 && c <= 0xef
      ? 2
      : c >= 0xf0 && c <= 0xf4
      ? 3
      : -1;
    if (more < 0) return i;
    for (let k = 1; k <= more; k++) {
      if (i + k >= b.length || (b[i + k] & 0xc0) !== 0x80) return i;
    }
    i += more + 1;
  }
  return -1;
}
